package state

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// A node's live allocations are read far more often than they change:
// the plan judge reads them for every node of every plan, the scheduler
// for every candidate node it scores. Walking the allocs table's node
// index for them costs a radix iterator step and a slice append per
// alloc, which dominates both once nodes run tens of allocs. So the store
// also keeps, per node, the list that walk would return, in a row of the
// node_live_allocs table, and a read is one row lookup.
//
// The rows are derived from the allocs table and nothing else: every
// write of an alloc (Txn.insertAlloc, Txn.delete) updates its node's
// list in the same transaction, and a restore rebuilds them all. They
// are never persisted in a snapshot nor carried in a Raft entry, so
// neither format changes, and every server derives the same rows from
// the same log.

// nodeLiveAllocs is a row of the node_live_allocs table. A node without
// live allocs has no row.
type nodeLiveAllocs struct {
	NodeID string
	// Allocs are the node's non-terminal allocs sorted by ID, the order
	// of the allocs table's node index. The slice is shared by every
	// reader and is never changed once stored; its capacity equals its
	// length, so that a reader's append copies it.
	Allocs []*structs.Allocation
}

func nodeLiveAllocsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableNodeLiveAllocs,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: idIndex(strField(func(r *nodeLiveAllocs) string { return r.NodeID })),
		},
	}
}

// nodeLiveAllocsRow returns the node's live allocs as of the last commit
// or the last finished entry of txn: the writes of an entry in progress
// are not in the row yet (see Txn.writeLiveAllocs). The slice is shared:
// the caller must not modify it.
func nodeLiveAllocsRow(txn *memdb.Txn, ws memdb.WatchSet, nodeID string) ([]*structs.Allocation, error) {
	raw, err := first(txn, ws, TableNodeLiveAllocs, indexID, nodeID)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*nodeLiveAllocs).Allocs, nil
}

// ClientAllocIndexes returns the AllocModifyIndex of every alloc on the
// node, terminal or not, by alloc ID, and the highest of them (0 for
// none): what a client's poll of its allocations answers. The live
// allocs come from the node's row; only the terminal ones, usually few,
// are walked in the index.
func (s *StateStore) ClientAllocIndexes(nodeID string) (map[string]uint64, uint64, error) {
	txn := s.db.Txn(false)
	live, err := nodeLiveAllocsRow(txn, nil, nodeID)
	if err != nil {
		return nil, 0, err
	}
	done, err := allocsByNodeTerminal(txn, nil, nodeID, true)
	if err != nil {
		return nil, 0, err
	}
	out := make(map[string]uint64, len(live)+len(done))
	var newest uint64
	for _, list := range [2][]*structs.Allocation{live, done} {
		for _, a := range list {
			out[a.ID] = a.AllocModifyIndex
			newest = max(newest, a.AllocModifyIndex)
		}
	}
	return out, newest, nil
}

// trackAllocWrite brings the live lists up to date with an alloc just
// written over prev (nil for a new alloc).
func (tx *Txn) trackAllocWrite(prev, a *structs.Allocation) error {
	if prev != nil && prev.NodeID != a.NodeID {
		if err := tx.setLive(prev.NodeID, prev, false); err != nil {
			return err
		}
	}
	return tx.setLive(a.NodeID, a, !a.TerminalStatus())
}

// setLive puts a into the node's live list or takes it out, by ID. The
// list is this Txn's own copy of the stored one, made on its first
// change and written back when the entry ends.
func (tx *Txn) setLive(nodeID string, a *structs.Allocation, live bool) error {
	if nodeID == "" {
		return nil
	}
	list, ok := tx.liveAllocs[nodeID]
	if !ok {
		stored, err := nodeLiveAllocsRow(tx.txn, nil, nodeID)
		if err != nil {
			return err
		}
		list = make([]*structs.Allocation, len(stored), len(stored)+1)
		copy(list, stored)
		if tx.liveAllocs == nil {
			tx.liveAllocs = make(map[string][]*structs.Allocation)
		}
	}
	i, found := slices.BinarySearchFunc(list, a.ID, func(e *structs.Allocation, id string) int {
		return strings.Compare(e.ID, id)
	})
	switch {
	case found && live:
		list[i] = a
	case found:
		list = slices.Delete(list, i, i+1)
	case live:
		list = slices.Insert(list, i, a)
	}
	tx.liveAllocs[nodeID] = list
	return nil
}

// writeLiveAllocs stores the live lists the entry changed.
func (tx *Txn) writeLiveAllocs() error {
	for nodeID, list := range tx.liveAllocs {
		if len(list) == 0 {
			if _, err := tx.txn.DeleteAll(TableNodeLiveAllocs, indexID, nodeID); err != nil {
				return fmt.Errorf("clearing live allocations of node %q: %w", nodeID, err)
			}
			continue
		}
		row := &nodeLiveAllocs{NodeID: nodeID, Allocs: slices.Clip(list)}
		if err := tx.txn.Insert(TableNodeLiveAllocs, row); err != nil {
			return fmt.Errorf("writing live allocations of node %q: %w", nodeID, err)
		}
	}
	tx.liveAllocs = nil
	return nil
}

// rebuildLiveAllocs derives every node's live list from the allocs table,
// for a store just restored from a snapshot. The node index holds each
// node's allocs together, live ones first, sorted by ID.
func rebuildLiveAllocs(txn *memdb.Txn) error {
	it, err := txn.Get(TableAllocs, "node_prefix", "")
	if err != nil {
		return fmt.Errorf("reading allocs by node: %w", err)
	}
	var rows []*nodeLiveAllocs
	for raw := it.Next(); raw != nil; raw = it.Next() {
		a := raw.(*structs.Allocation)
		if a.TerminalStatus() {
			continue
		}
		if len(rows) == 0 || rows[len(rows)-1].NodeID != a.NodeID {
			rows = append(rows, &nodeLiveAllocs{NodeID: a.NodeID})
		}
		r := rows[len(rows)-1]
		r.Allocs = append(r.Allocs, a)
	}
	// Stored after the walk: the iterator is not disturbed by writes.
	for _, r := range rows {
		r.Allocs = slices.Clip(r.Allocs)
		if err := txn.Insert(TableNodeLiveAllocs, r); err != nil {
			return fmt.Errorf("writing live allocations of node %q: %w", r.NodeID, err)
		}
	}
	return nil
}
