package deploymentwatcher

import (
	"slices"
	"time"

	"github.com/opennomad/nomad/structs"
)

// view is what one pass knows of one deployment.
type view struct {
	d *structs.Deployment
	// job is the job as registered now; nil when purged.
	job *structs.Job
	// allocs are the deployment's allocs.
	allocs []*structs.Allocation
	// lastEvalIndex is the highest CreateIndex among the job's evals.
	lastEvalIndex uint64
}

// decision is what a pass does about one deployment. Everything in it
// lands in as few Raft entries as possible (see Watcher.apply).
type decision struct {
	// cancel, when set, cancels the deployment and nothing else applies.
	cancel *structs.DeploymentStatusUpdate

	// healthy and unhealthy are fresh verdicts, by alloc ID.
	healthy, unhealthy []string

	// fail, when set, fails the deployment; revert asks for the job's
	// latest stable version to be registered with it.
	fail   *structs.DeploymentStatusUpdate
	revert bool

	// promote promotes every unpromoted canary group.
	promote bool
	// needsPromotion sets the description asking for manual promotion.
	needsPromotion bool

	// eval asks for an eval even without other changes: a verdict landed
	// (a client's, or one of this pass) that no eval has seen.
	eval bool

	// maybeDone: every group has the healthy allocs it needs, this
	// pass's verdicts counted, and no canary waits. The roll-out may be
	// over; only the scheduler can tell (see Watcher.settle).
	maybeDone bool
	// succeed, set by Watcher.settle instead of the eval, marks the
	// deployment successful: the scheduler, asked in a dry run, would do
	// nothing else.
	succeed *structs.DeploymentStatusUpdate

	// wakeAt is when a pending alloc may turn healthy or a progress
	// deadline passes; zero when only a change in state matters.
	wakeAt time.Time
}

func (d *decision) wakeBy(t time.Time) {
	if !t.IsZero() && (d.wakeAt.IsZero() || t.Before(d.wakeAt)) {
		d.wakeAt = t
	}
}

// writesNothing reports whether applying the decision writes nothing.
func (d *decision) writesNothing() bool {
	return d.onlyVerdictsAndEval() && !d.verdicts() && !d.eval
}

// evalOnly reports whether an eval is all the decision writes.
func (d *decision) evalOnly() bool {
	return d.onlyVerdictsAndEval() && !d.verdicts() && d.eval
}

// verdictsOnly reports whether verdicts, with or without their eval,
// are all the decision writes: no failure, revert or promotion write
// comes with them or after them.
func (d *decision) verdictsOnly() bool {
	return d.onlyVerdictsAndEval() && d.verdicts()
}

// succeedsOnly reports whether the deployment's success is all the
// decision writes.
func (d *decision) succeedsOnly() bool {
	return d.succeed != nil && d.noStatusWrites() && !d.verdicts() && !d.eval
}

// onlyVerdictsAndEval reports whether the decision writes nothing but
// verdicts and an eval: no success and no status write (noStatusWrites).
func (d *decision) onlyVerdictsAndEval() bool {
	return d.succeed == nil && d.noStatusWrites()
}

// noStatusWrites reports whether the decision neither cancels, fails
// (with its revert) nor promotes the deployment, nor describes it as
// waiting for promotion.
func (d *decision) noStatusWrites() bool {
	return d.cancel == nil && d.fail == nil && !d.promote && !d.needsPromotion
}

// deploymentUpdate returns the deployment status the decision writes with
// its verdicts, or alone: a failure or a success; nil when neither.
func (d *decision) deploymentUpdate() *structs.DeploymentStatusUpdate {
	if d.fail != nil {
		return d.fail
	}
	return d.succeed
}

// verdicts returns whether the decision carries health verdicts.
func (d *decision) verdicts() bool { return len(d.healthy)+len(d.unhealthy) > 0 }

