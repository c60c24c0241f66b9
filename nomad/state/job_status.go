package state

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// jobStatus computes a job's status from state:
//
//   - system, periodic and parameterized jobs are running until stopped,
//     then dead;
//   - otherwise running while any allocation of this job instance is not
//     terminal or any of its deployments is active;
//   - else pending while any evaluation is not terminal;
//   - else dead if it ever had an allocation or evaluation (or evaluations
//     are being garbage collected), pending if it is brand new.
//
// Allocations and deployments left by an earlier, purged job with the
// same ID (another CreateIndex) do not count.
func jobStatus(txn *memdb.Txn, job *structs.Job, evalDelete bool) (string, error) {
	if job.Type == structs.JobTypeSystem || job.IsPeriodic() || job.IsParameterized() {
		if job.Stop {
			return structs.JobStatusDead, nil
		}
		return structs.JobStatusRunning, nil
	}

	allocs, err := get(txn, nil, TableAllocs, indexJob, job.Namespace, job.ID)
	if err != nil {
		return "", err
	}
	hasAlloc := false
	for raw := allocs.Next(); raw != nil; raw = allocs.Next() {
		a := raw.(*structs.Allocation)
		if a.Job != nil && a.Job.CreateIndex != job.CreateIndex {
			continue
		}
		hasAlloc = true
		if !a.TerminalStatus() {
			return structs.JobStatusRunning, nil
		}
	}

	deployments, err := get(txn, nil, TableDeployment, indexJob, job.Namespace, job.ID)
	if err != nil {
		return "", err
	}
	for raw := deployments.Next(); raw != nil; raw = deployments.Next() {
		d := raw.(*structs.Deployment)
		if d.JobCreateIndex == job.CreateIndex && d.Active() {
			return structs.JobStatusRunning, nil
		}
	}

	evals, err := evalsByJob(txn, nil, job.Namespace, job.ID)
	if err != nil {
		return "", err
	}
	for _, e := range evals {
		if !e.TerminalStatus() {
			return structs.JobStatusPending, nil
		}
	}
	if evalDelete || hasAlloc || len(evals) > 0 {
		return structs.JobStatusDead, nil
	}
	return structs.JobStatusPending, nil
}

// jobStatusUpdates collects the jobs whose status a write may have
// changed. The value, when not zero, is the CreateIndex of the job
// instance a live allocation was just written for: that instance is
// running without looking further.
type jobStatusUpdates map[structs.NamespacedID]uint64

func (u jobStatusUpdates) add(ns, id string) {
	k := structs.NamespacedID{Namespace: ns, ID: id}
	if _, ok := u[k]; !ok {
		u[k] = 0
	}
}

func (u jobStatusUpdates) addAlloc(a *structs.Allocation) {
	k := a.NamespacedJobID()
	if !a.TerminalStatus() && a.Job != nil && a.Job.CreateIndex > u[k] {
		u[k] = a.Job.CreateIndex
		return
	}
	u.add(a.Namespace, a.JobID)
}

// setJobStatuses recomputes the status of each job in updates and writes
// those that changed. eventType names the write that caused the change,
// as the event stream reports it.
func (tx *Txn) setJobStatuses(updates jobStatusUpdates, evalDelete bool, eventType string) error {
	keys := make([]structs.NamespacedID, 0, len(updates))
	for k := range updates {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b structs.NamespacedID) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.ID, b.ID))
	})
	for _, k := range keys {
		job, err := jobByID(tx.txn, nil, k.Namespace, k.ID)
		if err != nil {
			return err
		}
		if job == nil {
			continue
		}
		status := structs.JobStatusRunning
		if live := updates[k]; live == 0 || live != job.CreateIndex {
			if status, err = jobStatus(tx.txn, job, evalDelete); err != nil {
				return err
			}
		}
		if status == job.Status {
			continue
		}
		// A shallow copy is enough: everything below the top level is
		// shared, immutable, and unchanged.
		updated := *job
		updated.Status = status
		updated.ModifyIndex = tx.index
		if err := tx.insert(TableJobs, &updated); err != nil {
			return fmt.Errorf("job %q in namespace %q: %w", job.ID, job.Namespace, err)
		}
		if err := tx.updateParentChildren(&updated, job.Status, status); err != nil {
			return err
		}
		tx.emitJob(eventType, &updated)
	}
	return nil
}

// updateParentChildren moves a child job (dispatched or launched by a
// periodic template) from one status bucket of its parent's summary to
// another; "" stands for "not counted" (new or purged child).
func (tx *Txn) updateParentChildren(child *structs.Job, oldStatus, newStatus string) error {
	if child.ParentID == "" || oldStatus == newStatus {
		return nil
	}
	summary, err := tx.currentSummary(child.Namespace, child.ParentID)
	if err != nil || summary == nil {
		return err
	}
	return tx.writeSummary(summary, func(s *structs.JobSummary) {
		if s.Children == nil {
			s.Children = &structs.JobChildrenSummary{}
		}
		countChild(s.Children, oldStatus, -1)
		countChild(s.Children, newStatus, +1)
	})
}

func countChild(c *structs.JobChildrenSummary, status string, delta int64) {
	var p *int64
	switch status {
	case structs.JobStatusPending:
		p = &c.Pending
	case structs.JobStatusRunning:
		p = &c.Running
	case structs.JobStatusDead:
		p = &c.Dead
	default:
		return
	}
	if *p += delta; *p < 0 {
		*p = 0
	}
}
