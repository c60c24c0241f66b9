package endpoints

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/evaltrace"
	"github.com/opennomad/nomad/structs"
)

// Plan serves Plan.Submit, through which workers hand their plans
// to the leader's plan applier.
type Plan struct {
	srv Server
}

// planRules: Plan.Submit is the scheduling workers' call.
var planRules = Rules{
	"Submit": Internal(),
}

// planDetail says what a plan asks, for the evaluation timeline.
func planDetail(plan *structs.Plan) string {
	place, stop := 0, 0
	for _, allocs := range plan.NodeAllocation {
		place += len(allocs)
	}
	for _, stops := range plan.NodeUpdate {
		stop += len(stops)
	}
	return fmt.Sprintf("%d placements, %d stops on %d nodes", place, stop, len(plan.NodeAllocation)+len(plan.NodeUpdate))
}

// resultDetail says what the applier committed of a plan.
func resultDetail(plan *structs.Plan, result *structs.PlanResult) string {
	if result == nil || result.IsNoOp() {
		if result != nil && result.RefreshIndex > 0 {
			return fmt.Sprintf("nothing committed; the worker must plan again from index %d", result.RefreshIndex)
		}
		return "nothing to commit"
	}
	full, expected, actual := result.FullCommit(plan)
	if full && result.EvalWritten {
		return fmt.Sprintf("committed at index %d: %d placements, and the eval's outcome", result.AllocIndex, actual)
	}
	if full {
		return fmt.Sprintf("committed at index %d: %d placements", result.AllocIndex, actual)
	}
	return fmt.Sprintf("committed at index %d: %d of %d placements (%d nodes refused)", result.AllocIndex, actual, expected, len(result.RejectedNodes))
}

// Submit queues a plan for the plan applier and returns what it
// committed. The plan's eval must be outstanding under the plan's token:
// a worker that lost its delivery (nack timeout, leader change) cannot
// commit a plan computed for it. The eval's nack timer is paused while
// the plan waits, since the wait depends on the applier, not the worker.
func (p *Plan) Submit(args *structs.PlanRequest, reply *structs.PlanResponse) error {
	if done, err := p.srv.Forward("Plan.Submit", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "plan", "submit"}, time.Now())
	plan := args.Plan
	if plan == nil {
		return &structs.ValidationError{Problems: []string{"missing plan"}}
	}
	broker := p.srv.EvalBroker()
	if broker == nil {
		return structs.ErrBrokerDisabled
	}
	if err := broker.PauseNackTimeout(plan.EvalID, plan.EvalToken); err != nil {
		return fmt.Errorf("plan for eval %q: %w", plan.EvalID, err)
	}
	defer func() {
		if err := broker.ResumeNackTimeout(plan.EvalID, plan.EvalToken); err != nil {
			p.srv.Logger().Debug("resuming nack timer after plan", "eval_id", plan.EvalID, "error", err)
		}
	}()
	trace := p.srv.EvalTrace()
	trace.Record(plan.EvalID, evaltrace.StagePlanSubmitted, planDetail(plan))
	future, err := p.srv.EnqueuePlan(plan)
	if err != nil {
		trace.Record(plan.EvalID, evaltrace.StagePlanFailed, err.Error())
		return err
	}
	result, err := future.Wait()
	if err != nil {
		trace.Record(plan.EvalID, evaltrace.StagePlanFailed, err.Error())
		return fmt.Errorf("plan for eval %q: %w", plan.EvalID, err)
	}
	trace.Record(plan.EvalID, evaltrace.StagePlanApplied, resultDetail(plan, result))
	reply.Result = result
	if result != nil {
		reply.Index = result.AllocIndex
	}
	return nil
}
