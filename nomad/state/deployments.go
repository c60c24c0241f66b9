package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// ---- reads -----------------------------------------------------------------

func deploymentByID(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.Deployment, error) {
	raw, err := first(txn, ws, TableDeployment, indexID, id)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.Deployment), nil
}

// DeploymentByID returns the deployment or nil.
func (s *StateStore) DeploymentByID(ws memdb.WatchSet, id string) (*structs.Deployment, error) {
	return deploymentByID(s.db.Txn(false), ws, id)
}

// Deployments returns the deployments of a namespace, grouped by job, or
// of every namespace for "*", sorted by ID.
func (s *StateStore) Deployments(ws memdb.WatchSet, namespace string) ([]*structs.Deployment, error) {
	txn := s.db.Txn(false)
	if namespace == structs.AllNamespaces {
		it, err := get(txn, ws, TableDeployment, indexID)
		if err != nil {
			return nil, err
		}
		return collect[structs.Deployment](it, nil), nil
	}
	it, err := get(txn, ws, TableDeployment, indexJob+"_prefix", namespace, "")
	if err != nil {
		return nil, err
	}
	return collect[structs.Deployment](it, nil), nil
}

// DeploymentsByIDPrefix returns the deployments of a namespace ("*" for
// all) whose ID starts with prefix.
func (s *StateStore) DeploymentsByIDPrefix(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Deployment, error) {
	it, err := get(s.db.Txn(false), ws, TableDeployment, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return collect(it, func(d *structs.Deployment) bool {
		return namespace == structs.AllNamespaces || d.Namespace == namespace
	}), nil
}

// DeploymentsByJobID returns a job's deployments. Unless all, only those
// of the job instance currently registered are returned, and none when
// the job does not exist.
func (s *StateStore) DeploymentsByJobID(ws memdb.WatchSet, namespace, jobID string, all bool) ([]*structs.Deployment, error) {
	txn := s.db.Txn(false)
	var job *structs.Job
	if !all {
		var err error
		if job, err = jobByID(txn, ws, namespace, jobID); err != nil || job == nil {
			return nil, err
		}
	}
	it, err := get(txn, ws, TableDeployment, indexJob, namespace, jobID)
	if err != nil {
		return nil, err
	}
	return collect(it, func(d *structs.Deployment) bool {
		return all || d.JobCreateIndex == job.CreateIndex
	}), nil
}

func latestDeploymentByJobID(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string) (*structs.Deployment, error) {
	it, err := get(txn, ws, TableDeployment, indexJob, namespace, jobID)
	if err != nil {
		return nil, err
	}
	var latest *structs.Deployment
	for raw := it.Next(); raw != nil; raw = it.Next() {
		d := raw.(*structs.Deployment)
		if latest == nil || d.CreateIndex > latest.CreateIndex {
			latest = d
		}
	}
	return latest, nil
}

// LatestDeploymentByJobID returns the job's most recently created
// deployment, or nil.
func (s *StateStore) LatestDeploymentByJobID(ws memdb.WatchSet, namespace, jobID string) (*structs.Deployment, error) {
	return latestDeploymentByJobID(s.db.Txn(false), ws, namespace, jobID)
}

// ---- writes ----------------------------------------------------------------

// UpsertDeployment creates or replaces a deployment. CreateIndex is set
// once; ModifyIndex moves. The job's status is recomputed, since an
// active deployment keeps a job running.
func (tx *Txn) UpsertDeployment(d *structs.Deployment) error {
	return tx.upsertDeployment(d, structs.TypeDeploymentUpdate)
}

func (tx *Txn) upsertDeployment(d *structs.Deployment, eventType string) error {
	tx.touch(TableDeployment)
	if d == nil {
		return fmt.Errorf("upsert deployment: deployment is nil")
	}
	if d.ID == "" {
		return fmt.Errorf("upsert deployment: ID is required")
	}
	if d.JobID == "" || d.Namespace == "" {
		return fmt.Errorf("deployment %q: JobID and Namespace are required", d.ID)
	}
	existing, err := deploymentByID(tx.txn, nil, d.ID)
	if err != nil {
		return err
	}
	if existing != nil {
		d.CreateIndex = existing.CreateIndex
	} else {
		d.CreateIndex = tx.index
	}
	d.ModifyIndex = tx.index
	tx.internDeployment(d, existing)
	if err := tx.insert(TableDeployment, d); err != nil {
		return fmt.Errorf("deployment %q: %w", d.ID, err)
	}
	tx.emitDeployment(eventType, d)
	return tx.setJobStatuses(jobStatusUpdates{{Namespace: d.Namespace, ID: d.JobID}: 0}, false, eventType)
}

// UpdateDeploymentStatus sets a deployment's status and description. A
// deployment that succeeded marks its job version stable.
func (tx *Txn) UpdateDeploymentStatus(u *structs.DeploymentStatusUpdate) error {
	return tx.updateDeploymentStatus(u, structs.TypeDeploymentUpdate)
}

func (tx *Txn) updateDeploymentStatus(u *structs.DeploymentStatusUpdate, eventType string) error {
	tx.touch(TableDeployment)
	if u == nil {
		return fmt.Errorf("update deployment status: update is nil")
	}
	d, err := deploymentByID(tx.txn, nil, u.DeploymentID)
	if err != nil {
		return err
	}
	if d == nil {
		return fmt.Errorf("update status of deployment %q: deployment not found", u.DeploymentID)
	}
	if !d.Active() {
		// A deployment that ended (failed, successful, cancelled) stays
		// ended. Updates are decided on snapshots: the deployment
		// watcher marking a deployment "running, needs promotion" may
		// have read it just before an operator failed it, and its update
		// must not bring the failed deployment back to life.
		return nil
	}
	c := *d
	c.Status = u.Status
	c.StatusDescription = u.StatusDescription
	c.ModifyIndex = tx.index
	if t := tx.intern; t != nil {
		t.set(&c.Status)
		t.set(&c.StatusDescription)
	}
	if err := tx.insert(TableDeployment, &c); err != nil {
		return fmt.Errorf("deployment %q: %w", c.ID, err)
	}
	tx.emitDeployment(eventType, &c)
	if c.Status == structs.DeploymentStatusSuccessful {
		if err := tx.UpdateJobStability(c.Namespace, c.JobID, c.JobVersion, true); err != nil {
			return err
		}
	}
	return tx.setJobStatuses(jobStatusUpdates{{Namespace: c.Namespace, ID: c.JobID}: 0}, false, eventType)
}

// DeleteDeployments removes deployments (garbage collection); unknown IDs
// are skipped.
func (tx *Txn) DeleteDeployments(ids []string) error {
	tx.touch(TableDeployment)
	for _, id := range ids {
		d, err := deploymentByID(tx.txn, nil, id)
		if err != nil {
			return err
		}
		if d == nil {
			continue
		}
		if err := tx.delete(TableDeployment, d); err != nil {
			return fmt.Errorf("deployment %q: %w", id, err)
		}
	}
	return nil
}

func (tx *Txn) emitDeployment(eventType string, d *structs.Deployment) {
	tx.emit(structs.Event{
		Topic:      structs.TopicDeployment,
		Type:       eventType,
		Key:        d.ID,
		Namespace:  d.Namespace,
		FilterKeys: filterKeys(d.JobID),
		Payload:    &structs.DeploymentEvent{Deployment: d},
	})
}

// ---- store wrappers ----------------------------------------------------------

// UpsertDeployment writes a deployment at index; see Txn.UpsertDeployment.
func (s *StateStore) UpsertDeployment(index uint64, d *structs.Deployment) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertDeployment(d) })
}

// UpdateDeploymentStatus sets a deployment's status at index; see
// Txn.UpdateDeploymentStatus.
func (s *StateStore) UpdateDeploymentStatus(index uint64, u *structs.DeploymentStatusUpdate) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpdateDeploymentStatus(u) })
}

// DeleteDeployments removes deployments at index; see Txn.DeleteDeployments.
func (s *StateStore) DeleteDeployments(index uint64, ids []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteDeployments(ids) })
}
