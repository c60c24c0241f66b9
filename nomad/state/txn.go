package state

import (
	"fmt"
	"slices"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// Txn is one write transaction at one Raft index, handed to the function
// given to StateStore.WithWriteTxn. Its write methods are those of the
// store without the index argument; several may be combined and they all
// commit together. A Txn is used by one goroutine only.
type Txn struct {
	txn    *memdb.Txn
	index  uint64
	logger hclog.Logger

	// touched holds the tables written, whose index rows are set to the
	// transaction's index at commit.
	touched []string
	events  []structs.Event

	// allocNodes holds the nodes whose allocations this transaction
	// added, changed (server-side) or removed; their node_alloc_index
	// rows are set to the transaction's index at commit.
	allocNodes map[string]struct{}

	// liveAllocs holds this entry's own copies of the live alloc lists
	// of the nodes whose allocs it wrote, stored when it ends (see
	// node_live_allocs.go).
	liveAllocs map[string][]*structs.Allocation

	// summaries holds the job summaries this transaction wrote. They are
	// not visible to anyone else until commit, so later changes in the
	// same transaction edit them in place: a plan placing thousands of
	// allocs of one job then copies its summary once, not per alloc.
	summaries map[structs.NamespacedID]*structs.JobSummary

	// backlog is how much this transaction changed the BacklogCounts.
	backlog BacklogCounts

	// intern is the store's table of shared strings, nil in a snapshot.
	intern *internTable
}

// Index returns the Raft index the transaction writes at.
func (tx *Txn) Index() uint64 { return tx.index }

// touch records a write to table. Every write method touches its table
// even when it ends up changing nothing (a re-registered identical job, a
// client update of a collected alloc), so the store's LatestIndex always
// reaches the Raft index just applied and nobody waits for it in vain.
func (tx *Txn) touch(table string) {
	if !slices.Contains(tx.touched, table) {
		tx.touched = append(tx.touched, table)
	}
}

func (tx *Txn) insert(table string, obj interface{}) error {
	if table == TableAllocs {
		// Allocs keep derived rows current: see insertAlloc.
		return fmt.Errorf("writing to table %q: use insertAlloc", table)
	}
	if err := tx.txn.Insert(table, obj); err != nil {
		return fmt.Errorf("writing to table %q: %w", table, err)
	}
	tx.touch(table)
	return nil
}

// insertAlloc writes an alloc over prev, the stored alloc with its ID
// (nil for a new one), and keeps what is derived from the allocs
// table current: the node's alloc index row when the servers changed the
// alloc (AllocModifyIndex moved), and the node's live allocs. Every alloc
// write passes here or through delete, so no write path can forget to
// wake the node's client or to update its live list.
func (tx *Txn) insertAlloc(a, prev *structs.Allocation) error {
	if err := tx.txn.Insert(TableAllocs, a); err != nil {
		return fmt.Errorf("writing to table %q: %w", TableAllocs, err)
	}
	tx.touch(TableAllocs)
	if a.AllocModifyIndex == tx.index {
		tx.touchAllocNode(TableAllocs, a)
	}
	return tx.trackAllocWrite(prev, a)
}

func (tx *Txn) delete(table string, obj interface{}) error {
	if err := tx.txn.Delete(table, obj); err != nil {
		return fmt.Errorf("deleting from table %q: %w", table, err)
	}
	tx.touch(table)
	tx.touchAllocNode(table, obj)
	if a, ok := obj.(*structs.Allocation); ok && table == TableAllocs {
		return tx.setLive(a.NodeID, a, false)
	}
	return nil
}

// touchAllocNode records the node of an allocation the servers wrote or
// deleted. A client's own status update, which leaves AllocModifyIndex
// alone, does not wake the node's client.
func (tx *Txn) touchAllocNode(table string, obj interface{}) {
	if table != TableAllocs {
		return
	}
	a, ok := obj.(*structs.Allocation)
	if !ok || a.NodeID == "" {
		return
	}
	if tx.allocNodes == nil {
		tx.allocNodes = make(map[string]struct{})
	}
	tx.allocNodes[a.NodeID] = struct{}{}
}

func (tx *Txn) writeTableIndexes() error {
	tx.shareSummaryMaps()
	for _, table := range tx.touched {
		if err := tx.txn.Insert(TableIndex, &IndexEntry{Key: table, Value: tx.index}); err != nil {
			return fmt.Errorf("updating index of table %q: %w", table, err)
		}
	}
	for nodeID := range tx.allocNodes {
		if err := tx.txn.Insert(TableNodeAllocIndex, &NodeAllocIndex{NodeID: nodeID, Index: tx.index}); err != nil {
			return fmt.Errorf("updating allocation index of node %q: %w", nodeID, err)
		}
	}
	return tx.writeLiveAllocs()
}

// emit records an event; its Index is the transaction's.
func (tx *Txn) emit(e structs.Event) {
	e.Index = tx.index
	tx.events = append(tx.events, e)
}

// Reads inside the transaction see its own earlier writes. They let the
// FSM build a change from current state (stopping a job copies the stored
// one) without a second transaction.

// NodeByID returns the node or nil.
func (tx *Txn) NodeByID(id string) (*structs.Node, error) {
	return nodeByID(tx.txn, nil, id)
}

// JobByID returns the job or nil.
func (tx *Txn) JobByID(namespace, id string) (*structs.Job, error) {
	return jobByID(tx.txn, nil, namespace, id)
}

// EvalByID returns the eval or nil.
func (tx *Txn) EvalByID(id string) (*structs.Evaluation, error) {
	return evalByID(tx.txn, nil, id)
}

// AllocByID returns the alloc or nil.
func (tx *Txn) AllocByID(id string) (*structs.Allocation, error) {
	return allocByID(tx.txn, nil, id)
}

// DeploymentByID returns the deployment or nil.
func (tx *Txn) DeploymentByID(id string) (*structs.Deployment, error) {
	return deploymentByID(tx.txn, nil, id)
}

// first returns the first row of table matching args, registering a
// watch on it in ws when ws is not nil.
func first(txn *memdb.Txn, ws memdb.WatchSet, table, index string, args ...interface{}) (interface{}, error) {
	ch, raw, err := txn.FirstWatch(table, index, args...)
	if err != nil {
		return nil, fmt.Errorf("reading table %q by %s: %w", table, index, err)
	}
	if ws != nil {
		ws.Add(ch)
	}
	return raw, nil
}

// get returns an iterator over the rows of table matching args,
// registering a watch in ws when ws is not nil.
func get(txn *memdb.Txn, ws memdb.WatchSet, table, index string, args ...interface{}) (memdb.ResultIterator, error) {
	it, err := txn.Get(table, index, args...)
	if err != nil {
		return nil, fmt.Errorf("reading table %q by %s: %w", table, index, err)
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	return it, nil
}

// collect drains an iterator of *T rows, keeping those keep accepts (all
// when keep is nil).
func collect[T any](it memdb.ResultIterator, keep func(*T) bool) []*T {
	var out []*T
	for raw := it.Next(); raw != nil; raw = it.Next() {
		o := raw.(*T)
		if keep == nil || keep(o) {
			out = append(out, o)
		}
	}
	return out
}

// sortedKeys returns a map's keys in order, so that writes driven by a
// map apply in the same order on every server.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
