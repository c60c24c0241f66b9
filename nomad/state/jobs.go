package state

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// ---- reads -----------------------------------------------------------------

func jobByID(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string) (*structs.Job, error) {
	raw, err := first(txn, ws, TableJobs, indexID, namespace, id)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.Job), nil
}

// JobByID returns the job or nil when it does not exist.
func (s *StateStore) JobByID(ws memdb.WatchSet, namespace, id string) (*structs.Job, error) {
	return jobByID(s.db.Txn(false), ws, namespace, id)
}

// Jobs returns the jobs of a namespace (every namespace for "*"), sorted
// by namespace then ID.
func (s *StateStore) Jobs(ws memdb.WatchSet, namespace string) ([]*structs.Job, error) {
	return s.JobsByIDPrefix(ws, namespace, "")
}

// JobsByIDPrefix returns the jobs of a namespace ("*" for all) whose ID
// starts with prefix.
func (s *StateStore) JobsByIDPrefix(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Job, error) {
	txn := s.db.Txn(false)
	if namespace == structs.AllNamespaces {
		it, err := get(txn, ws, TableJobs, indexID)
		if err != nil {
			return nil, err
		}
		return collect(it, func(j *structs.Job) bool { return strings.HasPrefix(j.ID, prefix) }), nil
	}
	it, err := get(txn, ws, TableJobs, indexID+"_prefix", namespace, prefix)
	if err != nil {
		return nil, err
	}
	return collect[structs.Job](it, nil), nil
}

// JobsByType returns every system or sysbatch job (jobType says which)
// in all namespaces. Other types are not indexed, and asking for one is
// an error rather than an empty answer.
func (s *StateStore) JobsByType(ws memdb.WatchSet, jobType string) ([]*structs.Job, error) {
	if nodeScopedJobType(&structs.Job{Type: jobType}) == "" {
		return nil, fmt.Errorf("listing jobs of type %q: only system and sysbatch jobs are listed by type: %w", jobType, structs.ErrInvalid)
	}
	it, err := get(s.db.Txn(false), ws, TableJobs, "type", jobType)
	if err != nil {
		return nil, err
	}
	return collect[structs.Job](it, nil), nil
}

// GCableJobs returns the jobs the garbage collector may purge.
func (s *StateStore) GCableJobs(ws memdb.WatchSet) ([]*structs.Job, error) {
	it, err := get(s.db.Txn(false), ws, TableJobs, "gc", true)
	if err != nil {
		return nil, err
	}
	return collect[structs.Job](it, nil), nil
}

// PeriodicJobs returns the periodic templates.
func (s *StateStore) PeriodicJobs(ws memdb.WatchSet) ([]*structs.Job, error) {
	it, err := get(s.db.Txn(false), ws, TableJobs, "periodic", true)
	if err != nil {
		return nil, err
	}
	return collect[structs.Job](it, nil), nil
}

// jobVersions returns the stored versions of a job, oldest first.
func jobVersions(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string) ([]*structs.Job, error) {
	// Both arguments but the last are exact; the ID is a prefix scan, so
	// "web" would also see "web-2": keep exact matches only.
	it, err := get(txn, ws, TableJobVersion, indexID+"_prefix", namespace, id)
	if err != nil {
		return nil, err
	}
	return collect(it, func(j *structs.Job) bool { return j.ID == id }), nil
}

// JobVersionsByID returns the stored versions of a job, newest first.
func (s *StateStore) JobVersionsByID(ws memdb.WatchSet, namespace, id string) ([]*structs.Job, error) {
	all, err := jobVersions(s.db.Txn(false), ws, namespace, id)
	if err != nil {
		return nil, err
	}
	slices.Reverse(all)
	return all, nil
}

func jobByIDAndVersion(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string, version uint64) (*structs.Job, error) {
	raw, err := first(txn, ws, TableJobVersion, indexID, namespace, id, version)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.Job), nil
}

// JobByIDAndVersion returns one stored version of a job, or nil.
func (s *StateStore) JobByIDAndVersion(ws memdb.WatchSet, namespace, id string, version uint64) (*structs.Job, error) {
	return jobByIDAndVersion(s.db.Txn(false), ws, namespace, id, version)
}

// ---- writes ----------------------------------------------------------------

