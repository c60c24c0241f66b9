package nomad

import (
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// testEpoch is the fake clocks' starting time.
var testEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testState is a state store written at increasing indexes, standing in
// for what Raft and the FSM would have committed. Writes may come from
// several goroutines (the test and a Raft twin); write serialises them so
// indexes are applied in order.
type testState struct {
	t     testing.TB
	store *state.StateStore

	mu    sync.Mutex
	index uint64
}

func newTestState(t testing.TB) *testState {
	t.Helper()
	s, err := state.NewStateStore(nil)
	must.NoError(t, err)
	return &testState{t: t, store: s}
}

// write applies fn at the next index, like one Raft entry.
func (s *testState) write(fn func(tx *state.Txn) error) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	index := s.index + 1
	if err := s.store.WithWriteTxn(index, fn); err != nil {
		return 0, err
	}
	s.index = index
	return index, nil
}

// mustWrite is write for test setup.
func (s *testState) mustWrite(fn func(tx *state.Txn) error) uint64 {
	s.t.Helper()
	index, err := s.write(fn)
	must.NoError(s.t, err)
	return index
}

// latest is the index of the last write.
func (s *testState) latest() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.index
}

// node registers a mock node (ready, eligible, 3900 MHz / 7936 MB free).
func (s *testState) node(opts ...mock.NodeOption) *structs.Node {
	s.t.Helper()
	n := mock.Node(opts...)
	s.mustWrite(func(tx *state.Txn) error { return tx.UpsertNode(n) })
	return n
}

// job registers a mock service job.
func (s *testState) job(opts ...mock.JobOption) *structs.Job {
	s.t.Helper()
	j := mock.Job(opts...)
	s.mustWrite(func(tx *state.Txn) error { return tx.UpsertJob(j) })
	stored, err := s.store.JobByID(nil, j.Namespace, j.ID)
	must.NoError(s.t, err)
	return stored
}

// alloc commits a running alloc of job on node using cpu MHz.
func (s *testState) alloc(job *structs.Job, node *structs.Node, cpu int64) *structs.Allocation {
	s.t.Helper()
	a := newTestAlloc(job, node, cpu)
	a.ClientStatus = structs.AllocClientStatusRunning
	s.upsertAllocs(a)
	stored, err := s.store.AllocByID(nil, a.ID)
	must.NoError(s.t, err)
	return stored
}

// eval writes a pending eval for job.
func (s *testState) eval(job *structs.Job) *structs.Evaluation {
	s.t.Helper()
	e := mock.Eval(mock.EvalForJob(job))
	s.mustWrite(func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) })
	return e
}

// upsertAllocs commits allocs as they are.
func (s *testState) upsertAllocs(allocs ...*structs.Allocation) {
	s.t.Helper()
	s.mustWrite(func(tx *state.Txn) error { return tx.UpsertAllocs(allocs) })
}

func (s *testState) snapshot() *state.StateSnapshot { return s.store.Snapshot() }

// allocMemMB is every test alloc's memory. For the arithmetic in test
// comments, a mock node offers allocs 3900 MHz and 7936 MB (4000 MHz less
// 100 reserved, 8192 MB less 256 reserved).
const allocMemMB = 256

// newTestAlloc returns a new, pending alloc of job on node using cpu MHz
// and allocMemMB MB (see mock.SizedAlloc).
func newTestAlloc(job *structs.Job, node *structs.Node, cpu int64) *structs.Allocation {
	return mock.SizedAlloc(job, node, cpu, allocMemMB)
}
