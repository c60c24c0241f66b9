package statetest

import (
	"sync"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// Store is a real state store written at increasing indexes, standing in
// for what Raft and the FSM would have committed. Writes may come from
// several goroutines (the test and a Raft twin); Write serialises them so
// indexes are applied in order.
//
// The helpers that build objects (Node, Job, Alloc, Eval) write mock
// fixtures and fail the test on error; StateStore is there for reads and
// for anything the helpers do not cover.
type Store struct {
	t     testing.TB
	store *state.StateStore
	mu    sync.Mutex
	index uint64
}

// NewStore returns an empty store at index 0.
func NewStore(t testing.TB) *Store {
	t.Helper()
	s, err := state.NewStateStore(nil)
	must.NoError(t, err)
	return &Store{t: t, store: s}
}

// Write applies fn at the next index, like one Raft entry. The index
// advances only if fn succeeds.
func (s *Store) Write(fn func(tx *state.Txn) error) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	index := s.index + 1
	if err := s.store.WithWriteTxn(index, fn); err != nil {
		return 0, err
	}
	s.index = index
	return index, nil
}

// MustWrite is Write for test setup: an error fails the test.
func (s *Store) MustWrite(fn func(tx *state.Txn) error) uint64 {
	s.t.Helper()
	index, err := s.Write(fn)
	must.NoError(s.t, err)
	return index
}

// Latest is the index of the last write.
func (s *Store) Latest() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.index
}

// StateStore is the store itself, for reads. Write to it only through
// Write, so that indexes keep increasing.
func (s *Store) StateStore() *state.StateStore { return s.store }

// Snapshot is a snapshot of the current state.
func (s *Store) Snapshot() *state.StateSnapshot { return s.store.Snapshot() }

// Node registers a mock node (ready and eligible; with the defaults it
// offers allocs 3900 MHz and 7936 MB).
func (s *Store) Node(opts ...mock.NodeOption) *structs.Node {
	s.t.Helper()
	n := mock.Node(opts...)
	s.MustWrite(func(tx *state.Txn) error { return tx.UpsertNode(n) })
	return n
}

// Job registers a mock service job and returns it as stored.
func (s *Store) Job(opts ...mock.JobOption) *structs.Job {
	s.t.Helper()
	j := mock.Job(opts...)
	s.MustWrite(func(tx *state.Txn) error { return tx.UpsertJob(j) })
	stored, err := s.store.JobByID(nil, j.Namespace, j.ID)
	must.NoError(s.t, err)
	return stored
}

// Alloc commits a running alloc of job on node using cpu MHz and
// mock.TaskMemoryMB MB (see mock.SizedAlloc) and returns it as stored.
func (s *Store) Alloc(job *structs.Job, node *structs.Node, cpu int64) *structs.Allocation {
	s.t.Helper()
	a := mock.SizedAlloc(job, node, cpu, mock.TaskMemoryMB)
	a.ClientStatus = structs.AllocClientStatusRunning
	s.UpsertAllocs(a)
	stored, err := s.store.AllocByID(nil, a.ID)
	must.NoError(s.t, err)
	return stored
}

// Eval writes a pending eval of job.
func (s *Store) Eval(job *structs.Job) *structs.Evaluation {
	s.t.Helper()
	e := mock.Eval(mock.EvalForJob(job))
	s.MustWrite(func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) })
	return e
}

// UpsertAllocs commits allocs as they are.
func (s *Store) UpsertAllocs(allocs ...*structs.Allocation) {
	s.t.Helper()
	s.MustWrite(func(tx *state.Txn) error { return tx.UpsertAllocs(allocs) })
}

// ClientUpdate records client-side changes of allocs, as a client's
// Node.UpdateAlloc would.
func (s *Store) ClientUpdate(allocs ...*structs.Allocation) {
	s.t.Helper()
	s.MustWrite(func(tx *state.Txn) error { return tx.UpdateAllocsFromClient(allocs) })
}

// NodeStatus changes a node's status.
func (s *Store) NodeStatus(n *structs.Node, status string) {
	s.t.Helper()
	s.MustWrite(func(tx *state.Txn) error { return tx.UpdateNodeStatus(n.ID, status, 1, nil) })
}

// AllocMemMB is every SizedAlloc's memory. For the arithmetic in test
// comments, a mock node offers allocs 3900 MHz and 7936 MB (4000 MHz less
// 100 reserved, 8192 MB less 256 reserved).
const AllocMemMB = 256

// SizedAlloc returns a new, pending alloc of job on node using cpu MHz
// and AllocMemMB MB (see mock.SizedAlloc).
func SizedAlloc(job *structs.Job, node *structs.Node, cpu int64) *structs.Allocation {
	return mock.SizedAlloc(job, node, cpu, AllocMemMB)
}

// NoOvercommit fails unless every node's committed, non-terminal allocs
// fit it.
func NoOvercommit(t testing.TB, s *state.StateStore) {
	t.Helper()
	nodes, err := s.Nodes(nil)
	must.NoError(t, err)
	for _, n := range nodes {
		allocs, err := s.AllocsByNodeTerminal(nil, n.ID, false)
		must.NoError(t, err)
		fit, dim, used := structs.AllocsFit(n, allocs)
		must.True(t, fit, must.Sprintf("node %s overcommitted on %s: %d allocs use %+v", n.ID, dim, len(allocs), used.Flattened))
	}
}
