package deploymentwatcher

import (
	"errors"
	"fmt"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Operator actions on deployments. The server's Deployment endpoints call
// these on the leader: they share the watcher's rules (a failure reverts
// the job the way an automatic one does) and write through its Raft. They
// may be called from any goroutine while the watcher runs.

// ErrDisabled is returned by operator actions on a watcher that is not
// enabled: only the leader acts on deployments.
var ErrDisabled = errors.New("deployment watcher is not enabled (this server is not the leader)")

// activeDeployment returns the current store and the active deployment.
func (w *Watcher) activeDeployment(id string) (*state.StateStore, *structs.Deployment, *structs.Job, error) {
	if !w.Enabled() {
		return nil, nil, nil, ErrDisabled
	}
	store := w.cfg.State()
	d, err := store.DeploymentByID(nil, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if d == nil {
		return nil, nil, nil, fmt.Errorf("deployment %q: %w", id, structs.ErrUnknownDeployment)
	}
	if !d.Active() {
		return nil, nil, nil, fmt.Errorf("deployment %q is %s: only an active deployment can be changed", id, d.Status)
	}
	job, err := store.JobByID(nil, d.Namespace, d.JobID)
	if err != nil {
		return nil, nil, nil, err
	}
	if job == nil {
		return nil, nil, nil, fmt.Errorf("deployment %q: job %q: %w", id, d.JobID, structs.ErrUnknownJob)
	}
	return store, d, job, nil
}

// Promote promotes the deployment's canaries (every group's with All, or
// the named groups'), with an eval that places the rest of the roll-out.
// The state store refuses a group whose canaries are not all healthy.
func (w *Watcher) Promote(req *structs.DeploymentPromoteRequest) (*structs.DeploymentUpdateResponse, error) {
	_, d, job, err := w.activeDeployment(req.DeploymentID)
	if err != nil {
		return nil, err
	}
	eval := newEval(d, job, w.cfg.Clock.Now())
	index, err := w.cfg.Raft.UpdateDeploymentPromotion(&structs.ApplyDeploymentPromoteRequest{
		DeploymentPromoteRequest: *req, Eval: eval,
	})
	if err != nil {
		return nil, err
	}
	return response(eval, index, nil), nil
}

// Fail fails the deployment, reverting the job to its latest stable
// version when one of the deployment's groups auto-reverts.
func (w *Watcher) Fail(req *structs.DeploymentFailRequest) (*structs.DeploymentUpdateResponse, error) {
	store, d, job, err := w.activeDeployment(req.DeploymentID)
	if err != nil {
		return nil, err
	}
	now := w.cfg.Clock.Now()
	u := statusUpdate(d, structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedByUser)
	var revert *structs.Job
	for _, st := range d.TaskGroups {
		if st.AutoRevert {
			v := &view{d: d, job: job}
			if revert, u.StatusDescription, err = revertTarget(store, v, u.StatusDescription, now); err != nil {
				return nil, err
			}
			break
		}
	}
	eval := newEval(d, job, now)
	reverted := revertedVersion(revert) // before the write renumbers it
	index, err := w.cfg.Raft.UpdateDeploymentStatus(u, revert, eval)
	if err != nil {
		return nil, err
	}
	return response(eval, index, reverted), nil
}

// Pause pauses (Pause true) or resumes the deployment. Resuming writes an
// eval so the roll-out continues.
func (w *Watcher) Pause(req *structs.DeploymentPauseRequest) (*structs.DeploymentUpdateResponse, error) {
	_, d, job, err := w.activeDeployment(req.DeploymentID)
	if err != nil {
		return nil, err
	}
	u := statusUpdate(d, structs.DeploymentStatusPaused, structs.DeploymentStatusDescriptionPaused)
	var eval *structs.Evaluation
	if !req.Pause {
		u = statusUpdate(d, structs.DeploymentStatusRunning, structs.DeploymentStatusDescriptionRunning)
		eval = newEval(d, job, w.cfg.Clock.Now())
	}
	index, err := w.cfg.Raft.UpdateDeploymentStatus(u, nil, eval)
	if err != nil {
		return nil, err
	}
	return response(eval, index, nil), nil
}

// SetAllocHealth records an operator's health verdicts (the only ones a
// "manual" group gets), with an eval. An unhealthy verdict in a group
// without a progress deadline fails the deployment in the same entry,
// reverting the job when that group auto-reverts.
func (w *Watcher) SetAllocHealth(req *structs.DeploymentAllocHealthRequest) (*structs.DeploymentUpdateResponse, error) {
	store, d, job, err := w.activeDeployment(req.DeploymentID)
	if err != nil {
		return nil, err
	}
	if len(req.HealthyAllocationIDs)+len(req.UnhealthyAllocationIDs) == 0 {
		return nil, fmt.Errorf("deployment %q: no allocs to set the health of", d.ID)
	}
	now := w.cfg.Clock.Now()
	var fail *structs.DeploymentStatusUpdate
	revertWanted := false
	for _, id := range req.UnhealthyAllocationIDs {
		a, err := store.AllocByID(nil, id)
		if err != nil {
			return nil, err
		}
		if a == nil {
			continue // the state store names it in its error
		}
		if st, ok := d.TaskGroups[a.TaskGroup]; ok && st.ProgressDeadline == 0 {
			fail = statusUpdate(d, structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedAllocations)
			revertWanted = revertWanted || st.AutoRevert
		}
	}
	var revert *structs.Job
	if revertWanted {
		v := &view{d: d, job: job}
		if revert, fail.StatusDescription, err = revertTarget(store, v, fail.StatusDescription, now); err != nil {
			return nil, err
		}
	}
	eval := newEval(d, job, now)
	reverted := revertedVersion(revert)
	index, err := w.cfg.Raft.UpdateDeploymentAllocHealth(&structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: *req,
		Timestamp:                    now,
		DeploymentUpdate:             fail,
		Job:                          revert,
		Eval:                         eval,
	})
	if err != nil {
		return nil, err
	}
	return response(eval, index, reverted), nil
}

// revertedVersion is the version a revert goes back to, nil for none.
func revertedVersion(revert *structs.Job) *uint64 {
	if revert == nil {
		return nil
	}
	v := revert.Version
	return &v
}

func response(eval *structs.Evaluation, index uint64, reverted *uint64) *structs.DeploymentUpdateResponse {
	r := &structs.DeploymentUpdateResponse{DeploymentModifyIndex: index, RevertedJobVersion: reverted}
	r.Index = index
	if eval != nil {
		r.EvalID, r.EvalCreateIndex = eval.ID, index
	}
	return r
}
