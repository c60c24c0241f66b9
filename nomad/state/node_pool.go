package state

import (
	"bytes"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// Node pools, by name. The store holds the pools' invariants itself,
// since every server applies the same entries: the built-in pools are
// never changed or deleted, a pool with nodes or with jobs that are not
// dead is never deleted, and a node registering in a pool that does not
// exist creates it in the same transaction. Writes publish NodePool
// events.

func nodePoolsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableNodePools,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(p *structs.NodePool) string { return p.Name })),
		},
	}
}

// NodePools returns the pools whose names start with prefix, by name.
func (s *StateStore) NodePools(ws memdb.WatchSet, prefix string) ([]*structs.NodePool, error) {
	it, err := get(s.db.Txn(false), ws, TableNodePools, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return collect[structs.NodePool](it, nil), nil
}

// NodePoolByName returns the pool or nil.
func (s *StateStore) NodePoolByName(ws memdb.WatchSet, name string) (*structs.NodePool, error) {
	return nodePoolByName(s.db.Txn(false), ws, name)
}

func nodePoolByName(txn *memdb.Txn, ws memdb.WatchSet, name string) (*structs.NodePool, error) {
	raw, err := first(txn, ws, TableNodePools, indexID, name)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.NodePool), nil
}

// UpsertNodePools writes pools at index; see Txn.UpsertNodePools.
func (s *StateStore) UpsertNodePools(index uint64, pools []*structs.NodePool) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertNodePools(pools) })
}

// UpsertNodePools adds or replaces pools, all or none: the write is
// refused when one is invalid, or changes a built-in pool that exists
// (the leader writes those once, when they are missing; writing one as
// it is is a no-op). One that exists keeps its CreateIndex. The caller's
// objects are not written into.
func (tx *Txn) UpsertNodePools(pools []*structs.NodePool) error {
	tx.touch(TableNodePools)
	for _, p := range pools {
		if err := p.Validate(); err != nil {
			return err
		}
		existing, err := nodePoolByName(tx.txn, nil, p.Name)
		if err != nil {
			return err
		}
		p = p.Copy()
		if existing != nil && structs.IsBuiltInNodePool(p.Name) {
			// Writing a built-in pool as it is changes nothing: the leader
			// may race a node's registration that created it.
			p.Canonicalize()
			if bytes.Equal(p.SetHash(), existing.Hash) {
				continue
			}
			return structs.KindErrorf(structs.ErrInvalid, "modifying node pool %q is not allowed", p.Name)
		}
		if err := tx.putNodePool(p, existing); err != nil {
			return err
		}
	}
	return nil
}

func (tx *Txn) putNodePool(p, existing *structs.NodePool) error {
	p.Canonicalize()
	p.CreateIndex = tx.index
	if existing != nil {
		p.CreateIndex = existing.CreateIndex
	}
	p.ModifyIndex = tx.index
	p.SetHash()
	if err := tx.insert(TableNodePools, p); err != nil {
		return fmt.Errorf("node pool %q: %w", p.Name, err)
	}
	tx.emitNodePool(structs.TypeNodePoolUpserted, p)
	return nil
}

func (tx *Txn) emitNodePool(eventType string, p *structs.NodePool) {
	tx.emit(structs.Event{
		Topic:   structs.TopicNodePool,
		Type:    eventType,
		Key:     p.Name,
		Payload: &structs.NodePoolEvent{NodePool: p},
	})
}

// ensureNodePool creates the pool a registering node names when it does
// not exist yet: a built-in one as the leader would write it, any other
// with its name only.
func (tx *Txn) ensureNodePool(name string) error {
	existing, err := nodePoolByName(tx.txn, nil, name)
	if err != nil || existing != nil {
		return err
	}
	p := &structs.NodePool{Name: name}
	for _, b := range structs.BuiltInNodePools() {
		if b.Name == name {
			p = b
		}
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("node pool %q: %w", name, err)
	}
	return tx.putNodePool(p, nil)
}

// DeleteNodePools removes pools at index; see Txn.DeleteNodePools.
func (s *StateStore) DeleteNodePools(index uint64, names []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteNodePools(names) })
}

// DeleteNodePools removes the named pools, all or none: the write is
// refused when one does not exist (structs.ErrNodePoolNotFound), is
// built in, or still has nodes or jobs that are not dead (of kind
// structs.ErrInvalid).
func (tx *Txn) DeleteNodePools(names []string) error {
	tx.touch(TableNodePools)
	for _, name := range names {
		if structs.IsBuiltInNodePool(name) {
			return structs.KindErrorf(structs.ErrInvalid, "deleting node pool %q is not allowed", name)
		}
		p, err := nodePoolByName(tx.txn, nil, name)
		if err != nil {
			return err
		}
		if p == nil {
			return fmt.Errorf("node pool %q: %w", name, structs.ErrNodePoolNotFound)
		}
		inUse, err := nodePoolInUse(tx.txn, name)
		if err != nil {
			return err
		}
		if inUse != "" {
			return structs.KindErrorf(structs.ErrInvalid, "node pool %q has %s", name, inUse)
		}
		if err := tx.delete(TableNodePools, p); err != nil {
			return err
		}
		tx.emitNodePool(structs.TypeNodePoolDeleted, p)
	}
	return nil
}

// NodePoolInUse says what keeps a pool from being deleted, in Nomad's
// words ("nodes", "non-terminal jobs"), or "" when nothing does.
func (s *StateStore) NodePoolInUse(name string) (string, error) {
	return nodePoolInUse(s.db.Txn(false), name)
}

func nodePoolInUse(txn *memdb.Txn, name string) (string, error) {
	node, err := txn.First(TableNodes, "node_pool", name)
	if err != nil {
		return "", err
	}
	if node != nil {
		return "nodes", nil
	}
	jobs, err := txn.Get(TableJobs, indexID)
	if err != nil {
		return "", err
	}
	for raw := jobs.Next(); raw != nil; raw = jobs.Next() {
		if j := raw.(*structs.Job); j.NodePool == name && j.Status != structs.JobStatusDead {
			return "non-terminal jobs", nil
		}
	}
	return "", nil
}

// JobsByNodePool returns the jobs of a pool in namespace ns ("*": in
// every namespace), by namespace and ID.
func (s *StateStore) JobsByNodePool(ws memdb.WatchSet, ns, pool string) ([]*structs.Job, error) {
	jobs, err := s.JobsByIDPrefix(ws, ns, "")
	if err != nil {
		return nil, err
	}
	out := make([]*structs.Job, 0, len(jobs))
	for _, j := range jobs {
		if j.NodePool == pool {
			out = append(out, j)
		}
	}
	return out, nil
}
