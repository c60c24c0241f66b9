package state

import (
	"fmt"

	"github.com/opennomad/nomad/structs"
)

// writePlanEval writes the eval a plan result carries (its final form,
// folded in by the plan applier when the plan committed whole) exactly as
// an EvalUpdate entry of it would: the same checks, job summary, blocked
// evals of the job cancelled when it completes, job status and events.
// It comes after the allocs, as the worker's separate update used to.
// The eval must be the entry's own (ID EvalID) and already stored under
// the same namespace and job: a plan result never creates an eval or
// moves one to another job.
func (tx *Txn) writePlanEval(req *structs.ApplyPlanResultsRequest) error {
	e := req.Eval
	if e == nil {
		return nil
	}
	if e.ID != req.EvalID {
		return fmt.Errorf("plan results: eval %q is not the plan's eval %q: %w", e.ID, req.EvalID, structs.ErrInvalid)
	}
	stored, err := evalByID(tx.txn, nil, e.ID)
	if err != nil {
		return err
	}
	if stored == nil {
		return fmt.Errorf("plan results: eval %q: %w", e.ID, structs.ErrUnknownEval)
	}
	if stored.Namespace != e.Namespace || stored.JobID != e.JobID {
		return fmt.Errorf("plan results: eval %q names job %q in namespace %q, not its own job %q in namespace %q: %w",
			e.ID, e.JobID, e.Namespace, stored.JobID, stored.Namespace, structs.ErrInvalid)
	}
	return tx.UpsertEvals([]*structs.Evaluation{e})
}
