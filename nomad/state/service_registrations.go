package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// Native service registrations, by (namespace, ID), with indexes to find
// them by service name, alloc, node and job: the lookups of the catalog's
// readers and of the cleanups that follow allocs and nodes.

// TableServiceRegistrations holds structs.ServiceRegistration rows.
const TableServiceRegistrations = "service_registrations"

const (
	indexServiceName = "service_name"
	indexAllocID     = "alloc_id"
	indexNodeID      = "node_id"
)

func serviceRegistrationsTableSchema() *memdb.TableSchema {
	field := strField[*structs.ServiceRegistration]
	return &memdb.TableSchema{
		Name: TableServiceRegistrations,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(namespacedID(
				func(s *structs.ServiceRegistration) string { return s.Namespace },
				func(s *structs.ServiceRegistration) string { return s.ID })),
			indexServiceName: {
				Name: indexServiceName,
				Indexer: namespacedID(
					func(s *structs.ServiceRegistration) string { return s.Namespace },
					func(s *structs.ServiceRegistration) string { return s.ServiceName }),
			},
			indexJob: {
				Name: indexJob,
				Indexer: namespacedID(
					func(s *structs.ServiceRegistration) string { return s.Namespace },
					func(s *structs.ServiceRegistration) string { return s.JobID }),
			},
			indexAllocID: {
				Name:    indexAllocID,
				Indexer: field(func(s *structs.ServiceRegistration) string { return s.AllocID }),
			},
			indexNodeID: {
				Name:    indexNodeID,
				Indexer: field(func(s *structs.ServiceRegistration) string { return s.NodeID }),
			},
		},
	}
}

// ServiceRegistrations returns the registrations of namespace ns ("*":
// of every namespace), by namespace and ID.
func (s *StateStore) ServiceRegistrations(ws memdb.WatchSet, ns string) ([]*structs.ServiceRegistration, error) {
	txn := s.db.Txn(false)
	var (
		it  memdb.ResultIterator
		err error
	)
	if ns == "*" {
		it, err = get(txn, ws, TableServiceRegistrations, indexID)
	} else {
		it, err = get(txn, ws, TableServiceRegistrations, indexID+"_prefix", ns, "")
	}
	if err != nil {
		return nil, err
	}
	return collect(it, func(r *structs.ServiceRegistration) bool { return ns == "*" || r.Namespace == ns }), nil
}

// ServiceRegistrationsByName returns the registrations of one service
// name in namespace ns.
func (s *StateStore) ServiceRegistrationsByName(ws memdb.WatchSet, ns, name string) ([]*structs.ServiceRegistration, error) {
	it, err := get(s.db.Txn(false), ws, TableServiceRegistrations, indexServiceName, ns, name)
	if err != nil {
		return nil, err
	}
	return collect[structs.ServiceRegistration](it, nil), nil
}

// ServiceRegistrationByID returns the registration or nil.
func (s *StateStore) ServiceRegistrationByID(ws memdb.WatchSet, ns, id string) (*structs.ServiceRegistration, error) {
	return serviceRegistrationByID(s.db.Txn(false), ws, ns, id)
}

func serviceRegistrationByID(txn *memdb.Txn, ws memdb.WatchSet, ns, id string) (*structs.ServiceRegistration, error) {
	raw, err := first(txn, ws, TableServiceRegistrations, indexID, ns, id)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.ServiceRegistration), nil
}

// ServiceRegistrationsByAllocID returns an alloc's registrations.
func (s *StateStore) ServiceRegistrationsByAllocID(ws memdb.WatchSet, allocID string) ([]*structs.ServiceRegistration, error) {
	it, err := get(s.db.Txn(false), ws, TableServiceRegistrations, indexAllocID, allocID)
	if err != nil {
		return nil, err
	}
	return collect[structs.ServiceRegistration](it, nil), nil
}

// ServiceRegistrationsByNodeID returns the registrations a node made.
func (s *StateStore) ServiceRegistrationsByNodeID(ws memdb.WatchSet, nodeID string) ([]*structs.ServiceRegistration, error) {
	it, err := get(s.db.Txn(false), ws, TableServiceRegistrations, indexNodeID, nodeID)
	if err != nil {
		return nil, err
	}
	return collect[structs.ServiceRegistration](it, nil), nil
}

// ServiceRegistrationsByJobID returns a job's registrations.
func (s *StateStore) ServiceRegistrationsByJobID(ws memdb.WatchSet, ns, jobID string) ([]*structs.ServiceRegistration, error) {
	it, err := get(s.db.Txn(false), ws, TableServiceRegistrations, indexJob, ns, jobID)
	if err != nil {
		return nil, err
	}
	return collect[structs.ServiceRegistration](it, nil), nil
}

// UpsertServiceRegistrations writes registrations at index; see
// Txn.UpsertServiceRegistrations.
func (s *StateStore) UpsertServiceRegistrations(index uint64, regs []*structs.ServiceRegistration) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertServiceRegistrations(regs) })
}

