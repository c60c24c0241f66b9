package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// Namespaces, by name. The store holds two invariants of its own: the
// default namespace is never deleted, and neither is a namespace that
// still has jobs that are not dead, allocations still running or
// variables.

func namespacesTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableNamespaces,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(n *structs.Namespace) string { return n.Name })),
		},
	}
}

// Namespaces returns the namespaces whose names start with prefix, by
// name.
func (s *StateStore) Namespaces(ws memdb.WatchSet, prefix string) ([]*structs.Namespace, error) {
	it, err := get(s.db.Txn(false), ws, TableNamespaces, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return collect[structs.Namespace](it, nil), nil
}

// NamespaceByName returns the namespace or nil.
func (s *StateStore) NamespaceByName(ws memdb.WatchSet, name string) (*structs.Namespace, error) {
	return namespaceByName(s.db.Txn(false), ws, name)
}

func namespaceByName(txn *memdb.Txn, ws memdb.WatchSet, name string) (*structs.Namespace, error) {
	raw, err := first(txn, ws, TableNamespaces, indexID, name)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.Namespace), nil
}

// UpsertNamespaces writes namespaces at index; see Txn.UpsertNamespaces.
func (s *StateStore) UpsertNamespaces(index uint64, namespaces []*structs.Namespace) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertNamespaces(namespaces) })
}

// UpsertNamespaces adds or replaces namespaces; one that exists keeps its
// CreateIndex. The write is refused whole when one is invalid. The
// caller's objects are not written into.
func (tx *Txn) UpsertNamespaces(namespaces []*structs.Namespace) error {
	tx.touch(TableNamespaces)
	for _, n := range namespaces {
		if err := n.Validate(); err != nil {
			return err
		}
		n = n.Copy()
		existing, err := namespaceByName(tx.txn, nil, n.Name)
		if err != nil {
			return err
		}
		n.CreateIndex = tx.index
		if existing != nil {
			n.CreateIndex = existing.CreateIndex
		}
		n.ModifyIndex = tx.index
		n.SetHash()
		if err := tx.insert(TableNamespaces, n); err != nil {
			return fmt.Errorf("namespace %q: %w", n.Name, err)
		}
	}
	return nil
}

// DeleteNamespaces removes namespaces at index; see Txn.DeleteNamespaces.
func (s *StateStore) DeleteNamespaces(index uint64, names []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteNamespaces(names) })
}

// DeleteNamespaces removes the named namespaces, all or none: the write
// is refused when one does not exist (structs.ErrNamespaceNotFound), is
// the default namespace, or still has a job that is not dead or an
// allocation that is not client-terminal (both of kind
// structs.ErrInvalid).
func (tx *Txn) DeleteNamespaces(names []string) error {
	tx.touch(TableNamespaces)
	for _, name := range names {
		if name == structs.DefaultNamespace {
			return structs.KindErrorf(structs.ErrInvalid, "can not delete default namespace")
		}
		n, err := namespaceByName(tx.txn, nil, name)
		if err != nil {
			return err
		}
		if n == nil {
			return fmt.Errorf("namespace %q: %w", name, structs.ErrNamespaceNotFound)
		}
		inUse, err := namespaceInUse(tx.txn, name)
		if err != nil {
			return err
		}
		if inUse != "" {
			return structs.KindErrorf(structs.ErrInvalid, "namespace %q has %s", name, inUse)
		}
		if err := tx.delete(TableNamespaces, n); err != nil {
			return err
		}
	}
	return nil
}

// NamespaceInUse says what keeps a namespace from being deleted, in
// Nomad's words ("non-terminal jobs", "non-terminal allocations",
// "variables associated with it"), or ""
// when nothing does.
func (s *StateStore) NamespaceInUse(name string) (string, error) {
	return namespaceInUse(s.db.Txn(false), name)
}

func namespaceInUse(txn *memdb.Txn, name string) (string, error) {
	jobs, err := txn.Get(TableJobs, indexID+"_prefix", name, "")
	if err != nil {
		return "", err
	}
	for raw := jobs.Next(); raw != nil; raw = jobs.Next() {
		if j := raw.(*structs.Job); j.Namespace == name && j.Status != structs.JobStatusDead {
			return "non-terminal jobs", nil
		}
	}
	allocs, err := txn.Get(TableAllocs, indexJob+"_prefix", name, "")
	if err != nil {
		return "", err
	}
	for raw := allocs.Next(); raw != nil; raw = allocs.Next() {
		if a := raw.(*structs.Allocation); a.Namespace == name && !a.ClientTerminalStatus() {
			return "non-terminal allocations", nil
		}
	}
	if v, err := first(txn, nil, TableVariables, indexID+"_prefix", name, ""); err != nil || v != nil {
		return "variables associated with it", err
	}
	return "", nil
}