// UpsertJob registers a job or a new version of it.
//
// A new job gets CreateIndex, ModifyIndex and JobModifyIndex set to the
// transaction's index. For an existing job, a submission whose spec is
// unchanged (structs.Job.SpecChanged) writes nothing; otherwise the job
// keeps its CreateIndex, JobModifyIndex moves to this index, and Version
// becomes the stored version + 1 (or the submitted one if higher).
// SubmitTime is kept as submitted. The job's status is computed, its
// summary gains any new task group, the version is recorded and old
// versions beyond structs.JobTrackedVersions are dropped (the newest
// stable one is kept). Periodic launches are recorded (see
// recordPeriodicLaunch).
func (tx *Txn) UpsertJob(job *structs.Job) error {
	tx.touch(TableJobs)
	if job == nil {
		return fmt.Errorf("upsert job: job is nil")
	}
	if job.ID == "" {
		return fmt.Errorf("upsert job: ID is required")
	}
	if job.Namespace == "" {
		return fmt.Errorf("job %q: Namespace is required", job.ID)
	}
	if err := nilJobParts(job); err != nil {
		return err
	}
	existing, err := jobByID(tx.txn, nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	oldStatus := ""
	if existing != nil {
		if !existing.SpecChanged(job) {
			return nil
		}
		oldStatus = existing.Status
		job.CreateIndex = existing.CreateIndex
		if job.Version <= existing.Version {
			job.Version = existing.Version + 1
		}
	} else {
		job.CreateIndex = tx.index
	}
	job.ModifyIndex = tx.index
	job.JobModifyIndex = tx.index
	setScalingPolicyIndexes(job, existing, tx.index)
	// A new version starts untagged: a tag names one version only.
	job.VersionTag = nil
	if job.Status, err = jobStatus(tx.txn, job, false); err != nil {
		return err
	}

	if err := tx.updateSummaryWithJob(job); err != nil {
		return err
	}
	tx.internJob(job)
	if err := tx.insert(TableJobs, job); err != nil {
		return fmt.Errorf("job %q in namespace %q: %w", job.ID, job.Namespace, err)
	}
	if err := tx.upsertJobVersion(job); err != nil {
		return err
	}
	if err := tx.updateParentChildren(job, oldStatus, job.Status); err != nil {
		return err
	}
	if err := tx.recordPeriodicLaunch(job, existing == nil); err != nil {
		return err
	}
	tx.emitJob(structs.TypeJobRegistered, job)
	return nil
}

// upsertJobVersion records job as a version and trims the history.
func (tx *Txn) upsertJobVersion(job *structs.Job) error {
	if err := tx.insert(TableJobVersion, job); err != nil {
		return fmt.Errorf("job %q version %d: %w", job.ID, job.Version, err)
	}
	return tx.trimJobVersions(job.Namespace, job.ID)
}

// trimJobVersions drops the oldest versions of a job beyond
// structs.JobTrackedVersions. Tagged versions do not count and are never
// dropped: a user named them to come back to them.
func (tx *Txn) trimJobVersions(namespace, id string) error {
	all, err := jobVersions(tx.txn, nil, namespace, id)
	if err != nil {
		return err
	}
	all = slices.DeleteFunc(all, func(j *structs.Job) bool { return j.VersionTag != nil })
	keep := structs.JobTrackedVersions
	if len(all) <= keep {
		return nil
	}
	slices.Reverse(all) // newest first
	// A stable version is what a failed deployment reverts to: when the
	// newest stable one is about to go, keep it in place of the oldest
	// kept version.
	if i := slices.IndexFunc(all, func(j *structs.Job) bool { return j.Stable }); i >= keep {
		all[keep-1], all[i] = all[i], all[keep-1]
	}
	for _, old := range all[keep:] {
		if err := tx.delete(TableJobVersion, old); err != nil {
			return fmt.Errorf("job %q version %d: %w", old.ID, old.Version, err)
		}
		if err := tx.deleteJobSubmission(namespace, id, old.Version); err != nil {
			return err
		}
	}
	return nil
}

// DeleteJob purges a job: the job, its versions and their sources, its
// summary, its periodic launch record and its scaling events. Its evaluations and allocations stay until
// garbage collected.
func (tx *Txn) DeleteJob(namespace, id string) error {
	tx.touch(TableJobs)
	job, err := jobByID(tx.txn, nil, namespace, id)
	if err != nil {
		return err
	}
	if job == nil {
		return fmt.Errorf("delete job %q in namespace %q: %w", id, namespace, structs.ErrUnknownJob)
	}
	if err := tx.delete(TableJobs, job); err != nil {
		return fmt.Errorf("job %q in namespace %q: %w", id, namespace, err)
	}
	versions, err := jobVersions(tx.txn, nil, namespace, id)
	if err != nil {
		return err
	}
	for _, v := range versions {
		if err := tx.delete(TableJobVersion, v); err != nil {
			return fmt.Errorf("job %q version %d: %w", id, v.Version, err)
		}
	}
	summary, err := tx.currentSummary(namespace, id)
	if err != nil {
		return err
	}
	if summary != nil {
		if err := tx.delete(TableJobSummary, summary); err != nil {
			return fmt.Errorf("summary of job %q: %w", id, err)
		}
		tx.countSummary(summary, nil)
		delete(tx.summaries, summaryKey(summary))
	}
	if err := tx.updateParentChildren(job, job.Status, ""); err != nil {
		return err
	}
	if err := tx.DeletePeriodicLaunch(namespace, id); err != nil {
		return err
	}
	if err := tx.deleteScalingEvents(namespace, id); err != nil {
		return err
	}
	if err := tx.deleteJobSubmissions(namespace, id); err != nil {
		return err
	}
	tx.emitJob(structs.TypeJobDeregistered, job)
	return nil
}

// UpdateJobStability marks a stored version of a job stable or not
// (deployments mark the version they rolled out successfully). A version
// no longer stored is ignored. The version keeps its number.
func (tx *Txn) UpdateJobStability(namespace, id string, version uint64, stable bool) error {
	tx.touch(TableJobVersion)
	v, err := jobByIDAndVersion(tx.txn, nil, namespace, id, version)
	if err != nil || v == nil || v.Stable == stable {
		return err
	}
	nv := *v
	nv.Stable = stable
	nv.ModifyIndex = tx.index
	if err := tx.insert(TableJobVersion, &nv); err != nil {
		return fmt.Errorf("job %q version %d: %w", id, version, err)
	}
	cur, err := jobByID(tx.txn, nil, namespace, id)
	if err != nil {
		return err
	}
	if cur != nil && cur.Version == version && cur.CreateIndex == v.CreateIndex {
		nc := *cur
		nc.Stable = stable
		nc.ModifyIndex = tx.index
		if err := tx.insert(TableJobs, &nc); err != nil {
			return fmt.Errorf("job %q: %w", id, err)
		}
	}
	return nil
}

func (tx *Txn) emitJob(eventType string, j *structs.Job) {
	tx.emit(structs.Event{
		Topic:     structs.TopicJob,
		Type:      eventType,
		Key:       j.ID,
		Namespace: j.Namespace,
		Payload:   &structs.JobEvent{Job: j},
	})
}

// ---- store wrappers ----------------------------------------------------------

// UpsertJob registers a job at index; see Txn.UpsertJob.
func (s *StateStore) UpsertJob(index uint64, job *structs.Job) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertJob(job) })
}

