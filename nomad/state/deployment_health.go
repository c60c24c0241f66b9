package state

import (
	"fmt"
	"slices"

	"github.com/opennomad/nomad/structs"
)

// Writes of the deployment watcher and of operators acting on a
// deployment: alloc health verdicts and canary promotion.

// UpdateDeploymentAllocHealth records health verdicts on allocs of an
// active deployment, then applies what the same Raft entry carries: a
// status update of the deployment (failing it), a job version to register
// (the stable version an auto-revert goes back to) and an eval.
//
// Each alloc's DeploymentStatus gets Healthy, the request's Timestamp and
// this index (Canary is kept); the deployment's healthy and unhealthy
// counts and its progress deadline follow. AllocModifyIndex does not move:
// health is news for the servers, not for the alloc's client. Every alloc
// must exist and belong to the deployment, and none may be named in both
// lists; otherwise nothing is written.
func (tx *Txn) UpdateDeploymentAllocHealth(req *structs.ApplyDeploymentAllocHealthRequest) error {
	tx.touch(TableDeployment)
	tx.touch(TableAllocs)
	if req == nil {
		return fmt.Errorf("update deployment alloc health: request is nil")
	}
	d, err := deploymentByID(tx.txn, nil, req.DeploymentID)
	if err != nil {
		return err
	}
	if d == nil {
		return fmt.Errorf("deployment %q: %w", req.DeploymentID, structs.ErrUnknownDeployment)
	}
	if !d.Active() {
		return fmt.Errorf("deployment %q is %s: alloc health can only be set on an active deployment", d.ID, d.Status)
	}
	for _, id := range req.HealthyAllocationIDs {
		if slices.Contains(req.UnhealthyAllocationIDs, id) {
			return fmt.Errorf("deployment %q: alloc %q is listed as both healthy and unhealthy", d.ID, id)
		}
	}
	jobs := make(jobStatusUpdates)
	set := func(id string, healthy bool) error {
		existing, err := allocByID(tx.txn, nil, id)
		if err != nil {
			return err
		}
		if existing == nil {
			return fmt.Errorf("deployment %q: alloc %q: %w", d.ID, id, structs.ErrUnknownAlloc)
		}
		if existing.DeploymentID != d.ID {
			return fmt.Errorf("deployment %q: alloc %q is not part of the deployment", d.ID, id)
		}
		c := *existing
		var ds structs.AllocDeploymentStatus
		if existing.DeploymentStatus != nil {
			ds = *existing.DeploymentStatus
		}
		h := healthy
		ds.Healthy = &h
		ds.Timestamp = req.Timestamp
		ds.ModifyIndex = tx.index
		c.DeploymentStatus = &ds
		c.ModifyIndex = tx.index
		if err := tx.updateDeploymentWithAlloc(&c, existing); err != nil {
			return err
		}
		if err := tx.insertAlloc(&c, existing); err != nil {
			return fmt.Errorf("alloc %q: %w", c.ID, err)
		}
		tx.emitAlloc(structs.TypeDeploymentAllocHealth, &c)
		jobs.addAlloc(&c)
		return nil
	}
	for _, id := range req.HealthyAllocationIDs {
		if err := set(id, true); err != nil {
			return err
		}
	}
	for _, id := range req.UnhealthyAllocationIDs {
		if err := set(id, false); err != nil {
			return err
		}
	}
	if updated, err := deploymentByID(tx.txn, nil, d.ID); err != nil {
		return err
	} else if updated != d {
		tx.emitDeployment(structs.TypeDeploymentAllocHealth, updated)
	}
	if err := tx.setJobStatuses(jobs, false, structs.TypeDeploymentAllocHealth); err != nil {
		return err
	}
	return tx.applyDeploymentFollowUps(req.DeploymentUpdate, req.Job, req.Eval, structs.TypeDeploymentAllocHealth)
}

// UpdateDeploymentAllocHealthBatch applies the requests of a
// DeploymentAllocHealthBatch entry, in order, each exactly as
// UpdateDeploymentAllocHealth applies it (a request sees what those
// before it wrote). An entry without requests is refused, and so is the
// whole entry when one request is: the error names the request, and the
// caller's transaction, aborted, writes nothing.
func (tx *Txn) UpdateDeploymentAllocHealthBatch(reqs []*structs.ApplyDeploymentAllocHealthRequest) error {
	if len(reqs) == 0 {
		return fmt.Errorf("update deployment alloc health batch: no requests")
	}
	for i, req := range reqs {
		if err := tx.UpdateDeploymentAllocHealth(req); err != nil {
			return fmt.Errorf("alloc health request %d of %d: %w", i+1, len(reqs), err)
		}
	}
	return nil
}

