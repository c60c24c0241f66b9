package planjudge

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/opennomad/nomad/structs"
)

// BuildRequest turns a judged plan into its Raft entry: the stops and
// preemptions as they are (decisions the state store applies to the allocs
// it holds), the new and updated allocs stamped with now (as copies
// without the plan's job, which the entry carries once, and only when one
// of them needs it: a plan that only stops allocs or moves a deployment
// along would otherwise copy the whole job into the log for nothing), and
// one pending eval per job that loses allocs to preemption, so that job
// gets rescheduled. st must be the state result was judged against.
//
// It stamps CreateTime (when unset) and ModifyTime on the result's allocs
// themselves, so the submitter sees the times that were committed; the
// entry gets copies, which nobody else holds. The stops are the plan's
// own: nothing changes one once the scheduler made it.
func BuildRequest(st State, plan *structs.Plan, result *structs.PlanResult, now time.Time) *structs.ApplyPlanResultsRequest {
	ts := now.UnixNano()
	req := &structs.ApplyPlanResultsRequest{
		Deployment:        result.Deployment,
		DeploymentUpdates: result.DeploymentUpdates,
		EvalID:            plan.EvalID,
		IneligibleNodes:   result.IneligibleNodes,
		UpdatedAt:         ts,
	}
	for _, node := range slices.Sorted(maps.Keys(result.NodeUpdate)) {
		req.AllocsStopped = append(req.AllocsStopped, result.NodeUpdate[node]...)
	}
	for _, node := range slices.Sorted(maps.Keys(result.NodeAllocation)) {
		for _, a := range result.NodeAllocation[node] {
			if a.CreateTime == 0 {
				a.CreateTime = ts
			}
			a.ModifyTime = ts
			c := *a
			// A plan submitted by a worker on another server has its
			// job and each alloc's decoded apart: the same version is
			// then another object.
			if c.Job == plan.Job || c.Job.SameVersion(plan.Job) {
				c.Job = nil
				req.Job = plan.Job
			}
			req.AllocsUpdated = append(req.AllocsUpdated, &c)
		}
	}
	for _, node := range slices.Sorted(maps.Keys(result.NodePreemptions)) {
		req.AllocsPreempted = append(req.AllocsPreempted, result.NodePreemptions[node]...)
	}
	req.PreemptionEvals = preemptionEvals(st, req.AllocsPreempted, ts)
	return req
}

// preemptionEvals returns one pending eval for each job that loses allocs
// to the preemptions, in the order the preemptions name them.
func preemptionEvals(st State, preempted []*structs.AllocStop, ts int64) []*structs.Evaluation {
	var evals []*structs.Evaluation
	seen := make(map[structs.NamespacedID]struct{})
	for _, p := range preempted {
		a, err := st.AllocByID(p.ID)
		if err != nil || a == nil {
			// Judge found it; a state that lost it has nothing to say.
			continue
		}
		id := a.NamespacedJobID()
		if _, dup := seen[id]; dup {
			continue
		}
		seen[id] = struct{}{}
		job, err := st.JobByID(id.Namespace, id.ID)
		if err != nil || job == nil {
			// A job that is gone has nothing left to reschedule.
			continue
		}
		evals = append(evals, &structs.Evaluation{
			ID:             structs.GenerateUUID(),
			Namespace:      job.Namespace,
			Priority:       job.Priority,
			Type:           job.Type,
			TriggeredBy:    structs.EvalTriggerPreemption,
			JobID:          job.ID,
			JobModifyIndex: job.ModifyIndex,
			Status:         structs.EvalStatusPending,
			CreateTime:     ts,
			ModifyTime:     ts,
		})
	}
	return evals
}

// ReferJob replaces the job req carries by a reference to the stored
// version (structs.JobVersionRef), which every server applies by looking
// it up in its own state store. The caller decides that every server
// understands references. st must be the state req was built against:
// when it no longer holds that exact version (the job was purged or the
// version trimmed since the scheduler read it), ReferJob fails with
// structs.ErrUnknownJob and the plan must not be committed, as the
// servers would refuse it too.
func ReferJob(st State, req *structs.ApplyPlanResultsRequest) error {
	job := req.Job
	if job == nil {
		return nil
	}
	ref := job.VersionRef()
	stored, err := st.JobByIDAndVersion(job.Namespace, job.ID, job.Version)
	if err != nil {
		return err
	}
	if !ref.Names(stored) {
		return fmt.Errorf("job %q in namespace %q version %d: %w", job.ID, job.Namespace, job.Version, structs.ErrUnknownJob)
	}
	req.Job, req.JobRef = nil, ref
	return nil
}