// DeleteJob purges a job at index; see Txn.DeleteJob.
func (s *StateStore) DeleteJob(index uint64, namespace, id string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteJob(namespace, id) })
}

// UpdateJobStability marks a job version stable at index; see
// Txn.UpdateJobStability.
func (s *StateStore) UpdateJobStability(index uint64, namespace, id string, version uint64, stable bool) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpdateJobStability(namespace, id, version, stable) })
}

// nilJobParts refuses a job holding a nil task group or task. Writers
// never make one (the agent refuses null entries, validation names
// them), but a log entry is read as it is: the summary and every later
// reader of the job walk its groups and tasks, and a nil one there
// would panic the FSM on every server replaying the entry.
func nilJobParts(job *structs.Job) error {
	for i, tg := range job.TaskGroups {
		if tg == nil {
			return fmt.Errorf("%w: job %q: task group %d is nil", structs.ErrInvalid, job.ID, i)
		}
		for j, t := range tg.Tasks {
			if t == nil {
				return fmt.Errorf("%w: job %q: group %q: task %d is nil", structs.ErrInvalid, job.ID, tg.Name, j)
			}
		}
	}
	return nil
}

// setScalingPolicyIndexes stamps the groups' scaling policies: created
// when their group's policy first appeared (same ID), modified now.
func setScalingPolicyIndexes(job, existing *structs.Job, index uint64) {
	for _, tg := range job.TaskGroups {
		if tg == nil || tg.Scaling == nil {
			continue
		}
		tg.Scaling.CreateIndex = index
		if existing != nil {
			if old := existing.LookupTaskGroup(tg.Name); old != nil && old.Scaling != nil && old.Scaling.ID == tg.Scaling.ID {
				tg.Scaling.CreateIndex = old.Scaling.CreateIndex
			}
		}
		tg.Scaling.ModifyIndex = index
	}
}
