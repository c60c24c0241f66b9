package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// ---- reads -----------------------------------------------------------------

func jobSummaryByID(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string) (*structs.JobSummary, error) {
	raw, err := first(txn, ws, TableJobSummary, indexID, namespace, jobID)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.JobSummary), nil
}

// JobSummaryByID returns a job's summary, or nil.
func (s *StateStore) JobSummaryByID(ws memdb.WatchSet, namespace, jobID string) (*structs.JobSummary, error) {
	return jobSummaryByID(s.db.Txn(false), ws, namespace, jobID)
}

// JobSummaries returns every job summary, sorted by namespace and job.
func (s *StateStore) JobSummaries(ws memdb.WatchSet) ([]*structs.JobSummary, error) {
	it, err := get(s.db.Txn(false), ws, TableJobSummary, indexID)
	if err != nil {
		return nil, err
	}
	return collect[structs.JobSummary](it, nil), nil
}

// ---- maintenance -------------------------------------------------------------

func summaryKey(s *structs.JobSummary) structs.NamespacedID {
	return structs.NamespacedID{Namespace: s.Namespace, ID: s.JobID}
}

// currentSummary returns a job's summary as this transaction sees it, or
// nil. It must not be modified; use writeSummary.
func (tx *Txn) currentSummary(namespace, jobID string) (*structs.JobSummary, error) {
	if s, ok := tx.summaries[structs.NamespacedID{Namespace: namespace, ID: jobID}]; ok {
		return s, nil
	}
	return jobSummaryByID(tx.txn, nil, namespace, jobID)
}

// writeSummary applies change to summary s, as returned by
// currentSummary, and writes it, copying it first unless this transaction
// already owns it.
func (tx *Txn) writeSummary(s *structs.JobSummary, change func(*structs.JobSummary)) error {
	k := summaryKey(s)
	owned := tx.summaries[k] == s
	before := summaryCounts(s)
	if !owned {
		s = s.Copy()
	}
	change(s)
	tx.backlog.add(before, -1)
	tx.backlog.add(summaryCounts(s), +1)
	s.ModifyIndex = tx.index
	if owned {
		tx.touch(TableJobSummary)
		return nil
	}
	if err := tx.insert(TableJobSummary, s); err != nil {
		return fmt.Errorf("summary of job %q: %w", s.JobID, err)
	}
	if tx.summaries == nil {
		tx.summaries = make(map[structs.NamespacedID]*structs.JobSummary)
	}
	tx.summaries[k] = s
	return nil
}

// updateSummaryWithJob creates the summary of a new job, or adds the task
// groups a new version introduces. Groups a version drops are kept: their
// allocations still exist and are still counted.
func (tx *Txn) updateSummaryWithJob(job *structs.Job) error {
	existing, err := tx.currentSummary(job.Namespace, job.ID)
	if err != nil {
		return err
	}
	if existing == nil {
		existing = &structs.JobSummary{
			JobID:       job.ID,
			Namespace:   job.Namespace,
			Summary:     make(map[string]structs.TaskGroupSummary, len(job.TaskGroups)),
			Children:    &structs.JobChildrenSummary{},
			CreateIndex: tx.index,
		}
	} else {
		missing := false
		for _, tg := range job.TaskGroups {
			if _, ok := existing.Summary[tg.Name]; !ok {
				missing = true
			}
		}
		if !missing {
			return nil
		}
	}
	return tx.writeSummary(existing, func(s *structs.JobSummary) {
		if s.Summary == nil {
			s.Summary = make(map[string]structs.TaskGroupSummary, len(job.TaskGroups))
		}
		for _, tg := range job.TaskGroups {
			if _, ok := s.Summary[tg.Name]; !ok {
				s.Summary[tg.Name] = structs.TaskGroupSummary{}
			}
		}
	})
}

// updateSummaryWithAlloc moves an allocation between the client-status
// counters of its job's summary: a new pending allocation leaves Queued
// for Starting; a status change leaves the old counter for the new one.
// Allocations of another instance of the job (purged and registered
// again, so another CreateIndex) are not counted.
func (tx *Txn) updateSummaryWithAlloc(alloc, existing *structs.Allocation) error {
	if alloc.Job == nil {
		return nil
	}
	summary, err := tx.currentSummary(alloc.Namespace, alloc.JobID)
	if err != nil {
		return err
	}
	if summary == nil {
		job, err := jobByID(tx.txn, nil, alloc.Namespace, alloc.JobID)
		if err != nil || job == nil {
			return err // purged job: nothing to count
		}
		return fmt.Errorf("alloc %q: job %q in namespace %q has no summary", alloc.ID, alloc.JobID, alloc.Namespace)
	}
	if summary.CreateIndex != alloc.Job.CreateIndex {
		return nil
	}
	tg, ok := summary.Summary[alloc.TaskGroup]
	if !ok {
		return fmt.Errorf("alloc %q: job %q has no task group %q in its summary", alloc.ID, alloc.JobID, alloc.TaskGroup)
	}

	switch {
	case existing == nil:
		if alloc.ClientStatus != structs.AllocClientStatusPending {
			tx.logger.Warn("new allocation with a client status other than pending",
				"alloc_id", alloc.ID, "client_status", alloc.ClientStatus)
			return nil
		}
		tg.Starting++
		if tg.Queued > 0 {
			tg.Queued--
		}
	case existing.ClientStatus != alloc.ClientStatus:
		countAlloc(&tg, alloc.ClientStatus, +1)
		countAlloc(&tg, existing.ClientStatus, -1)
	default:
		return nil
	}

	return tx.writeSummary(summary, func(s *structs.JobSummary) { s.Summary[alloc.TaskGroup] = tg })
}

