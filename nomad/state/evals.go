package state

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// ---- reads -----------------------------------------------------------------

func evalByID(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.Evaluation, error) {
	raw, err := first(txn, ws, TableEvals, indexID, id)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.Evaluation), nil
}

// EvalByID returns the eval or nil.
func (s *StateStore) EvalByID(ws memdb.WatchSet, id string) (*structs.Evaluation, error) {
	return evalByID(s.db.Txn(false), ws, id)
}

// Evals returns the evals of a namespace, grouped by job, or of every
// namespace for "*", sorted by ID.
func (s *StateStore) Evals(ws memdb.WatchSet, namespace string) ([]*structs.Evaluation, error) {
	txn := s.db.Txn(false)
	if namespace == structs.AllNamespaces {
		it, err := get(txn, ws, TableEvals, indexID)
		if err != nil {
			return nil, err
		}
		return collect[structs.Evaluation](it, nil), nil
	}
	it, err := get(txn, ws, TableEvals, indexJob+"_prefix", namespace, "")
	if err != nil {
		return nil, err
	}
	return collect[structs.Evaluation](it, nil), nil
}

// EvalsByIDPrefix returns the evals of a namespace ("*" for all) whose
// ID starts with prefix.
func (s *StateStore) EvalsByIDPrefix(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Evaluation, error) {
	it, err := get(s.db.Txn(false), ws, TableEvals, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return collect(it, func(e *structs.Evaluation) bool {
		return namespace == structs.AllNamespaces || e.Namespace == namespace
	}), nil
}

func evalsByJob(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string) ([]*structs.Evaluation, error) {
	// The empty status prefix after an exact job ID selects every status
	// of this job and no job whose ID merely starts the same.
	it, err := get(txn, ws, TableEvals, indexJob+"_prefix", namespace, jobID, "")
	if err != nil {
		return nil, err
	}
	return collect[structs.Evaluation](it, nil), nil
}

// EvalsByJob returns a job's evals (of every instance of the job ID).
func (s *StateStore) EvalsByJob(ws memdb.WatchSet, namespace, jobID string) ([]*structs.Evaluation, error) {
	return evalsByJob(s.db.Txn(false), ws, namespace, jobID)
}

// EvalsByStatus returns every pending or blocked eval (status says
// which), in all namespaces: the leader rebuilds its broker from them.
// Finished evals are not indexed by status, and asking for them is an
// error rather than an empty answer.
func (s *StateStore) EvalsByStatus(ws memdb.WatchSet, status string) ([]*structs.Evaluation, error) {
	if waitingEvalStatus(&structs.Evaluation{Status: status}) == "" {
		return nil, fmt.Errorf("listing evals with status %q: only pending and blocked evals are listed by status: %w", status, structs.ErrInvalid)
	}
	it, err := get(s.db.Txn(false), ws, TableEvals, indexStatus, status)
	if err != nil {
		return nil, err
	}
	return collect[structs.Evaluation](it, nil), nil
}

// ---- writes ----------------------------------------------------------------

// UpsertEvals writes evaluations. Each keeps its CreateIndex when it
// exists; ModifyIndex moves to this index. An eval's QueuedAllocations
// are copied into its job's summary, and an eval that completes with
// every allocation placed cancels the job's blocked evals, which have
// nothing left to wait for. The statuses of the jobs are recomputed.
func (tx *Txn) UpsertEvals(evals []*structs.Evaluation) error {
	if len(evals) == 0 {
		return nil
	}
	tx.touch(TableEvals)
	jobs := make(jobStatusUpdates, len(evals))
	for _, e := range evals {
		if err := tx.upsertEval(e); err != nil {
			return err
		}
		jobs.add(e.Namespace, e.JobID)
	}
	return tx.setJobStatuses(jobs, false, structs.TypeEvalUpdated)
}

func (tx *Txn) upsertEval(e *structs.Evaluation) error {
	if e == nil {
		return fmt.Errorf("upsert eval: eval is nil")
	}
	if e.ID == "" {
		return fmt.Errorf("upsert eval: ID is required")
	}
	if e.JobID == "" {
		return fmt.Errorf("eval %q: JobID is required", e.ID)
	}
	if e.Namespace == "" {
		return fmt.Errorf("eval %q: Namespace is required", e.ID)
	}
	if !structs.ValidEvalStatus(e.Status) {
		return fmt.Errorf("eval %q: invalid status %q", e.ID, e.Status)
	}
	existing, err := evalByID(tx.txn, nil, e.ID)
	if err != nil {
		return err
	}
	if existing != nil {
		e.CreateIndex = existing.CreateIndex
	} else {
		e.CreateIndex = tx.index
	}
	e.ModifyIndex = tx.index

	if err := tx.updateSummaryWithEval(e); err != nil {
		return err
	}
	if e.Status == structs.EvalStatusComplete && len(e.FailedTGAllocs) == 0 {
		if err := tx.cancelBlockedEvals(e); err != nil {
			return err
		}
	}
	tx.internEval(e, existing)
	if err := tx.insert(TableEvals, e); err != nil {
		return fmt.Errorf("eval %q: %w", e.ID, err)
	}
	tx.countEval(existing, e)
	tx.emitEval(e)
	return nil
}

// cancelBlockedEvals cancels the blocked evals of done's job.
func (tx *Txn) cancelBlockedEvals(done *structs.Evaluation) error {
	it, err := tx.txn.Get(TableEvals, indexJob, done.Namespace, done.JobID, structs.EvalStatusBlocked)
	if err != nil {
		return fmt.Errorf("reading blocked evals of job %q: %w", done.JobID, err)
	}
	for _, b := range collect[structs.Evaluation](it, nil) {
		if b.ID == done.ID {
			continue
		}
		c := *b
		c.Status = structs.EvalStatusCanceled
		c.StatusDescription = fmt.Sprintf("evaluation %q successful", done.ID)
		c.ModifyIndex = tx.index
		c.ModifyTime = done.ModifyTime
		if err := tx.insert(TableEvals, &c); err != nil {
			return fmt.Errorf("eval %q: %w", c.ID, err)
		}
		tx.countEval(b, &c)
		tx.emitEval(&c)
	}
	return nil
}

// touchEval moves an eval's ModifyIndex to this index, recording that a
// plan for it was applied.
func (tx *Txn) touchEval(id string) error {
	e, err := evalByID(tx.txn, nil, id)
	if err != nil {
		return err
	}
	if e == nil {
		return fmt.Errorf("eval %q: %w", id, structs.ErrUnknownEval)
	}
	c := *e
	c.ModifyIndex = tx.index
	if err := tx.insert(TableEvals, &c); err != nil {
		return fmt.Errorf("eval %q: %w", id, err)
	}
	return nil
}

// DeleteEvals removes evals and allocs (garbage collection). IDs that do
// not exist are skipped. The statuses of the evals' jobs are recomputed
// knowing evals are being collected, so a job left with none is dead.
func (tx *Txn) DeleteEvals(evalIDs, allocIDs []string) error {
	tx.touch(TableEvals)
	tx.touch(TableAllocs)
	jobs := make(jobStatusUpdates, len(evalIDs))
	for _, id := range evalIDs {
		e, err := evalByID(tx.txn, nil, id)
		if err != nil {
			return err
		}
		if e == nil {
			continue
		}
		if err := tx.delete(TableEvals, e); err != nil {
			return fmt.Errorf("eval %q: %w", id, err)
		}
		tx.countEval(e, nil)
		jobs.add(e.Namespace, e.JobID)
	}
	for _, id := range allocIDs {
		a, err := allocByID(tx.txn, nil, id)
		if err != nil {
			return err
		}
		if a == nil {
			continue
		}
		if err := tx.delete(TableAllocs, a); err != nil {
			return fmt.Errorf("alloc %q: %w", id, err)
		}
		if err := tx.deleteServicesBy(indexAllocID, id); err != nil {
			return fmt.Errorf("alloc %q: %w", id, err)
		}
	}
	return tx.setJobStatuses(jobs, true, structs.TypeEvalUpdated)
}

func (tx *Txn) emitEval(e *structs.Evaluation) {
	tx.emit(structs.Event{
		Topic:      structs.TopicEvaluation,
		Type:       structs.TypeEvalUpdated,
		Key:        e.ID,
		Namespace:  e.Namespace,
		FilterKeys: filterKeys(e.JobID, e.DeploymentID),
		Payload:    &structs.EvaluationEvent{Evaluation: e},
	})
}

// filterKeys lists the non-empty secondary keys an event can be
// subscribed by.
func filterKeys(keys ...string) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if strings.TrimSpace(k) != "" {
			out = append(out, k)
		}
	}
	return out
}

// ---- store wrappers ----------------------------------------------------------

// UpsertEvals writes evals at index; see Txn.UpsertEvals.
func (s *StateStore) UpsertEvals(index uint64, evals []*structs.Evaluation) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.UpsertEvals(evals) })
}

// DeleteEvals removes evals and allocs at index; see Txn.DeleteEvals.
func (s *StateStore) DeleteEvals(index uint64, evalIDs, allocIDs []string) error {
	return s.WithWriteTxn(index, func(tx *Txn) error { return tx.DeleteEvals(evalIDs, allocIDs) })
}