// decide decides one pass over an active (running or paused) deployment
// at now; see the package doc for the rules. It reads only its arguments.
func decide(v *view, now time.Time) decision {
	var dec decision
	d := v.d
	switch {
	case v.job.Stopped() || v.job.CreateIndex != d.JobCreateIndex:
		dec.cancel = statusUpdate(d, structs.DeploymentStatusCancelled, structs.DeploymentStatusDescriptionStoppedJob)
		return dec
	case v.job.Version != d.JobVersion:
		dec.cancel = statusUpdate(d, structs.DeploymentStatusCancelled, structs.DeploymentStatusDescriptionNewerJob)
		return dec
	}

	// Verdicts, old and new, per alloc.
	healthy := map[string]bool{}   // alloc ID -> healthy (true) or unhealthy (false)
	newHealthy := map[string]int{} // group -> fresh healthy verdicts
	live := map[string]bool{}      // allocs not terminal
	var lastVerdict uint64
	for _, a := range v.allocs {
		if !a.TerminalStatus() {
			live[a.ID] = true
		}
		if ds := a.DeploymentStatus; ds != nil && ds.Healthy != nil {
			healthy[a.ID] = *ds.Healthy
			lastVerdict = max(lastVerdict, ds.ModifyIndex)
			continue
		}
		h, ok := judge(a, d, now)
		if !ok {
			continue
		}
		switch h.Status {
		case structs.AllocHealthHealthy:
			healthy[a.ID] = true
			newHealthy[a.TaskGroup]++
			dec.healthy = append(dec.healthy, a.ID)
		case structs.AllocHealthUnhealthy:
			healthy[a.ID] = false
			dec.unhealthy = append(dec.unhealthy, a.ID)
		default:
			dec.wakeBy(h.At)
		}
	}
	if d.Status != structs.DeploymentStatusRunning {
		// Paused: verdicts only, the roll-out waits.
		dec.wakeAt = time.Time{}
		return dec
	}
	dec.eval = dec.verdicts() || lastVerdict > v.lastEvalIndex

	// Failures.
	var failing []string
	failDesc := ""
	for _, g := range sortedGroups(d) {
		st := d.TaskGroups[g]
		if st.ProgressDeadline == 0 {
			if slices.ContainsFunc(v.allocs, func(a *structs.Allocation) bool {
				h, judged := healthy[a.ID]
				return a.TaskGroup == g && judged && !h
			}) {
				failing = append(failing, g)
				failDesc = structs.DeploymentStatusDescriptionFailedAllocations
			}
			continue
		}
		if groupDone(st, newHealthy[g], healthy, live) || newHealthy[g] > 0 || st.RequireProgressBy.IsZero() {
			continue
		}
		if now.Before(st.RequireProgressBy) {
			dec.wakeBy(st.RequireProgressBy)
			continue
		}
		failing = append(failing, g)
		if failDesc == "" {
			failDesc = structs.DeploymentStatusDescriptionProgressDeadline
		}
	}
	if len(failing) > 0 {
		dec.fail = statusUpdate(d, structs.DeploymentStatusFailed, failDesc)
		for _, g := range failing {
			dec.revert = dec.revert || d.TaskGroups[g].AutoRevert
		}
		dec.eval = true
		dec.wakeAt = time.Time{}
		return dec
	}

	// Canaries waiting for promotion.
	waiting, auto := 0, 0
	for _, g := range sortedGroups(d) {
		st := d.TaskGroups[g]
		if st.DesiredCanaries == 0 || st.Promoted {
			continue
		}
		if healthyCanaries(st, healthy, live) < st.DesiredCanaries {
			return dec
		}
		waiting++
		if st.AutoPromote {
			auto++
		}
	}
	switch {
	case waiting == 0:
		dec.maybeDone = allGroupsDone(d, newHealthy, healthy, live)
	case auto == waiting:
		dec.promote = true
	case d.StatusDescription != structs.DeploymentStatusDescriptionRunningNeedsPromotion:
		dec.needsPromotion = true
	}
	return dec
}

// judge gives the task-states verdict on an alloc of the deployment; ok
// is false when the servers do not judge it: the servers stopped it, or
// its group's health is judged by an operator.
func judge(a *structs.Allocation, d *structs.Deployment, now time.Time) (structs.AllocHealthResult, bool) {
	if a.ServerTerminalStatus() {
		return structs.AllocHealthResult{}, false
	}
	if _, ok := d.TaskGroups[a.TaskGroup]; !ok {
		return structs.AllocHealthResult{}, false
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil || tg.Update == nil || tg.Update.HealthCheck == structs.UpdateHealthCheckManual {
		return structs.AllocHealthResult{}, false
	}
	since := time.Unix(0, max(a.CreateTime, d.CreateTime))
	return structs.TaskStatesHealth(a, tg, tg.Update.AllocHealthCheck(since), now), true
}

// groupDone reports whether a group needs no more progress: its canaries
// all healthy while they wait for promotion, or enough healthy allocs.
func groupDone(st *structs.DeploymentState, newHealthy int, healthy, live map[string]bool) bool {
	if st.DesiredCanaries > 0 && !st.Promoted {
		return healthyCanaries(st, healthy, live) >= st.DesiredCanaries
	}
	return st.HealthyAllocs+newHealthy >= st.DesiredTotal
}

// allGroupsDone reports whether every group of d is done (groupDone)
// and none has unhealthy allocs.
func allGroupsDone(d *structs.Deployment, newHealthy map[string]int, healthy, live map[string]bool) bool {
	for g, st := range d.TaskGroups {
		if st.UnhealthyAllocs > 0 || !groupDone(st, newHealthy[g], healthy, live) {
			return false
		}
	}
	for id, h := range healthy {
		if !h && live[id] {
			return false
		}
	}
	return true
}

// healthyCanaries counts the group's canaries that are healthy and live.
func healthyCanaries(st *structs.DeploymentState, healthy, live map[string]bool) int {
	n := 0
	for _, id := range st.PlacedCanaries {
		if healthy[id] && live[id] {
			n++
		}
	}
	return n
}

func sortedGroups(d *structs.Deployment) []string {
	out := make([]string, 0, len(d.TaskGroups))
	for g := range d.TaskGroups {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

func statusUpdate(d *structs.Deployment, status, desc string) *structs.DeploymentStatusUpdate {
	return &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: status, StatusDescription: desc}
}
