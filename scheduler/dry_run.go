package scheduler

import (
	"sync"

	"github.com/opennomad/nomad/structs"
)

// DryRun is the Planner of a scheduler run that must not change
// anything: `nomad job plan`, and the deployment watcher asking what an
// eval would do before it writes one. It records what the scheduler
// would write and answers every plan as fully committed at Index, so the
// scheduler finishes in one pass as it would on an idle cluster. It
// never writes anything. Its methods are safe for concurrent use.
type DryRun struct {
	// Index is the AllocIndex of every answered plan.
	Index uint64

	mu      sync.Mutex
	out     DryRunOutcome
	reblock bool
}

// DryRunOutcome is what a dry run recorded.
type DryRunOutcome struct {
	// Plan is the last plan submitted; nil when the scheduler found
	// nothing to submit.
	Plan *structs.Plan
	// Plans counts the plans submitted.
	Plans int
	// Eval is the eval's final form as the scheduler wrote it through
	// UpdateEval; nil when it rode with the plan instead (Plan.Eval).
	Eval *structs.Evaluation
	// Created are the evals the scheduler would create: blocked evals,
	// follow-ups and continuations.
	Created []*structs.Evaluation
	// Reblocked reports a ReblockEval call.
	Reblocked bool
}

var _ Planner = (*DryRun)(nil)

// Outcome returns what the run recorded so far.
func (p *DryRun) Outcome() DryRunOutcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.out
	out.Created = append([]*structs.Evaluation(nil), p.out.Created...)
	return out
}

// SubmitPlan records the plan and reports all of it committed.
func (p *DryRun) SubmitPlan(plan *structs.Plan) (*structs.PlanResult, State, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.Plan = plan
	p.out.Plans++
	return committedWhole(plan, p.Index), nil, nil
}

// committedWhole is the result of plan committed whole at index.
func committedWhole(plan *structs.Plan, index uint64) *structs.PlanResult {
	return &structs.PlanResult{
		NodeUpdate:        plan.NodeUpdate,
		NodeAllocation:    plan.NodeAllocation,
		NodePreemptions:   plan.NodePreemptions,
		Deployment:        plan.Deployment,
		DeploymentUpdates: plan.DeploymentUpdates,
		AllocIndex:        index,
	}
}

// UpdateEval records the eval's final form.
func (p *DryRun) UpdateEval(eval *structs.Evaluation) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.Eval = eval
	return nil
}

// CreateEval records an eval the scheduler would create.
func (p *DryRun) CreateEval(eval *structs.Evaluation) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.Created = append(p.out.Created, eval)
	return nil
}

// ReblockEval records that the eval would go back to the blocked set.
func (p *DryRun) ReblockEval(*structs.Evaluation) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.Reblocked = true
	return nil
}
