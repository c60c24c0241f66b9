package endpoints

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-metrics"

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
	future, err := p.srv.EnqueuePlan(plan)
	if err != nil {
		return err
	}
	result, err := future.Wait()
	if err != nil {
		return fmt.Errorf("plan for eval %q: %w", plan.EvalID, err)
	}
	reply.Result = result
	if result != nil {
		reply.Index = result.AllocIndex
	}
	return nil
}
