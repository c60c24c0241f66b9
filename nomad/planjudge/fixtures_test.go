package planjudge

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// allocMemMB is every test alloc's memory. For the arithmetic in test
// comments, a mock node offers allocs 3900 MHz and 7936 MB (4000 MHz less
// 100 reserved, 8192 MB less 256 reserved).
const allocMemMB = 256

// testEpoch is the tests' clock reading.
var testEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testState is a real state store written at increasing indexes, standing
// in for what Raft and the FSM would have committed: the judge is tested
// against the snapshots the applier hands it.
type testState struct {
	t     testing.TB
	store *state.StateStore
	index uint64
}

func newTestState(t testing.TB) *testState {
	t.Helper()
	s, err := state.NewStateStore(nil)
	must.NoError(t, err)
	return &testState{t: t, store: s}
}

// write applies fn at the next index, like one Raft entry.
func (s *testState) write(fn func(tx *state.Txn) error) uint64 {
	s.t.Helper()
	s.index++
	must.NoError(s.t, s.store.WithWriteTxn(s.index, fn))
	return s.index
}

// latest is the index of the last write.
func (s *testState) latest() uint64 { return s.index }

// view is the judge's view of the current state.
func (s *testState) view() State { return s.store.Snapshot().SchedulerView() }

// node registers a mock node (ready, eligible, 3900 MHz / 7936 MB free).
func (s *testState) node(opts ...mock.NodeOption) *structs.Node {
	s.t.Helper()
	n := mock.Node(opts...)
	s.write(func(tx *state.Txn) error { return tx.UpsertNode(n) })
	return n
}

// job registers a mock service job.
func (s *testState) job() *structs.Job {
	s.t.Helper()
	j := mock.Job()
	s.write(func(tx *state.Txn) error { return tx.UpsertJob(j) })
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

// nodeStatus changes a node's status.
func (s *testState) nodeStatus(n *structs.Node, status string) {
	s.t.Helper()
	s.write(func(tx *state.Txn) error { return tx.UpdateNodeStatus(n.ID, status, 1, nil) })
}

// upsertAllocs commits allocs as they are.
func (s *testState) upsertAllocs(allocs ...*structs.Allocation) {
	s.t.Helper()
	s.write(func(tx *state.Txn) error { return tx.UpsertAllocs(allocs) })
}

// clientUpdate records client-side changes of allocs.
func (s *testState) clientUpdate(allocs ...*structs.Allocation) {
	s.t.Helper()
	s.write(func(tx *state.Txn) error { return tx.UpdateAllocsFromClient(allocs) })
}

// newTestAlloc returns a new, pending alloc of job on node using cpu MHz
// and allocMemMB MB (see mock.SizedAlloc).
func newTestAlloc(job *structs.Job, node *structs.Node, cpu int64) *structs.Allocation {
	return mock.SizedAlloc(job, node, cpu, allocMemMB)
}

// newPlan starts a plan for job under a fresh eval.
func newPlan(job *structs.Job) *mock.PlanBuilder {
	return mock.BuildPlan(mock.Eval(mock.EvalForJob(job)).MakePlan(job))
}

// inPlace returns a copy of a committed alloc as an in-place update using
// cpu MHz.
func inPlace(a *structs.Allocation, cpu int64) *structs.Allocation {
	u := a.Copy()
	for _, tr := range u.AllocatedResources.Tasks {
		tr.Cpu.CpuShares = cpu
	}
	return u
}

// judge judges plan against the committed state alone, serially.
func judge(t *testing.T, s *testState, plan *structs.Plan) *Verdict {
	t.Helper()
	v, err := Judge(View{State: s.view()}, plan, 1)
	must.NoError(t, err)
	return v
}