func countAlloc(tg *structs.TaskGroupSummary, clientStatus string, delta int) {
	var p *int
	switch clientStatus {
	case structs.AllocClientStatusPending:
		p = &tg.Starting
	case structs.AllocClientStatusRunning:
		p = &tg.Running
	case structs.AllocClientStatusComplete:
		p = &tg.Complete
	case structs.AllocClientStatusFailed:
		p = &tg.Failed
	case structs.AllocClientStatusLost:
		p = &tg.Lost
	case structs.AllocClientStatusUnknown:
		p = &tg.Unknown
	default:
		return
	}
	if *p += delta; *p < 0 {
		*p = 0
	}
}

// updateSummaryWithEval copies the scheduler's count of allocations it
// could not place yet (QueuedAllocations) into the job's summary.
func (tx *Txn) updateSummaryWithEval(eval *structs.Evaluation) error {
	if len(eval.QueuedAllocations) == 0 {
		return nil
	}
	summary, err := tx.currentSummary(eval.Namespace, eval.JobID)
	if err != nil || summary == nil {
		return err
	}
	changed := false
	for _, name := range sortedKeys(eval.QueuedAllocations) {
		tg, ok := summary.Summary[name]
		if !ok {
			tx.logger.Warn("eval reports queued allocations of an unknown task group",
				"eval_id", eval.ID, "job_id", eval.JobID, "task_group", name)
			continue
		}
		if tg.Queued != eval.QueuedAllocations[name] {
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return tx.writeSummary(summary, func(s *structs.JobSummary) {
		for name, n := range eval.QueuedAllocations {
			if tg, ok := s.Summary[name]; ok {
				tg.Queued = n
				s.Summary[name] = tg
			}
		}
	})
}

// ReconcileJobSummaries rebuilds every job summary from the allocations
// and child jobs in state, repairing counters an older bug may have
// skewed. Queued counts, which only evaluations know, are kept.
func (tx *Txn) ReconcileJobSummaries() error {
	tx.touch(TableJobSummary)
	it, err := tx.txn.Get(TableJobs, indexID)
	if err != nil {
		return fmt.Errorf("reading jobs: %w", err)
	}
	jobs := collect[structs.Job](it, nil)

	children := make(map[structs.NamespacedID]*structs.JobChildrenSummary)
	for _, j := range jobs {
		if j.ParentID == "" {
			continue
		}
		k := structs.NamespacedID{Namespace: j.Namespace, ID: j.ParentID}
		if children[k] == nil {
			children[k] = &structs.JobChildrenSummary{}
		}
		countChild(children[k], j.Status, +1)
	}

	for _, job := range jobs {
		old, err := tx.currentSummary(job.Namespace, job.ID)
		if err != nil {
			return err
		}
		s := &structs.JobSummary{
			JobID:       job.ID,
			Namespace:   job.Namespace,
			Summary:     make(map[string]structs.TaskGroupSummary, len(job.TaskGroups)),
			Children:    children[job.NamespacedID()],
			CreateIndex: job.CreateIndex,
			ModifyIndex: tx.index,
		}
		if s.Children == nil {
			s.Children = &structs.JobChildrenSummary{}
		}
		for _, tg := range job.TaskGroups {
			s.Summary[tg.Name] = structs.TaskGroupSummary{}
		}
		if old != nil {
			for name, tg := range old.Summary {
				n := s.Summary[name]
				n.Queued = tg.Queued
				s.Summary[name] = n
			}
		}
		allocs, err := tx.txn.Get(TableAllocs, indexJob, job.Namespace, job.ID)
		if err != nil {
			return fmt.Errorf("reading allocs of job %q: %w", job.ID, err)
		}
		for raw := allocs.Next(); raw != nil; raw = allocs.Next() {
			a := raw.(*structs.Allocation)
			if a.Job == nil || a.Job.CreateIndex != job.CreateIndex {
				continue
			}
			tg := s.Summary[a.TaskGroup]
			countAlloc(&tg, a.ClientStatus, +1)
			s.Summary[a.TaskGroup] = tg
		}
		if err := tx.insert(TableJobSummary, s); err != nil {
			return fmt.Errorf("summary of job %q: %w", job.ID, err)
		}
		tx.countSummary(old, s)
		if tx.summaries == nil {
			tx.summaries = make(map[structs.NamespacedID]*structs.JobSummary)
		}
		tx.summaries[summaryKey(s)] = s
	}
	return nil
}

// ReconcileJobSummaries rebuilds every job summary at index; see
// Txn.ReconcileJobSummaries.
func (s *StateStore) ReconcileJobSummaries(index uint64) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.ReconcileJobSummaries() })
}
