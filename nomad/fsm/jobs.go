package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Job entries. Registration and deregistration carry the evaluation that
// acts on them, written in the same transaction: no reader ever sees a
// new job version without the eval that will schedule it.

// CheckEnforceIndex applies a registration's check-and-set on the job's
// modify index: 0 means the job must not exist, any other value must be
// the current JobModifyIndex. A failed check is the caller's stale view:
// an error of kind structs.ErrJobModifyIndex (a conflict), whose text
// is Nomad's. The Job.Register endpoint runs it
// too, before it writes; the FSM checks again against the state the entry
// lands on.
func CheckEnforceIndex(want uint64, existing *structs.Job) error {
	switch {
	case existing != nil && want == 0:
		return fmt.Errorf("%w 0: job already exists", structs.ErrJobModifyIndex)
	case existing != nil && want != existing.JobModifyIndex:
		return fmt.Errorf("%w %d: job exists with conflicting job modify index: %d",
			structs.ErrJobModifyIndex, want, existing.JobModifyIndex)
	case existing == nil && want != 0:
		return fmt.Errorf("%w %d: job does not exist", structs.ErrJobModifyIndex, want)
	}
	return nil
}

func (f *FSM) jobRegisterTxn(tx *state.Txn, body []byte) (func(), error) {
	var req structs.JobRegisterRequest
	if err := decode(body, structs.JobRegisterRequestType, &req); err != nil {
		return nil, err
	}
	if req.Job == nil {
		return nil, errMissing(structs.JobRegisterRequestType, "job")
	}
	job := req.Job
	// The endpoint checked EnforceIndex already; checking again here
	// makes the check atomic with the write.
	if req.EnforceIndex {
		existing, err := tx.JobByID(job.Namespace, job.ID)
		if err != nil {
			return nil, err
		}
		if err := CheckEnforceIndex(req.JobModifyIndex, existing); err != nil {
			return nil, err
		}
	}
	// The job was decoded from the entry: its parts are its own.
	tx.InternJobParts(job)
	if err := tx.UpsertJob(job); err != nil {
		return nil, err
	}
	if err := tx.UpsertJobSubmission(job.Namespace, job.ID, req.Submission); err != nil {
		return nil, err
	}
	for _, u := range req.DeploymentUpdates {
		// A deployment collected since the endpoint looked needs no
		// cancelling.
		if d, err := tx.DeploymentByID(u.DeploymentID); err != nil || d == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		if err := tx.UpdateDeploymentStatus(u); err != nil {
			return nil, err
		}
	}
	if err := upsertJobEval(tx, job.Namespace, job.ID, req.Eval); err != nil {
		return nil, err
	}
	return f.afterEvals(req.Eval), nil
}

// upsertJobEval writes the eval that rides with a job change, stamped
// with the job's modify index as stored (unchanged when the resubmitted
// spec was identical).
func upsertJobEval(tx *state.Txn, namespace, jobID string, eval *structs.Evaluation) error {
	if eval == nil {
		return nil
	}
	stored, err := tx.JobByID(namespace, jobID)
	if err != nil {
		return err
	}
	if stored != nil {
		eval.JobModifyIndex = stored.JobModifyIndex
	}
	return tx.UpsertEvals([]*structs.Evaluation{eval})
}

func (f *FSM) jobDeregisterTxn(tx *state.Txn, body []byte) (func(), error) {
	var req structs.JobDeregisterRequest
	if err := decode(body, structs.JobDeregisterRequestType, &req); err != nil {
		return nil, err
	}
	ns := req.RequestNamespace()
	if err := deregisterJob(tx, ns, req.JobID, req.Purge, req.SubmitTime); err != nil {
		return nil, err
	}
	if err := upsertJobEval(tx, ns, req.JobID, req.Eval); err != nil {
		return nil, err
	}
	return f.afterEvals(req.Eval), nil
}

// deregisterJob purges a job, or stops it by registering a stopped copy
// (a new version, submitted at submitTime). A job that is not there is
// already what was asked for: Nomad answers its deregistration with
// success (and an eval that finds nothing to stop).
func deregisterJob(tx *state.Txn, namespace, id string, purge bool, submitTime int64) error {
	job, err := tx.JobByID(namespace, id)
	if err != nil {
		return err
	}
	if job == nil {
		return nil
	}
	if purge {
		return tx.DeleteJob(namespace, id)
	}
	if job.Stop {
		return nil
	}
	stopped := job.Copy()
	stopped.Stop = true
	if submitTime != 0 {
		stopped.SubmitTime = submitTime
	}
	tx.InternJobParts(stopped)
	return tx.UpsertJob(stopped)
}

func (f *FSM) applyJobBatchDeregister(body []byte, index uint64) interface{} {
	var req structs.JobBatchDeregisterRequest
	if err := decode(body, structs.JobBatchDeregisterRequestType, &req); err != nil {
		return err
	}
	ids := make([]structs.NamespacedID, 0, len(req.Jobs))
	for id := range req.Jobs {
		ids = append(ids, id)
	}
	// Map order differs between servers; events and errors must not.
	slices.SortFunc(ids, func(a, b structs.NamespacedID) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	err := f.State().WithWriteTxn(index, func(tx *state.Txn) error {
		for _, id := range ids {
			// The collector may race a user purge: a job already gone is
			// what it wanted.
			if j, err := tx.JobByID(id.Namespace, id.ID); err != nil || j == nil {
				if err != nil {
					return err
				}
				continue
			}
			purge := req.Jobs[id] != nil && req.Jobs[id].Purge
			if err := deregisterJob(tx, id.Namespace, id.ID, purge, 0); err != nil {
				return err
			}
		}
		return tx.UpsertEvals(req.Evals)
	})
	if err != nil {
		return err
	}
	f.handleEvals(req.Evals)
	return nil
}

func (f *FSM) applyJobStability(body []byte, index uint64) interface{} {
	var req structs.JobStabilityRequest
	if err := decode(body, structs.JobStabilityRequestType, &req); err != nil {
		return err
	}
	return f.State().UpdateJobStability(index, req.RequestNamespace(), req.JobID, req.JobVersion, req.Stable)
}

// applyScalingEvent records one scaling request of a task group; a count
// change rides in its own JobRegister entry before it.
func (f *FSM) applyScalingEvent(body []byte, index uint64) interface{} {
	var req structs.ScalingEventRequest
	if err := decode(body, structs.ScalingEventRegisterRequestType, &req); err != nil {
		return err
	}
	return f.State().UpsertScalingEvent(index, &req)
}

// applyJobVersionTag tags a job version or removes a tag; the store
// refuses a missing version and a name already on another version.
func (f *FSM) applyJobVersionTag(body []byte, index uint64) interface{} {
	var req structs.JobApplyTagRequest
	if err := decode(body, structs.JobVersionTagRequestType, &req); err != nil {
		return err
	}
	return f.State().UpdateJobVersionTag(index, req.RequestNamespace(), &req)
}

// errMissing reports an entry without the object it must carry.
func errMissing(t structs.MessageType, what string) error {
	return fmt.Errorf("%s entry carries no %s", t, what)
}