// applyDeploymentFollowUps applies what a deployment entry carries besides
// its main change, in this order: the deployment's new status, the job
// version to register, the eval.
func (tx *Txn) applyDeploymentFollowUps(u *structs.DeploymentStatusUpdate, job *structs.Job, eval *structs.Evaluation, eventType string) error {
	if u != nil {
		if err := tx.updateDeploymentStatus(u, eventType); err != nil {
			return err
		}
	}
	if job != nil {
		if err := tx.UpsertJob(job); err != nil {
			return err
		}
	}
	if eval == nil {
		return nil
	}
	return tx.UpsertEvals([]*structs.Evaluation{eval})
}

// UpdateDeploymentPromotion promotes the canaries of an active deployment
// (of every group with All, else of the named groups) and writes the eval
// that places the rest of the roll-out. A group is promoted only when at
// least DesiredCanaries of its placed canaries are healthy; one that is
// not fails the whole promotion, as does a promotion with no canaries to
// promote. A deployment waiting for promotion gets back its running
// description.
func (tx *Txn) UpdateDeploymentPromotion(req *structs.ApplyDeploymentPromoteRequest) error {
	tx.touch(TableDeployment)
	if req == nil {
		return fmt.Errorf("promote deployment: request is nil")
	}
	d, err := deploymentByID(tx.txn, nil, req.DeploymentID)
	if err != nil {
		return err
	}
	if d == nil {
		return fmt.Errorf("deployment %q: %w", req.DeploymentID, structs.ErrUnknownDeployment)
	}
	if !d.Active() {
		return fmt.Errorf("deployment %q is %s: can not promote a terminal deployment", d.ID, d.Status)
	}
	for _, g := range req.Groups {
		if _, ok := d.TaskGroups[g]; !ok {
			return fmt.Errorf("deployment %q has no task group %q", d.ID, g)
		}
	}
	c := d.Copy()
	promoted := 0
	for _, name := range sortedKeys(c.TaskGroups) {
		st := c.TaskGroups[name]
		if !req.All && !slices.Contains(req.Groups, name) {
			continue
		}
		if st.DesiredCanaries == 0 || st.Promoted {
			continue
		}
		healthy := 0
		for _, id := range st.PlacedCanaries {
			a, err := allocByID(tx.txn, nil, id)
			if err != nil {
				return err
			}
			if a != nil && !a.TerminalStatus() && a.DeploymentStatus.IsHealthy() {
				healthy++
			}
		}
		if healthy < st.DesiredCanaries {
			return fmt.Errorf("deployment %q: task group %q has %d/%d healthy allocations", d.ID, name, healthy, st.DesiredCanaries)
		}
		st.Promoted = true
		promoted++
	}
	if promoted == 0 {
		return fmt.Errorf("deployment %q has no canaries to promote", d.ID)
	}
	switch c.StatusDescription {
	case structs.DeploymentStatusDescriptionRunningNeedsPromotion, structs.DeploymentStatusDescriptionRunningAutoPromotion:
		c.StatusDescription = structs.DeploymentStatusDescriptionRunning
	}
	c.ModifyIndex = tx.index
	if err := tx.insert(TableDeployment, c); err != nil {
		return fmt.Errorf("deployment %q: %w", c.ID, err)
	}
	tx.emitDeployment(structs.TypeDeploymentPromotion, c)
	if req.Eval == nil {
		return nil
	}
	return tx.UpsertEvals([]*structs.Evaluation{req.Eval})
}

// ---- store wrappers ----------------------------------------------------------

// UpdateDeploymentAllocHealth records health verdicts at index; see
// Txn.UpdateDeploymentAllocHealth.
func (s *StateStore) UpdateDeploymentAllocHealth(index uint64, req *structs.ApplyDeploymentAllocHealthRequest) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpdateDeploymentAllocHealth(req) })
}

// UpdateDeploymentAllocHealthBatch records the health verdicts of many
// requests at index; see Txn.UpdateDeploymentAllocHealthBatch.
func (s *StateStore) UpdateDeploymentAllocHealthBatch(index uint64, reqs []*structs.ApplyDeploymentAllocHealthRequest) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpdateDeploymentAllocHealthBatch(reqs) })
}

// UpdateDeploymentPromotion promotes canaries at index; see
// Txn.UpdateDeploymentPromotion.
func (s *StateStore) UpdateDeploymentPromotion(index uint64, req *structs.ApplyDeploymentPromoteRequest) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpdateDeploymentPromotion(req) })
}
