package planapply

import (
	"fmt"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// checkPlanEval refuses a plan whose Eval is not the plan's own eval, as
// stored: the delivery token proves the worker holds EvalID, not any
// other eval it might name.
func checkPlanEval(view *state.SchedulerView, plan *structs.Plan) error {
	if plan.Eval == nil {
		return nil
	}
	stored, err := view.EvalByID(plan.EvalID)
	if err != nil {
		return fmt.Errorf("plan for eval %q: %w", plan.EvalID, err)
	}
	if err := plan.PlanEvalError(stored); err != nil {
		return fmt.Errorf("plan for eval %q: %w", plan.EvalID, err)
	}
	return nil
}

// foldEval puts the plan's eval into its Raft entry when the plan
// commits whole and every server writes it, and tells the scheduler so
// in the result: the eval's final status then costs no entry of its own.
// Otherwise the entry only moves the eval's ModifyIndex and the
// scheduler, seeing no EvalWritten, writes the eval itself, as it plans
// again after a partial commit anyway.
func (r *applyRun) foldEval(plan *structs.Plan, result *structs.PlanResult, req *structs.ApplyPlanResultsRequest) {
	if plan.Eval == nil || len(result.RejectedNodes) > 0 || result.RefreshIndex != 0 {
		return
	}
	if r.planEvals == nil || !r.planEvals() {
		return
	}
	req.Eval = plan.Eval
	result.EvalWritten = true
}
