package endpoints

import (
	"fmt"
	"time"

	"github.com/hashicorp/cronexpr"
	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// Plan dry-runs the scheduler for a job: the real scheduler of the job's
// type processes an eval of the submitted version against a private
// snapshot holding it, through a planner that records what would happen
// and commits nothing. The reply says what the scheduler would place,
// stop and update, what it could not place and why, and, with Diff, how
// the job changes.
func (j *Job) Plan(args *structs.JobPlanRequest, reply *structs.JobPlanResponse) error {
	if done, err := j.srv.Forward("Job.Plan", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "job", "plan"}, time.Now())

	snap := j.srv.State().Snapshot()
	existing, err := PrepareJob(args.Job, args.Namespace, 0, j.srv.Settings().JobMaxCount, func(ns, id string) (*structs.Job, error) {
		return snap.JobByID(nil, ns, id)
	})
	if err != nil {
		return err
	}
	if err := checkJobNamespace(snap, args.Job); err != nil {
		return err
	}
	if err := checkJobNodePool(snap, args.Job); err != nil {
		return err
	}
	job := args.Job
	now := j.srv.Clock().Now()
	job.SubmitTime = now.UnixNano()

	// The planned version and its eval go into the snapshot only, at the
	// index after the newest, as if registered next.
	latest, err := snap.LatestIndex()
	if err != nil {
		return err
	}
	index := latest + 1
	if err := snap.UpsertJob(index, job.Copy()); err != nil {
		return fmt.Errorf("job %q: staging the planned version: %w", job.ID, err)
	}
	planned, err := snap.JobByID(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	eval := newJobEval(job, structs.EvalTriggerJobRegister, 0, now)
	eval.JobModifyIndex = planned.JobModifyIndex
	eval.AnnotatePlan = true
	if err := snap.UpsertEvals(index, []*structs.Evaluation{eval}); err != nil {
		return fmt.Errorf("job %q: staging the planned eval: %w", job.ID, err)
	}

	planner := &scheduler.DryRun{Index: index}
	cfg := &scheduler.Config{Logger: j.srv.Logger().Named("job_plan"), Now: j.srv.Clock().Now}
	sched, err := j.srv.Settings().Schedulers.New(eval.Type, cfg, snap.SchedulerView(), planner)
	if err != nil {
		return fmt.Errorf("job %q: %w", job.ID, err)
	}
	if err := sched.Process(eval); err != nil {
		return fmt.Errorf("job %q: scheduler dry run: %w", job.ID, err)
	}

	result := planner.Outcome()
	if result.Plan != nil {
		reply.Annotations = result.Plan.Annotations
	}
	if result.Eval != nil {
		reply.FailedTGAllocs = result.Eval.FailedTGAllocs
	}
	reply.CreatedEvals = result.Created
	if existing != nil {
		reply.JobModifyIndex = existing.JobModifyIndex
	}
	if args.Diff {
		diff, err := existing.Diff(job, true)
		if err != nil {
			return fmt.Errorf("job %q: %w", job.ID, err)
		}
		diff.AnnotateUpdates(reply.Annotations)
		reply.Diff = diff
	}
	if job.IsPeriodic() {
		next, err := nextLaunch(job.Periodic, now)
		if err != nil {
			return fmt.Errorf("job %q: %w", job.ID, err)
		}
		reply.NextPeriodicLaunch = next
	}
	reply.Index = index
	return nil
}

// nextLaunch returns when a periodic job would next launch after now.
func nextLaunch(p *structs.PeriodicConfig, now time.Time) (time.Time, error) {
	loc := time.UTC
	if p.TimeZone != "" {
		l, err := time.LoadLocation(p.TimeZone)
		if err != nil {
			return time.Time{}, fmt.Errorf("periodic time zone %q: %w", p.TimeZone, err)
		}
		loc = l
	}
	specs := p.Specs
	if p.Spec != "" {
		specs = append([]string{p.Spec}, specs...)
	}
	var next time.Time
	for _, spec := range specs {
		e, err := cronexpr.Parse(spec)
		if err != nil {
			return time.Time{}, fmt.Errorf("periodic spec %q: %w", spec, err)
		}
		n := e.Next(now.In(loc))
		if !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	return next, nil
}
