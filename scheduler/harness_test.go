package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Harness is a Planner for tests over the real state store: it records
// every plan and eval update and, unless told otherwise, commits plans the
// way the plan applier does, re-checking every node's fit first. Nodes
// whose proposed allocs no longer fit are rejected and the scheduler is
// sent a fresh snapshot: the applier's partial-commit protocol.
type Harness struct {
	t     testing.TB
	Store *state.StateStore
	index uint64

	Plans        []*structs.Plan
	Results      []*structs.PlanResult
	Updated      []*structs.Evaluation
	Created      []*structs.Evaluation
	Reblocked    []*structs.Evaluation
	Overcommits  []string
	RejectedRuns int

	// NoApply records plans without committing them.
	NoApply bool
	// Reject, when set, names nodes the applier rejects in the plan of
	// attempt n (counted from 0), to simulate a racing scheduler.
	Reject func(n int, plan *structs.Plan) []string

	Now time.Time
	// MaxPlacementsPerPass is handed to the scheduler's config (0: the
	// default).
	MaxPlacementsPerPass int

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
	return &Config{Now: func() time.Time { return h.Now }, MaxPlacementsPerPass: h.MaxPlacementsPerPass}
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

// SubmitPlan implements Planner.
func (h *Harness) SubmitPlan(plan *structs.Plan) (*structs.PlanResult, State, error) {
	attempt := len(h.Plans)
	h.Plans = append(h.Plans, plan)
	result := &structs.PlanResult{
		NodeUpdate:        map[string][]*structs.Allocation{},
		NodeAllocation:    map[string][]*structs.Allocation{},
		NodePreemptions:   map[string][]*structs.Allocation{},
		Deployment:        plan.Deployment,
		DeploymentUpdates: plan.DeploymentUpdates,
	}
	h.Results = append(h.Results, result)
	if h.NoApply {
		result.NodeUpdate, result.NodeAllocation, result.NodePreemptions = plan.NodeUpdate, plan.NodeAllocation, plan.NodePreemptions
		return result, nil, nil
	}
	var rejected []string
	if h.Reject != nil {
		rejected = h.Reject(attempt, plan)
	}
	snap := h.Snapshot()
	for _, id := range plan.NodeIDs() {
		if slices.Contains(rejected, id) {
			continue
		}
		if len(plan.NodeAllocation[id]) > 0 {
			if why := fitsAfterPlan(snap, plan, id); why != "" {
				h.Overcommits = append(h.Overcommits, why)
				rejected = append(rejected, id)
				continue
			}
		}
		if v := plan.NodeUpdate[id]; len(v) > 0 {
			result.NodeUpdate[id] = v
		}
		if v := plan.NodeAllocation[id]; len(v) > 0 {
			result.NodeAllocation[id] = v
		}
		if v := plan.NodePreemptions[id]; len(v) > 0 {
			result.NodePreemptions[id] = v
		}
	}
	result.RejectedNodes = rejected

	req := &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{Job: plan.Job},
		Deployment:         result.Deployment,
		DeploymentUpdates:  result.DeploymentUpdates,
		EvalID:             plan.EvalID,
		UpdatedAt:          h.Now.UnixNano(),
	}
	for _, allocs := range result.NodeUpdate {
		for _, a := range allocs {
			req.AllocsStopped = append(req.AllocsStopped, (*structs.AllocationDiff)(a))
		}
	}
	for _, allocs := range result.NodePreemptions {
		for _, a := range allocs {
			req.AllocsPreempted = append(req.AllocsPreempted, (*structs.AllocationDiff)(a))
		}
	}
	for _, allocs := range result.NodeAllocation {
		req.AllocsUpdated = append(req.AllocsUpdated, allocs...)
	}
	h.write(func(tx *state.Txn) error { return tx.UpsertPlanResults(req) })
	result.AllocIndex = h.index
	if len(rejected) > 0 {
		h.RejectedRuns++
		result.RefreshIndex = h.index
		return result, h.recordedSnapshot(), nil
	}
	return result, nil, nil
}

// fitsAfterPlan re-checks one node of a plan as the applier does, and
// returns why it does not fit, or "".
func fitsAfterPlan(snap *state.SchedulerView, plan *structs.Plan, nodeID string) string {
	node, _ := snap.NodeByID(nodeID)
	if node == nil {
		return "node does not exist"
	}
	existing, _ := snap.AllocsByNode(nodeID)
	remove := map[string]bool{}
	for _, m := range []map[string][]*structs.Allocation{plan.NodeUpdate, plan.NodePreemptions, plan.NodeAllocation} {
		for _, a := range m[nodeID] {
			remove[a.ID] = true
		}
	}
	var proposed []*structs.Allocation
	for _, a := range existing {
		if !remove[a.ID] && !a.TerminalStatus() {
			proposed = append(proposed, a)
		}
	}
	proposed = append(proposed, plan.NodeAllocation[nodeID]...)
	if ok, dim, _ := structs.AllocsFit(node, proposed); !ok {
		return fmt.Sprintf("node %s overcommitted: %s", node.ID, dim)
	}
	return ""
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
