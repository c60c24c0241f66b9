package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/planjudge"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Harness is a Planner for tests over the real state store: it records
// every plan and eval update and, unless told otherwise, commits plans the
// way the plan applier does, with the applier's own code (package
// planjudge): every node is judged first, and nodes that fail are
// rejected and the scheduler is sent a fresh snapshot, the applier's
// partial-commit protocol.
type Harness struct {
	t     testing.TB
	Store *state.StateStore
	index uint64

	Plans   []*structs.Plan
	Results []*structs.PlanResult
	Updated []*structs.Evaluation
	// Folded are the evals written with their plan (also in Updated, in
	// the order of the writes): the plan committed whole and carried
	// its eval, which the harness writes as the plan applier does.
	Folded    []*structs.Evaluation
	Created   []*structs.Evaluation
	Reblocked []*structs.Evaluation
	// Overcommits says, for every node the applier's rules rejected (not
	// those Reject names), why: the scheduler proposed what the leader
	// would refuse, such as more than the node holds.
	Overcommits []string
	// RejectedRuns counts the plans with a rejected node.
	RejectedRuns int

	// NoApply records plans without committing them.
	NoApply bool
	// OldLeader ignores the eval a plan carries, as a leader of a build
	// before structs.MinVersionPlanEval (or one with such a server) does:
	// the scheduler then writes its eval through UpdateEval.
	OldLeader bool
	// Reject, when set, names nodes the applier rejects in the plan of
	// attempt n (counted from 0), to simulate a racing scheduler.
	Reject func(n int, plan *structs.Plan) []string

	Now time.Time
	// MaxPlacementsPerPass is handed to the scheduler's config (0: the
	// default).
	MaxPlacementsPerPass int

	// scratch is kept across Process calls, as a worker keeps one across
	// its evals, so every test also checks that reused memory changes no
	// decision.
	scratch Scratch

	// reads are the snapshots handed to the scheduler by the current
	// Process, checked for writes when it returns.
	reads []*readRecorder
}

// NewHarness returns a harness over an empty store.
func NewHarness(t testing.TB) *Harness {
	s, err := state.NewStateStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Harness{t: t, Store: s, index: 1, Now: testNow}
}

// write runs fn at the next index and fails the test on error.
func (h *Harness) write(fn func(tx *state.Txn) error) {
	h.t.Helper()
	h.index++
	if err := h.Store.WithWriteTxn(h.index, fn); err != nil {
		h.t.Fatalf("state write at index %d: %v", h.index, err)
	}
}

