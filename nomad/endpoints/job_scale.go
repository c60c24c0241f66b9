package endpoints

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/fsm"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Scale sets a task group's count, or with no count only records the
// request (an autoscaler reporting an error, say). A count registers a
// new version of the job with that count and its eval (triggered by
// job-scaling) in one Raft entry, as Job.Register does; every request
// then records a scaling event, with the eval's ID when there is one.
func (j *Job) Scale(args *structs.JobScaleRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.Forward("Job.Scale", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "job", "scale"}, time.Now())
	store := j.srv.State()
	if _, cfg, err := store.SchedulerConfig(nil); err != nil {
		return err
	} else if cfg != nil && cfg.RejectJobRegistration {
		return structs.ErrJobRegistrationOff
	} else if args.Count != nil {
		// Only a count writes a new version and its eval.
		if err := checkBackpressure(j.srv, cfg, "Job.Scale"); err != nil {
			return err
		}
	}
	if problems := args.Problems(); len(problems) > 0 {
		return &structs.ValidationError{Problems: problems}
	}
	ns := args.RequestNamespace()
	job, err := store.JobByID(nil, ns, args.JobID)
	if err != nil {
		return err
	}
	if job == nil {
		return fmt.Errorf("job %q in namespace %q: %w", args.JobID, ns, structs.ErrUnknownJob)
	}
	groupName := args.Target[structs.ScalingTargetGroup]
	group := job.LookupTaskGroup(groupName)
	if group == nil {
		return structs.KindErrorf(structs.ErrInvalid, "task group %q specified for scaling does not exist in job", groupName)
	}
	if job.Type == structs.JobTypeSystem && args.Count != nil && *args.Count > 1 {
		return structs.KindErrorf(structs.ErrInvalid, `jobs of type "system" can only be scaled between 0 and 1`)
	}

	now := j.srv.Clock().Now()
	event := &structs.ScalingEventRequest{
		Namespace: job.Namespace,
		JobID:     job.ID,
		TaskGroup: groupName,
		ScalingEvent: &structs.ScalingEvent{
			Time:          uint64(now.UnixNano()),
			Count:         args.Count,
			PreviousCount: int64(group.Count),
			Message:       args.Message,
			Error:         args.Error,
			Meta:          args.Meta,
		},
		WriteRequest: args.WriteRequest,
	}
	if args.Count == nil {
		reply.JobModifyIndex = job.ModifyIndex
	} else {
		evalID, err := j.scaleCount(job, groupName, *args.Count, args, now, reply)
		if err != nil {
			return err
		}
		if evalID != "" {
			event.ScalingEvent.EvalID = &evalID
		}
	}
	_, index, err := j.srv.RaftApply(structs.ScalingEventRegisterRequestType, event)
	if err != nil {
		return err
	}
	reply.Index = index
	j.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}

// scaleCount registers the job with the group's new count and its eval,
// and answers the eval's ID ("" for a template, which gets none).
func (j *Job) scaleCount(cur *structs.Job, groupName string, count int64, args *structs.JobScaleRequest, now time.Time, reply *structs.JobRegisterResponse) (string, error) {
	store := j.srv.State()
	d, err := store.LatestDeploymentByJobID(nil, cur.Namespace, cur.ID)
	if err != nil {
		return "", err
	}
	if d != nil && d.Active() && d.JobCreateIndex == cur.CreateIndex {
		return "", structs.KindErrorf(structs.ErrInvalid, "job scaling blocked due to active deployment")
	}
	if args.JobModifyIndex > 0 {
		if err := fsm.CheckEnforceIndex(args.JobModifyIndex, cur); err != nil {
			return "", err
		}
	}
	job := cur.Copy()
	job.LookupTaskGroup(groupName).Count = int(count)
	job.SubmitTime = now.UnixNano()
	if _, err := PrepareJob(job, cur.Namespace, 0, j.srv.Settings().JobMaxCount, func(ns, id string) (*structs.Job, error) {
		return cur, nil
	}); err != nil {
		return "", err
	}
	req := &structs.JobRegisterRequest{
		Job: job,
		// The job must still be the one read above: a registration in
		// between would be silently undone.
		EnforceIndex:   true,
		JobModifyIndex: cur.JobModifyIndex,
		WriteRequest:   args.WriteRequest,
	}
	if job.RequiresEval() {
		req.Eval = newJobEval(job, structs.EvalTriggerScaling, 0, now)
	}
	_, index, err := j.srv.RaftApply(structs.JobRegisterRequestType, req)
	if err != nil {
		return "", err
	}
	reply.JobModifyIndex = index
	if stored, err := store.JobByID(nil, job.Namespace, job.ID); err != nil {
		return "", err
	} else if stored != nil {
		reply.JobModifyIndex = stored.JobModifyIndex
	}
	if req.Eval == nil {
		return "", nil
	}
	reply.EvalID = req.Eval.ID
	reply.EvalCreateIndex = index
	return req.Eval.ID, nil
}

// ScaleStatus answers a job's desired and actual counts per task group,
// with each group's recent scaling events; nil when the job does not
// exist. Placed counts the group's non-terminal allocations, canaries
// aside; Running, Healthy and Unhealthy are among them (health as the
// job's deployment recorded it).
func (j *Job) ScaleStatus(args *structs.JobScaleStatusRequest, reply *structs.JobScaleStatusResponse) error {
	if done, err := j.srv.Forward("Job.ScaleStatus", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(j.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		reply.JobScaleStatus = nil
		job, err := store.JobByID(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		if job == nil {
			return store.Index(state.TableJobs)
		}
		events, index, err := store.ScalingEventsByJob(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		allocs, err := store.AllocsByJob(ws, ns, args.JobID, false)
		if err != nil {
			return 0, err
		}
		status := &structs.JobScaleStatus{
			JobID:          job.ID,
			Namespace:      job.Namespace,
			JobCreateIndex: job.CreateIndex,
			JobModifyIndex: job.ModifyIndex,
			JobStopped:     job.Stop,
			TaskGroups:     make(map[string]*structs.TaskGroupScaleStatus, len(job.TaskGroups)),
		}
		for _, tg := range job.TaskGroups {
			status.TaskGroups[tg.Name] = &structs.TaskGroupScaleStatus{Desired: tg.Count, Events: events[tg.Name]}
		}
		index = max(index, job.ModifyIndex)
		for _, a := range allocs {
			tg := status.TaskGroups[a.TaskGroup]
			if tg == nil || a.TerminalStatus() || (a.DeploymentStatus != nil && a.DeploymentStatus.Canary) {
				continue
			}
			tg.Placed++
			if a.ClientStatus == structs.AllocClientStatusRunning {
				tg.Running++
			}
			switch {
			case a.DeploymentStatus.IsHealthy():
				tg.Healthy++
			case a.DeploymentStatus.IsUnhealthy():
				tg.Unhealthy++
			}
			index = max(index, a.ModifyIndex)
		}
		reply.JobScaleStatus = status
		return index, nil
	})
}