// UpsertServiceRegistrations adds or replaces registrations, all or none.
// One that exists keeps its CreateIndex, and one that is unchanged is
// not rewritten, so a client re-registering on restart wakes nobody. A
// registration of an alloc that is unknown or already client-terminal is
// skipped: its cleanup has run, and writing it would leave it behind.
func (tx *Txn) UpsertServiceRegistrations(regs []*structs.ServiceRegistration) error {
	tx.touch(TableServiceRegistrations)
	for _, r := range regs {
		if r == nil {
			return structs.KindErrorf(structs.ErrInvalid, "service registration is nil")
		}
		if err := r.Validate(); err != nil {
			return structs.KindErrorf(structs.ErrInvalid, "%w", err)
		}
		alloc, err := allocByID(tx.txn, nil, r.AllocID)
		if err != nil {
			return err
		}
		if alloc == nil || alloc.ClientTerminalStatus() {
			continue
		}
		existing, err := serviceRegistrationByID(tx.txn, nil, r.Namespace, r.ID)
		if err != nil {
			return err
		}
		if existing.Equal(r) {
			continue
		}
		n := r.Copy()
		n.CreateIndex = tx.index
		if existing != nil {
			n.CreateIndex = existing.CreateIndex
		}
		n.ModifyIndex = tx.index
		if err := tx.insert(TableServiceRegistrations, n); err != nil {
			return fmt.Errorf("service registration %q: %w", r.ID, err)
		}
		tx.emitService(structs.TypeServiceRegistration, n)
	}
	return nil
}

// DeleteServiceRegistrationByID removes one registration at index; see
// Txn.DeleteServiceRegistrationByID.
func (s *StateStore) DeleteServiceRegistrationByID(index uint64, ns, id string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteServiceRegistrationByID(ns, id) })
}

// DeleteServiceRegistrationByID removes one registration; one that does
// not exist is an error of kind structs.ErrNotFound.
func (tx *Txn) DeleteServiceRegistrationByID(ns, id string) error {
	tx.touch(TableServiceRegistrations)
	r, err := serviceRegistrationByID(tx.txn, nil, ns, id)
	if err != nil {
		return err
	}
	if r == nil {
		return structs.KindErrorf(structs.ErrNotFound, "service registration not found")
	}
	if err := tx.delete(TableServiceRegistrations, r); err != nil {
		return err
	}
	tx.emitService(structs.TypeServiceDeregistration, r)
	return nil
}

// DeleteServiceRegistrationsByAllocIDs removes every registration of the
// allocs at index.
func (s *StateStore) DeleteServiceRegistrationsByAllocIDs(index uint64, allocIDs []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteServiceRegistrationsByAllocIDs(allocIDs) })
}

// DeleteServiceRegistrationsByAllocIDs removes every registration of the
// allocs; allocs with none are skipped.
func (tx *Txn) DeleteServiceRegistrationsByAllocIDs(allocIDs []string) error {
	tx.touch(TableServiceRegistrations)
	for _, id := range allocIDs {
		if err := tx.deleteServicesBy(indexAllocID, id); err != nil {
			return fmt.Errorf("alloc %q: %w", id, err)
		}
	}
	return nil
}

// deleteServicesBy removes the registrations matching one key of a
// single-string index. Nothing is touched when there are none, so the
// alloc and node writes that call it leave the table's index alone.
func (tx *Txn) deleteServicesBy(index, key string) error {
	it, err := tx.txn.Get(TableServiceRegistrations, index, key)
	if err != nil {
		return fmt.Errorf("reading service registrations by %s: %w", index, err)
	}
	var doomed []*structs.ServiceRegistration
	for raw := it.Next(); raw != nil; raw = it.Next() {
		doomed = append(doomed, raw.(*structs.ServiceRegistration))
	}
	for _, r := range doomed {
		if err := tx.delete(TableServiceRegistrations, r); err != nil {
			return err
		}
		tx.emitService(structs.TypeServiceDeregistration, r)
	}
	return nil
}

func (tx *Txn) emitService(eventType string, r *structs.ServiceRegistration) {
	tx.emit(structs.Event{
		Topic:      structs.TopicService,
		Type:       eventType,
		Key:        r.ID,
		Namespace:  r.Namespace,
		FilterKeys: filterKeys(r.JobID, r.ServiceName),
		Payload:    &structs.ServiceRegistrationStreamEvent{Service: r},
	})
}

// dropServicesOfTerminalAlloc removes the registrations of an alloc the
// transaction made client-terminal (or is deleting): nothing answers at
// their address any more, whether or not its client said goodbye.
func (tx *Txn) dropServicesOfTerminalAlloc(a *structs.Allocation) error {
	if !a.ClientTerminalStatus() {
		return nil
	}
	return tx.deleteServicesBy(indexAllocID, a.ID)
}