// UpsertNode registers nodes.
func (h *Harness) UpsertNode(nodes ...*structs.Node) {
	h.t.Helper()
	h.write(func(tx *state.Txn) error {
		for _, n := range nodes {
			if err := tx.UpsertNode(n); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetNodeStatus changes a node's status (down, disconnected, ...).
func (h *Harness) SetNodeStatus(id, status string) {
	h.t.Helper()
	h.write(func(tx *state.Txn) error { return tx.UpdateNodeStatus(id, status, h.Now.Unix(), nil) })
}

// DrainNode starts a drain of the node.
func (h *Harness) DrainNode(id string) {
	h.t.Helper()
	drain := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}, StartedAt: h.Now}
	h.write(func(tx *state.Txn) error { return tx.UpdateNodeDrain(id, drain, false, h.Now.Unix(), nil, nil) })
}

// UpsertJob registers a job; the store stamps its indexes and version.
func (h *Harness) UpsertJob(j *structs.Job) {
	h.t.Helper()
	h.write(func(tx *state.Txn) error { return tx.UpsertJob(j) })
}

// DeleteJob purges a job.
func (h *Harness) DeleteJob(ns, id string) {
	h.t.Helper()
	h.write(func(tx *state.Txn) error { return tx.DeleteJob(ns, id) })
}

// UpsertAllocs writes allocs as the servers would.
func (h *Harness) UpsertAllocs(allocs ...*structs.Allocation) {
	h.t.Helper()
	h.write(func(tx *state.Txn) error { return tx.UpsertAllocs(allocs) })
}

// UpsertEvals writes evals.
func (h *Harness) UpsertEvals(evals ...*structs.Evaluation) {
	h.t.Helper()
	h.write(func(tx *state.Txn) error { return tx.UpsertEvals(evals) })
}

// SetSchedulerConfig writes the cluster scheduler configuration.
func (h *Harness) SetSchedulerConfig(c *structs.SchedulerConfiguration) {
	h.t.Helper()
	h.write(func(tx *state.Txn) error { return tx.SchedulerSetConfig(c) })
}

// Snapshot returns the scheduler's view of the current state.
func (h *Harness) Snapshot() *state.SchedulerView {
	return h.Store.Snapshot().SchedulerView()
}

// Config returns a scheduler config with the harness clock.
func (h *Harness) Config() *Config {
	return &Config{Now: func() time.Time { return h.Now }, MaxPlacementsPerPass: h.MaxPlacementsPerPass, Scratch: &h.scratch}
}

// Process runs the scheduler of the eval's type over a fresh snapshot,
// then fails the test if the scheduler modified any object it read from
// state (the eval included: it is the stored one).
func (h *Harness) Process(eval *structs.Evaluation) error {
	h.t.Helper()
	h.UpsertEvals(eval)
	h.reads = nil
	snap := h.recordedSnapshot()
	snap.record(eval)
	s, err := NewScheduler(eval.Type, h.Config(), snap, h)
	if err != nil {
		return err
	}
	err = s.Process(eval)
	for _, r := range h.reads {
		r.verify(h.t)
	}
	return err
}

// recordedSnapshot is a snapshot whose reads are checked by Process.
func (h *Harness) recordedSnapshot() *readRecorder {
	r := newReadRecorder(h.Snapshot())
	h.reads = append(h.reads, r)
	return r
}

// SubmitPlan implements Planner: it judges the plan with the plan
// applier's own rules (planjudge) against the current state, commits what
// passes with the applier's Raft entry, and hands the scheduler a fresh
// snapshot when a node was rejected.
func (h *Harness) SubmitPlan(plan *structs.Plan) (*structs.PlanResult, State, error) {
	attempt := len(h.Plans)
	h.Plans = append(h.Plans, plan)
	if h.NoApply {
		result := committedWhole(plan, 0)
		h.Results = append(h.Results, result)
		return result, nil, nil
	}
	judged, forced := plan, []string(nil)
	if h.Reject != nil {
		forced = h.Reject(attempt, plan)
		judged = withoutNodes(plan, forced)
	}
	view := h.Snapshot()
	verdict, err := planjudge.Judge(planjudge.View{State: view}, judged, 1)
	if err != nil {
		return nil, nil, err
	}
	result := verdict.Result
	for i, id := range result.RejectedNodes {
		h.Overcommits = append(h.Overcommits, fmt.Sprintf("node %s rejected: %s", id, verdict.Reasons[i]))
	}
	result.RejectedNodes = slices.Concat(forced, result.RejectedNodes)
	h.Results = append(h.Results, result)

	req := planjudge.BuildRequest(view, judged, result, h.Now)
	if plan.Eval != nil && !h.OldLeader && len(result.RejectedNodes) == 0 {
		// The applier's entry is encoded: the store writes its own copy.
		req.Eval = plan.Eval.Copy()
		result.EvalWritten = true
		h.Updated = append(h.Updated, plan.Eval)
		h.Folded = append(h.Folded, plan.Eval)
	}
	h.write(func(tx *state.Txn) error { return tx.UpsertPlanResults(req) })
	result.AllocIndex = h.index
	if len(result.RejectedNodes) > 0 {
		h.RejectedRuns++
		result.RefreshIndex = h.index
		return result, h.recordedSnapshot(), nil
	}
	return result, nil, nil
}

// withoutNodes returns a shallow copy of plan without its parts on the
// given nodes.
func withoutNodes(plan *structs.Plan, nodes []string) *structs.Plan {
	if len(nodes) == 0 {
		return plan
	}
	p := *plan
	p.NodeUpdate = maps.Clone(plan.NodeUpdate)
	p.NodeAllocation = maps.Clone(plan.NodeAllocation)
	p.NodePreemptions = maps.Clone(plan.NodePreemptions)
	for _, id := range nodes {
		delete(p.NodeUpdate, id)
		delete(p.NodeAllocation, id)
		delete(p.NodePreemptions, id)
	}
	return &p
}

// UpdateEval implements Planner.
func (h *Harness) UpdateEval(e *structs.Evaluation) error {
	h.Updated = append(h.Updated, e)
	h.UpsertEvals(e)
	return nil
}

// CreateEval implements Planner.
func (h *Harness) CreateEval(e *structs.Evaluation) error {
	h.Created = append(h.Created, e)
	h.UpsertEvals(e)
	return nil
}

// ReblockEval implements Planner.
func (h *Harness) ReblockEval(e *structs.Evaluation) error {
	h.Reblocked = append(h.Reblocked, e)
	h.UpsertEvals(e)
	return nil
}

// lastEval returns the final status written for the processed eval.
func (h *Harness) lastEval(t *testing.T) *structs.Evaluation {
	t.Helper()
	if len(h.Updated) == 0 {
		t.Fatal("eval never updated")
	}
	return h.Updated[len(h.Updated)-1]
}

// allocs returns all the job's allocs.
func (h *Harness) allocs(job *structs.Job) []*structs.Allocation {
	allocs, err := h.Snapshot().AllocsByJob(job.Namespace, job.ID, true)
	if err != nil {
		h.t.Fatal(err)
	}
	return allocs
}

// liveAllocs returns the job's allocs the state wants running.
func (h *Harness) liveAllocs(job *structs.Job) []*structs.Allocation {
	return slices.DeleteFunc(h.allocs(job), func(a *structs.Allocation) bool { return a.ServerTerminalStatus() })
}

// alloc returns one alloc by ID.
func (h *Harness) alloc(id string) *structs.Allocation {
	a, err := h.Snapshot().AllocByID(id)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

var (
	_ Planner = (*Harness)(nil)
	_ State   = (*state.SchedulerView)(nil)
)
