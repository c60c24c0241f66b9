package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opennomad/nomad/scheduler/schedtest"
	"github.com/opennomad/nomad/structs"
)

// Harness is a Planner for tests: it records every plan and eval update
// and, unless told otherwise, commits plans to its State the way the plan
// applier does, re-checking every node's fit. Nodes whose proposed allocs
// no longer fit are rejected and the scheduler is sent a fresh snapshot,
// exactly the partial-commit protocol of the real applier.
type Harness struct {
	t     testing.TB
	State *schedtest.State

	Plans        []*structs.Plan
	Results      []*structs.PlanResult
	Updated      []*structs.Evaluation
	Created      []*structs.Evaluation
	Reblocked    []*structs.Evaluation
	Overcommits  []string
	RejectedRuns int

	// NoApply records plans without committing them (benchmarks).
	NoApply bool
	// Reject, when set, names nodes the applier rejects in the plan of
	// attempt n (counted from 0), to simulate a racing scheduler.
	Reject func(n int, plan *structs.Plan) []string

	Now time.Time
}

// NewHarness returns a harness over an empty state.
func NewHarness(t testing.TB) *Harness {
	return &Harness{t: t, State: schedtest.NewState(), Now: testNow}
}

// Config returns a scheduler config with the harness clock.
func (h *Harness) Config() *Config {
	return &Config{Now: func() time.Time { return h.Now }}
}

// Process runs the scheduler of the eval's type over a fresh snapshot.
func (h *Harness) Process(eval *structs.Evaluation) error {
	h.State.UpsertEvals(eval)
	s, err := NewScheduler(eval.Type, h.Config(), h.State.Snapshot(), h)
	if err != nil {
		return err
	}
	return s.Process(eval)
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
	snap := h.State.Snapshot()
	for _, id := range plan.NodeIDs() {
		if slices.Contains(rejected, id) {
			continue
		}
		if len(plan.NodeAllocation[id]) > 0 {
			if why := h.fits(snap, plan, id); why != "" {
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
	result.AllocIndex = h.State.ApplyPlanResult(plan.Job, result)
	if len(rejected) > 0 {
		h.RejectedRuns++
		result.RefreshIndex = result.AllocIndex
		return result, h.State.Snapshot(), nil
	}
	return result, nil, nil
}

// fits re-checks one node of a plan as the applier does.
func (h *Harness) fits(snap *schedtest.Snapshot, plan *structs.Plan, nodeID string) string {
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
	h.State.UpsertEvals(e)
	return nil
}

// CreateEval implements Planner.
func (h *Harness) CreateEval(e *structs.Evaluation) error {
	h.Created = append(h.Created, e)
	h.State.UpsertEvals(e)
	return nil
}

// ReblockEval implements Planner.
func (h *Harness) ReblockEval(e *structs.Evaluation) error {
	h.Reblocked = append(h.Reblocked, e)
	h.State.UpsertEvals(e)
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

// liveAllocs returns the job's allocs the state wants running.
func (h *Harness) liveAllocs(job *structs.Job) []*structs.Allocation {
	allocs, _ := h.State.Snapshot().AllocsByJob(job.Namespace, job.ID, true)
	return slices.DeleteFunc(allocs, func(a *structs.Allocation) bool { return a.ServerTerminalStatus() })
}

var _ Planner = (*Harness)(nil)
