package scheduler

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/opennomad/nomad/structs"
)

// Attempts per evaluation before a scheduler gives up on a job whose
// plans keep being rejected. Service and system jobs try harder than
// batch ones, as in Nomad.
const (
	maxServiceScheduleAttempts  = 5
	maxBatchScheduleAttempts    = 2
	maxSystemScheduleAttempts   = 5
	maxSysBatchScheduleAttempts = 2
)

// errMaxAttempts is wrapped by the error retryMax returns on exhaustion.
var errMaxAttempts = errors.New("maximum attempts reached")

// retryMax calls pass until it reports done, at most max times in a row
// without progress; progress resets the count. pass errors end the loop.
func retryMax(max int, pass func() (bool, error), progress func() bool) error {
	attempts := 0
	for attempts < max {
		done, err := pass()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if progress != nil && progress() {
			attempts = 0
		} else {
			attempts++
		}
	}
	return fmt.Errorf("%w (%d)", errMaxAttempts, max)
}

// progressMade reports whether a plan result committed anything.
func progressMade(r *structs.PlanResult) bool {
	return r != nil && (len(r.NodeUpdate) > 0 || len(r.NodeAllocation) > 0 ||
		r.Deployment != nil || len(r.DeploymentUpdates) > 0)
}

// evalOutcome is what a scheduler writes back on the eval it processed.
type evalOutcome struct {
	status       string
	desc         string
	blocked      *structs.Evaluation
	failed       map[string]*structs.AllocMetric
	queued       map[string]int
	annotations  *structs.PlanAnnotations
	deploymentID string
	// nextEval is the continuation eval this one created, if any.
	nextEval string
}

// setStatus writes the final state of the eval through the planner.
func setStatus(planner Planner, eval *structs.Evaluation, o evalOutcome, now time.Time) error {
	return planner.UpdateEval(finalEval(eval, o, now))
}

// finalEval is the eval as a scheduler writes it back with outcome o:
// what setStatus sends, and what a plan carries for the leader to write
// with it when that plan is the pass's last (see structs.Plan.Eval).
func finalEval(eval *structs.Evaluation, o evalOutcome, now time.Time) *structs.Evaluation {
	n := eval.Copy()
	n.Status = o.status
	n.StatusDescription = o.desc
	n.FailedTGAllocs = o.failed
	n.QueuedAllocations = o.queued
	if o.blocked != nil {
		n.BlockedEval = o.blocked.ID
	}
	if o.annotations != nil {
		n.PlanAnnotations = o.annotations
	}
	if o.deploymentID != "" {
		n.DeploymentID = o.deploymentID
	}
	if o.nextEval != "" {
		n.NextEval = o.nextEval
	}
	n.UpdateModifyTime(now)
	return n
}

// countPlaced takes the new allocs among committed (a plan result's, or a
// plan's for what a full commit would do) off the queued counts of their
// groups; placed maps the pass's new alloc IDs to their group.
func countPlaced(queued map[string]int, placed map[string]string, committed map[string][]*structs.Allocation) {
	for _, allocs := range committed {
		for _, a := range allocs {
			if tg, ok := placed[a.ID]; ok {
				queued[tg]--
			}
		}
	}
}

// queuedIfCommitted is what the queued counts become once every new
// alloc of plan is committed.
func queuedIfCommitted(queued map[string]int, placed map[string]string, plan *structs.Plan) map[string]int {
	q := maps.Clone(queued)
	countPlaced(q, placed, plan.NodeAllocation)
	return q
}
