package scheduler

import (
	"slices"
	"time"

	"github.com/opennomad/nomad/structs"
)

const (
	// rescheduleWindow: an alloc due for replacement within this window
	// of now is replaced now rather than by a follow-up eval.
	rescheduleWindow = time.Second
	// followupBatchWindow: allocs due within this window of one another
	// share one follow-up eval.
	followupBatchWindow = 5 * time.Second
)

// laterAlloc is a failed or unhealthy alloc to be replaced at a later
// time.
type laterAlloc struct {
	alloc *structs.Allocation
	at    time.Time
}

// rescheduleTime decides whether an alloc is replaced under its group's
// reschedule policy: now, later (at the time returned), or not at all
// (ok false). Two kinds of alloc qualify:
//
//   - one that failed on its client;
//   - one its deployment judged unhealthy that still runs (or never
//     started), when that deployment allows it to be replaced.
//
// Allocs of the job's active deployment follow Nomad's rule: they are
// replaced only once the deployment allows it. Nomad's deployment watcher
// allows it (DesiredTransition.Reschedule) for an unhealthy alloc of a
// group with a progress deadline, leaving the deadline to fail the
// roll-out; a group without one fails the deployment at its first
// unhealthy alloc instead (and auto-revert, if asked, registers the last
// stable version), so nothing of it is replaced. Our watcher writes only
// the verdict, so an unhealthy verdict in a group with a progress
// deadline counts as that permission; the mark is honoured too. A failed
// alloc waits for its verdict, and the allocs of a failed deployment are
// not replaced at all.
//
// Nomad itself replaces only allocs that failed on their client, so an
// alloc that runs but never turns healthy there holds the roll-out until
// its progress deadline. Here it is replaced like a failed one, timed
// from its verdict: the deployment has given up on it, and waiting for
// the deadline only turns one bad node into a failed roll-out.
func (r *reconciler) rescheduleTime(a *structs.Allocation) (now bool, at time.Time, ok bool) {
	failed := a.ClientStatus == structs.AllocClientStatusFailed && a.DesiredStatus == structs.AllocDesiredStatusRun
	unhealthy := !a.TerminalStatus() && a.DeploymentStatus.IsUnhealthy()
	if !failed && !unhealthy {
		return false, at, false
	}
	if d := r.deployment; d != nil && a.DeploymentID == d.ID {
		if r.deploymentFailed || (d.Active() && !r.replacementAllowed(a)) {
			return false, at, false
		}
	} else if !failed {
		return false, at, false
	}
	if failed && a.DesiredTransition.ShouldForceReschedule() {
		return true, r.in.now, true
	}
	if failed {
		at, ok = a.NextRescheduleTime()
	} else {
		at, ok = a.NextRescheduleTimeByTime(verdictTime(a))
	}
	if !ok {
		return false, at, false
	}
	if a.FollowupEvalID != "" && a.FollowupEvalID == r.in.evalID {
		return true, at, true
	}
	if !at.After(r.in.now.Add(rescheduleWindow)) {
		return true, at, true
	}
	return false, at, true
}

// replacementAllowed reports whether the alloc's active deployment lets
// it be replaced: see rescheduleTime.
func (r *reconciler) replacementAllowed(a *structs.Allocation) bool {
	if t := a.DesiredTransition.Reschedule; t != nil && *t {
		return true
	}
	ds := r.deployment.TaskGroups[a.TaskGroup]
	return ds != nil && ds.ProgressDeadline > 0 && a.DeploymentStatus.IsUnhealthy()
}

// verdictTime is when an alloc was judged unhealthy: the verdict's time,
// or the alloc's last change when the verdict carries none.
func verdictTime(a *structs.Allocation) time.Time {
	if ds := a.DeploymentStatus; ds != nil && !ds.Timestamp.IsZero() {
		return ds.Timestamp
	}
	return time.Unix(0, a.ModifyTime).UTC()
}

// followups creates delayed evals for allocs to be replaced later. Allocs
// due within a short window of one another share one eval, so a burst of
// failures does not flood the broker.
func (r *reconciler) followups(later []laterAlloc, du *structs.DesiredUpdates) {
	slices.SortStableFunc(later, func(a, b laterAlloc) int { return a.at.Compare(b.at) })
	var ev *structs.Evaluation
	for _, l := range later {
		du.RescheduleLater++
		if l.alloc.FollowupEvalID != "" {
			continue // an eval is already waiting for it
		}
		if ev == nil || l.at.Sub(ev.WaitUntil) > followupBatchWindow {
			ev = r.followupEval(structs.EvalTriggerAllocReschedule, l.at)
			r.result.followupEvals = append(r.result.followupEvals, ev)
		}
		u := l.alloc.CopySkipJob()
		u.FollowupEvalID = ev.ID
		r.result.attributeUpdates = append(r.result.attributeUpdates, u)
	}
}

func (r *reconciler) followupEval(trigger string, at time.Time) *structs.Evaluation {
	job := r.in.job
	return &structs.Evaluation{
		ID:                structs.GenerateUUID(),
		Namespace:         r.in.namespace,
		Priority:          r.in.evalPriority,
		Type:              job.Type,
		TriggeredBy:       trigger,
		JobID:             r.in.jobID,
		JobModifyIndex:    job.JobModifyIndex,
		Status:            structs.EvalStatusPending,
		StatusDescription: structs.EvalDescDelayedResched,
		WaitUntil:         at,
		PreviousEval:      r.in.evalID,
		CreateTime:        r.in.now.UnixNano(),
		ModifyTime:        r.in.now.UnixNano(),
	}
}
