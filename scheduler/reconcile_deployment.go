package scheduler

import (
	"github.com/opennomad/nomad/structs"
)

// cancelStaleDeployment cancels an active deployment of a stopped job or
// of an older job version, and decides which deployment is current.
func (r *reconciler) cancelStaleDeployment() {
	d := r.in.deployment
	if d == nil {
		return
	}
	job := r.in.job
	cancel := func(desc string) {
		if d.Active() {
			r.result.deploymentUpdates = append(r.result.deploymentUpdates, &structs.DeploymentStatusUpdate{
				DeploymentID: d.ID, Status: structs.DeploymentStatusCancelled, StatusDescription: desc,
			})
		}
	}
	switch {
	case job.Stopped():
		cancel(structs.DeploymentStatusDescriptionStoppedJob)
	case d.JobCreateIndex != job.CreateIndex || d.JobVersion != job.Version:
		cancel(structs.DeploymentStatusDescriptionNewerJob)
	case d.Status == structs.DeploymentStatusSuccessful, d.Status == structs.DeploymentStatusCancelled:
		// Done with: a later change starts a new deployment if needed.
	default:
		r.deployment = d
		r.deploymentPaused = d.Status == structs.DeploymentStatusPaused
		r.deploymentFailed = d.Status == structs.DeploymentStatusFailed
	}
}

// ownDeployment returns the current deployment in a form the reconciler
// may change: the one it created, or else a copy of the stored one, which
// from then on is the current deployment and goes into the plan so that
// the change reaches every server through Raft.
func (r *reconciler) ownDeployment() *structs.Deployment {
	if r.result.deployment == nil {
		r.result.deployment = r.deployment.Copy()
		r.deployment = r.result.deployment
	}
	return r.deployment
}

// groupDeploymentState returns the group's state in the current
// deployment (read-only unless the deployment is owned, see
// ownDeployment), or a fresh one to attach if a deployment is started.
func (r *reconciler) groupDeploymentState(tg *structs.TaskGroup) (*structs.DeploymentState, bool) {
	if r.deployment != nil {
		if ds, ok := r.deployment.TaskGroups[tg.Name]; ok {
			return ds, true
		}
	}
	// RequireProgressBy stays unset: the progress deadline starts with the
	// group's first placed alloc (the state store sets it then), as in
	// Nomad. Started here, a group that cannot place anything on a full
	// cluster would fail its deployment once the deadline passed, and a
	// failed deployment places no new allocs: the job would be left with
	// none, and no blocked eval waiting for room.
	ds := &structs.DeploymentState{}
	if u := tg.Update; u != nil {
		ds.AutoRevert, ds.AutoPromote, ds.ProgressDeadline = u.AutoRevert, u.AutoPromote, u.ProgressDeadline
	}
	return ds, false
}

// rollingLimit is how many destructive updates the group may start now,
// and whether that is a max_parallel bound (rather than the whole count).
// Without an update block everything is replaced at once; otherwise at
// most max_parallel allocs of the deployment may be unproven at a time,
// none while it is paused, failed, waiting for canary promotion, or has
// an unhealthy alloc.
func (r *reconciler) rollingLimit(tg *structs.TaskGroup, untainted []*structs.Allocation, destructive int, migrating, canarying bool) (int, bool) {
	if tg.Update.IsEmpty() || (destructive == 0 && !migrating) {
		return tg.Count, false
	}
	if canarying {
		return 0, true
	}
	if r.deployment == nil {
		return tg.Update.MaxParallel, true
	}
	if r.deploymentPaused || r.deploymentFailed {
		return 0, true
	}
	limit := tg.Update.MaxParallel
	for _, a := range untainted {
		if a.DeploymentID != r.deployment.ID {
			continue
		}
		if a.DeploymentStatus.IsUnhealthy() {
			return 0, true
		}
		if !a.DeploymentStatus.IsHealthy() {
			limit--
		}
	}
	return max(0, limit), true
}
