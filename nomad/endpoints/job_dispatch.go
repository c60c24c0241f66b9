package endpoints

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/structs"
)

// Dispatch launches a child of a parameterized job with the payload and
// meta given, and its eval, in one Raft entry. The child's ID is
// "<parent>/dispatch-<unix>-<8 hex>" ("<parent>/dispatch-<template>-<unix>-
// <8 hex>" with IdPrefixTemplate); it inherits the parent's meta,
// overridden by the dispatch's.
func (j *Job) Dispatch(args *structs.JobDispatchRequest, reply *structs.JobDispatchResponse) error {
	if done, err := j.srv.Forward("Job.Dispatch", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "job", "dispatch"}, time.Now())
	if args.JobID == "" {
		return &structs.ValidationError{Problems: []string{"missing parameterized job ID"}}
	}
	store := j.srv.State()
	if _, cfg, err := store.SchedulerConfig(nil); err != nil {
		return err
	} else if cfg != nil && cfg.RejectJobRegistration {
		return structs.ErrJobRegistrationOff
	} else if err := checkBackpressure(j.srv, cfg, "Job.Dispatch"); err != nil {
		return err
	}
	ns := args.RequestNamespace()
	parent, err := store.JobByID(nil, ns, args.JobID)
	if err != nil {
		return err
	}
	switch {
	case parent == nil:
		return fmt.Errorf("job %q in namespace %q: %w", args.JobID, ns, structs.ErrUnknownJob)
	case !parent.IsParameterized():
		return structs.KindErrorf(structs.ErrInvalid, "Specified job %q is not a parameterized job", args.JobID)
	case parent.Stop:
		return structs.KindErrorf(structs.ErrInvalid, "Specified job %q is stopped", args.JobID)
	}
	if problems := dispatchProblems(parent.ParameterizedJob, args); len(problems) > 0 {
		return &structs.ValidationError{Problems: problems}
	}

	now := j.srv.Clock().Now()
	child := dispatchedJob(parent, args, now)
	if err := child.Validate(); err != nil {
		var v *structs.ValidationError
		if errors.As(err, &v) {
			return &structs.ValidationError{Problems: append([]string{fmt.Sprintf("dispatched job %q is invalid", child.ID)}, v.Problems...)}
		}
		return err
	}
	eval := newJobEval(child, structs.EvalTriggerJobRegister, 0, now)
	req := &structs.JobRegisterRequest{Job: child, Eval: eval, WriteRequest: args.WriteRequest}
	_, index, err := j.srv.RaftApply(structs.JobRegisterRequestType, req)
	if err != nil {
		return err
	}
	reply.DispatchedJobID = child.ID
	reply.EvalID = eval.ID
	reply.EvalCreateIndex = index
	reply.JobCreateIndex = index
	reply.Index = index
	return nil
}

// dispatchProblems checks a dispatch against its job's parameterized
// block: the payload rule and size, required meta present, no meta key
// the block does not name, a priority in range.
func dispatchProblems(p *structs.ParameterizedJobConfig, args *structs.JobDispatchRequest) []string {
	var problems []string
	switch {
	case len(args.Payload) > structs.DispatchPayloadSizeLimit:
		problems = append(problems, fmt.Sprintf("Payload exceeds maximum size; %d > %d", len(args.Payload), structs.DispatchPayloadSizeLimit))
	case p.Payload == structs.DispatchPayloadForbidden && len(args.Payload) > 0:
		problems = append(problems, "Payload is not allowed: the job forbids a payload")
	case p.Payload == structs.DispatchPayloadRequired && len(args.Payload) == 0:
		problems = append(problems, "Payload is required: the job requires a payload")
	}
	var missing, unpermitted []string
	for _, k := range p.MetaRequired {
		if _, ok := args.Meta[k]; !ok {
			missing = append(missing, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(args.Meta)) {
		if !slices.Contains(p.MetaRequired, k) && !slices.Contains(p.MetaOptional, k) {
			unpermitted = append(unpermitted, k)
		}
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("Dispatch did not provide required meta keys: %v", missing))
	}
	if len(unpermitted) > 0 {
		problems = append(problems, fmt.Sprintf("Dispatch request included unpermitted metadata keys: %v", unpermitted))
	}
	if msg := structs.PriorityProblem("priority", args.Priority); msg != "" {
		problems = append(problems, msg)
	}
	return problems
}

// dispatchedJob is the child a dispatch registers.
func dispatchedJob(parent *structs.Job, args *structs.JobDispatchRequest, now time.Time) *structs.Job {
	c := parent.Copy()
	suffix := structs.GenerateUUID()[:8]
	if args.IdPrefixTemplate != "" {
		c.ID = fmt.Sprintf("%s%s%s-%d-%s", parent.ID, structs.DispatchLaunchSuffix, args.IdPrefixTemplate, now.Unix(), suffix)
	} else {
		c.ID = fmt.Sprintf("%s%s%d-%s", parent.ID, structs.DispatchLaunchSuffix, now.Unix(), suffix)
	}
	c.Name = c.ID
	c.ParentID = parent.ID
	c.Dispatched = true
	c.Payload = slices.Clone(args.Payload)
	c.Meta = maps.Clone(parent.Meta)
	if len(args.Meta) > 0 {
		if c.Meta == nil {
			c.Meta = make(map[string]string, len(args.Meta))
		}
		maps.Copy(c.Meta, args.Meta)
	}
	if args.Priority != 0 {
		c.Priority = args.Priority
	}
	c.Status, c.StatusDescription = "", ""
	c.Stable = false
	c.Version = 0
	c.CreateIndex, c.ModifyIndex, c.JobModifyIndex = 0, 0, 0
	c.SubmitTime = now.UnixNano()
	return c
}
