package structs

import "fmt"

// MinVersionPlanEval is the first server version that writes the eval a
// plan result carries (ApplyPlanResultsRequest.Eval). An older server
// would decode such an entry without it and keep the eval pending while
// the leader marks it complete, so the plan applier folds the eval into
// the result only once every server runs at least this version.
const MinVersionPlanEval = "0.3.0"

// PlanEvalError reports why the plan's Eval may not be written with its
// result, nil when it may (or when the plan carries none): it must be the
// plan's own eval, with a status an eval may have. stored is the eval as
// the servers hold it; the namespace and job of an eval never change.
// The error is of kind ErrInvalid.
func (p *Plan) PlanEvalError(stored *Evaluation) error {
	e := p.Eval
	if e == nil {
		return nil
	}
	var problem string
	switch {
	case e.ID != p.EvalID:
		problem = fmt.Sprintf("eval %q is not the plan's eval %q", e.ID, p.EvalID)
	case stored == nil:
		problem = fmt.Sprintf("eval %q is unknown", e.ID)
	case e.Namespace != stored.Namespace || e.JobID != stored.JobID:
		problem = fmt.Sprintf("eval %q names job %q in namespace %q, not its own job %q in namespace %q",
			e.ID, e.JobID, e.Namespace, stored.JobID, stored.Namespace)
	case p.Job != nil && (e.Namespace != p.Job.Namespace || e.JobID != p.Job.ID):
		problem = fmt.Sprintf("eval %q is of job %q, the plan of job %q", e.ID, e.JobID, p.Job.ID)
	case !ValidEvalStatus(e.Status):
		problem = fmt.Sprintf("eval %q: invalid status %q", e.ID, e.Status)
	default:
		return nil
	}
	return &ValidationError{Problems: []string{"plan eval: " + problem}}
}
