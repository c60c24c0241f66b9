package endpoints

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/nomad/fsm"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Job serves the Job.* RPCs: registration, deregistration,
// forced evaluation, dry runs, and reads.
type Job struct {
	srv Server
}

// jobRules says what each Job.* method needs of the caller's token.
var jobRules = Rules{
	"Register":         NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityRegisterJob),
	"Deregister":       NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityDeregisterJob, acl.NamespaceCapabilityPurgeJob),
	"BatchDeregister":  Internal(),
	"Dispatch":         NamespaceAny(acl.NamespaceCapabilityDispatchJob),
	"Evaluate":         NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityEvaluateJob),
	"Plan":             NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityPlanJob),
	"Validate":         NamespaceAny(acl.NamespaceCapabilityReadJob),
	"GetJob":           NamespaceAny(acl.NamespaceCapabilityReadJob),
	"GetJobVersions":   NamespaceAny(acl.NamespaceCapabilityReadJob),
	"GetJobSubmission": NamespaceAny(acl.NamespaceCapabilityReadJob),
	"Summary":          NamespaceAny(acl.NamespaceCapabilityReadJob),
	"Allocations":      NamespaceAny(acl.NamespaceCapabilityReadJob),
	"Evaluations":      NamespaceAny(acl.NamespaceCapabilityReadJob),
	"Deployments":      NamespaceAny(acl.NamespaceCapabilityReadJob),
	"LatestDeployment": NamespaceAny(acl.NamespaceCapabilityReadJob),
	"List":             NamespaceAny(acl.NamespaceCapabilityListJobs),
	"Revert":           NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityRevertJob),
	"Stable":           NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityStableJob),
	"TagVersion":       NamespaceAny(acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityTagJobVersion),
	"Scale":            NamespaceAny(acl.NamespaceCapabilityScaleJob, acl.NamespaceCapabilitySubmitJob),
	"ScaleStatus":      NamespaceAny(acl.NamespaceCapabilityReadJob, acl.NamespaceCapabilityReadJobScaling),
}

// PrepareJob canonicalizes a submitted job and validates it, together
// with how it changes the job already registered (existing returns it,
// nil when there is none) and the server's count limit (maxCount, 0: the
// default). Every problem is reported in one *structs.ValidationError.
// It is the one place a job on its way in is canonicalized and
// validated: Job.Register, Job.Plan and Job.Validate call it, and the
// agent leaves both to it. It returns the registered version.
func PrepareJob(job *structs.Job, requestNamespace string, evalPriority int, maxCount int, existing func(ns, id string) (*structs.Job, error)) (*structs.Job, error) {
	if job == nil {
		return nil, &structs.ValidationError{Problems: []string{"missing job"}}
	}
	if job.Namespace == "" {
		job.Namespace = requestNamespace
	}
	job.Canonicalize()
	var problems []string
	if err := job.Validate(); err != nil {
		var v *structs.ValidationError
		if !errors.As(err, &v) {
			return nil, err
		}
		problems = append(problems, v.Problems...)
	}
	problems = append(problems, job.CountProblems(maxCount)...)
	if requestNamespace != "" && job.Namespace != requestNamespace {
		problems = append(problems, fmt.Sprintf("job namespace %q does not match the request namespace %q",
			job.Namespace, requestNamespace))
	}
	if msg := structs.PriorityProblem("eval priority", evalPriority); msg != "" {
		problems = append(problems, msg)
	}
	var old *structs.Job
	if job.ID != "" {
		var err error
		if old, err = existing(job.Namespace, job.ID); err != nil {
			return nil, err
		}
		problems = append(problems, jobUpdateProblems(old, job)...)
	}
	if len(problems) > 0 {
		return nil, &structs.ValidationError{Problems: problems}
	}
	stampScalingPolicies(job, old)
	return old, nil
}

// stampScalingPolicies gives each group's scaling policy its target and
// an ID, the one its group's policy already had in the registered
// version so that an autoscaler keeps following it across versions.
func stampScalingPolicies(job, old *structs.Job) {
	for _, tg := range job.TaskGroups {
		if tg == nil || tg.Scaling == nil {
			continue
		}
		p := tg.Scaling
		p.Target = map[string]string{
			structs.ScalingTargetNamespace: job.Namespace,
			structs.ScalingTargetJob:       job.ID,
			structs.ScalingTargetGroup:     tg.Name,
		}
		p.ID = ""
		if old != nil {
			if prev := old.LookupTaskGroup(tg.Name); prev != nil && prev.Scaling != nil {
				p.ID = prev.Scaling.ID
			}
		}
		if p.ID == "" {
			p.ID = structs.GenerateUUID()
		}
	}
}

// jobUpdateProblems lists the changes a job may not make to its
// registered version: its type and its nature as a template.
func jobUpdateProblems(old, job *structs.Job) []string {
	if old == nil {
		return nil
	}
	var p []string
	if old.Type != job.Type {
		p = append(p, fmt.Sprintf("cannot update job from type %q to %q", old.Type, job.Type))
	}
	if old.IsPeriodic() != job.IsPeriodic() {
		if job.IsPeriodic() {
			p = append(p, "cannot update non-periodic job to being periodic")
		} else {
			p = append(p, "cannot update periodic job to being non-periodic")
		}
	}
	if old.IsParameterized() != job.IsParameterized() {
		if job.IsParameterized() {
			p = append(p, "cannot update non-parameterized job to being parameterized")
		} else {
			p = append(p, "cannot update parameterized job to being non-parameterized")
		}
	}
	if old.Dispatched {
		p = append(p, "cannot update a dispatched job")
	}
	return p
}

// newJobEval returns the pending eval a job change creates.
func newJobEval(job *structs.Job, triggeredBy string, priority int, now time.Time) *structs.Evaluation {
	if priority == 0 {
		priority = job.Priority
	}
	return &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   job.Namespace,
		Priority:    priority,
		Type:        job.Type,
		TriggeredBy: triggeredBy,
		JobID:       job.ID,
		Status:      structs.EvalStatusPending,
		CreateTime:  now.UnixNano(),
		ModifyTime:  now.UnixNano(),
	}
}

// checkJobNamespace refuses a job whose namespace does not exist, or
// whose namespace's capabilities do not allow a task driver or network
// mode it uses, in Nomad's words.
func checkJobNamespace(store interface {
	NamespaceByName(memdb.WatchSet, string) (*structs.Namespace, error)
}, job *structs.Job) error {
	ns, err := store.NamespaceByName(nil, job.Namespace)
	if err != nil {
		return err
	}
	if ns == nil {
		return structs.KindErrorf(structs.ErrInvalid, "job %q is in nonexistent namespace %q", job.ID, job.Namespace)
	}
	return ns.CheckJob(job)
}

// Register registers a job or a new version of it, and the eval that
// schedules it, in one Raft entry. Templates (periodic and parameterized
// jobs) get no eval. Submitting an unchanged job writes no new version but
// still a fresh eval: re-registering forces an evaluation.
func (j *Job) Register(args *structs.JobRegisterRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.Forward("Job.Register", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "job", "register"}, time.Now())

	store := j.srv.State()
	existing, err := PrepareJob(args.Job, args.Namespace, args.EvalPriority, j.srv.Settings().JobMaxCount, func(ns, id string) (*structs.Job, error) {
		return store.JobByID(nil, ns, id)
	})
	if err != nil {
		return err
	}
	if err := checkJobNamespace(store, args.Job); err != nil {
		return err
	}
	if err := checkJobNodePool(store, args.Job); err != nil {
		return err
	}
	if aclObj, err := j.srv.ResolveACL(args.AuthToken); err != nil {
		return err
	} else if err := checkHostVolumeMounts(aclObj, args.Job); err != nil {
		return err
	}
	job := args.Job
	if _, cfg, err := store.SchedulerConfig(nil); err != nil {
		return err
	} else if cfg != nil && cfg.RejectJobRegistration {
		return structs.ErrJobRegistrationOff
	} else if job.RequiresEval() {
		if err := checkBackpressure(j.srv, cfg, "Job.Register"); err != nil {
			return err
		}
	}
	if args.EnforceIndex {
		if err := fsm.CheckEnforceIndex(args.JobModifyIndex, existing); err != nil {
			return err
		}
	}
	if args.PreserveCounts && existing != nil {
		for _, tg := range job.TaskGroups {
			if old := existing.LookupTaskGroup(tg.Name); old != nil {
				tg.Count = old.Count
			}
		}
	}
	if args.PreserveResources && existing != nil {
		for _, tg := range job.TaskGroups {
			old := existing.LookupTaskGroup(tg.Name)
			if old == nil {
				continue
			}
			for _, task := range tg.Tasks {
				if prev := old.LookupTask(task.Name); prev != nil {
					task.Resources = prev.Resources.Copy()
				}
			}
		}
	}

	now := j.srv.Clock().Now()
	job.SubmitTime = now.UnixNano()
	args.Eval = nil
	if job.RequiresEval() {
		args.Eval = newJobEval(job, structs.EvalTriggerJobRegister, args.EvalPriority, now)
	}
	args.DeploymentUpdates = nil
	if existing != nil && existing.SpecChanged(job) {
		d, err := store.LatestDeploymentByJobID(nil, job.Namespace, job.ID)
		if err != nil {
			return err
		}
		if d != nil && d.Active() {
			args.DeploymentUpdates = []*structs.DeploymentStatusUpdate{{
				DeploymentID:      d.ID,
				Status:            structs.DeploymentStatusCancelled,
				StatusDescription: structs.DeploymentStatusDescriptionNewerJob,
			}}
		}
	}

	var warnings []string
	if limit := j.srv.Settings().JobMaxSourceSize; args.Submission != nil {
		if limit <= 0 {
			limit = structs.DefaultJobMaxSourceSize
		}
		if size := args.Submission.Size(); size > limit {
			// Nomad's answer too: the job registers, its source is
			// not kept.
			warnings = append(warnings, fmt.Sprintf("job source size of %d bytes exceeds maximum of %d bytes and will be discarded", size, limit))
			args.Submission = nil
		}
	}

	_, index, err := j.srv.RaftApply(structs.JobRegisterRequestType, args)
	if err != nil {
		return err
	}
	reply.Warnings = strings.Join(warnings, "\n")
	stored, err := j.srv.State().JobByID(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	if stored != nil {
		reply.JobModifyIndex = stored.JobModifyIndex
	}
	if args.Eval != nil {
		reply.EvalID = args.Eval.ID
		reply.EvalCreateIndex = index
	}
	reply.Index = index
	j.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}

// Deregister stops a job (a new version with Stop set) or purges it, and
// writes the eval that stops its allocations, in one Raft entry.
func (j *Job) Deregister(args *structs.JobDeregisterRequest, reply *structs.JobDeregisterResponse) error {
	if done, err := j.srv.Forward("Job.Deregister", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "job", "deregister"}, time.Now())
	var problems []string
	if args.JobID == "" {
		problems = append(problems, "missing job ID for deregistering")
	}
	if msg := structs.PriorityProblem("eval priority", args.EvalPriority); msg != "" {
		problems = append(problems, msg)
	}
	if len(problems) > 0 {
		return &structs.ValidationError{Problems: problems}
	}
	ns := args.RequestNamespace()
	job, err := j.srv.State().JobByID(nil, ns, args.JobID)
	if err != nil {
		return err
	}
	now := j.srv.Clock().Now()
	args.SubmitTime = now.UnixNano()
	args.Eval = nil
	switch {
	case job == nil:
		// Nothing to stop, yet Nomad answers with success and an eval
		// (of a service job at the default priority) that the scheduler
		// completes finding nothing: deregistering is idempotent.
		args.Eval = newJobEval(&structs.Job{ID: args.JobID, Namespace: ns, Type: structs.JobTypeService,
			Priority: structs.JobDefaultPriority}, structs.EvalTriggerJobDeregister, args.EvalPriority, now)
	case job.RequiresEval():
		args.Eval = newJobEval(job, structs.EvalTriggerJobDeregister, args.EvalPriority, now)
	}
	_, index, err := j.srv.RaftApply(structs.JobDeregisterRequestType, args)
	if err != nil {
		return err
	}
	reply.JobModifyIndex = index
	if stored, err := j.srv.State().JobByID(nil, ns, args.JobID); err != nil {
		return err
	} else if stored != nil {
		reply.JobModifyIndex = stored.JobModifyIndex
	}
	if args.Eval != nil {
		reply.EvalID = args.Eval.ID
		reply.EvalCreateIndex = index
	}
	reply.Index = index
	j.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}

// Evaluate forces a new evaluation of a job. With ForceReschedule, its
// failed allocations are also marked to be replaced now, whatever their
// reschedule policy says, in the same Raft entry.
func (j *Job) Evaluate(args *structs.JobEvaluateRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.Forward("Job.Evaluate", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "job", "evaluate"}, time.Now())
	if args.JobID == "" {
		return &structs.ValidationError{Problems: []string{"missing job ID for evaluation"}}
	}
	ns := args.RequestNamespace()
	store := j.srv.State()
	job, err := store.JobByID(nil, ns, args.JobID)
	if err != nil {
		return err
	}
	if job == nil {
		return fmt.Errorf("job %q in namespace %q: %w", args.JobID, ns, structs.ErrUnknownJob)
	}
	switch {
	case job.IsPeriodic():
		return fmt.Errorf("job %q: can't evaluate periodic job", job.ID)
	case job.IsParameterized():
		return fmt.Errorf("job %q: can't evaluate parameterized job", job.ID)
	}
	eval := newJobEval(job, structs.EvalTriggerJobRegister, 0, j.srv.Clock().Now())
	eval.JobModifyIndex = job.JobModifyIndex

	var index uint64
	if args.EvalOptions.ForceReschedule {
		allocs, err := store.AllocsByJob(nil, ns, job.ID, false)
		if err != nil {
			return err
		}
		yes := true
		transitions := make(map[string]*structs.DesiredTransition)
		for _, a := range allocs {
			if a.ClientStatus == structs.AllocClientStatusFailed && a.NextAllocation == "" && !a.ServerTerminalStatus() {
				transitions[a.ID] = &structs.DesiredTransition{ForceReschedule: &yes}
			}
		}
		req := &structs.AllocUpdateDesiredTransitionRequest{Allocs: transitions, Evals: []*structs.Evaluation{eval}}
		_, index, err = j.srv.RaftApply(structs.AllocUpdateDesiredTransitionRequestType, req)
		if err != nil {
			return err
		}
	} else {
		req := &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}}
		if _, index, err = j.srv.RaftApply(structs.EvalUpdateRequestType, req); err != nil {
			return err
		}
	}
	reply.EvalID = eval.ID
	reply.EvalCreateIndex = index
	reply.JobModifyIndex = job.JobModifyIndex
	reply.Index = index
	j.srv.SetQueryMeta(&reply.QueryMeta)
	return nil
}

// Validate checks a job without registering it. Problems are answered in
// the reply, not as an error, so the caller can list them.
func (j *Job) Validate(args *structs.JobValidateRequest, reply *structs.JobValidateResponse) error {
	// Validation reads nothing but the registered version, which any
	// server has; it need not reach the leader.
	_, err := PrepareJob(args.Job, args.Namespace, 0, j.srv.Settings().JobMaxCount, func(ns, id string) (*structs.Job, error) {
		return j.srv.State().JobByID(nil, ns, id)
	})
	reply.DriverConfigValidated = false
	reply.ValidationErrors, reply.Error, reply.Warnings = nil, "", ""
	var v *structs.ValidationError
	switch {
	case errors.As(err, &v):
		reply.ValidationErrors = v.Problems
		reply.Error = v.Error()
	case err != nil:
		return err
	default:
		// Driver blocks are checked once the job itself is sound (the
		// tasks and their drivers are known to be there).
		problems, all := checkDriverConfigs(args.Job)
		reply.DriverConfigValidated = all
		if len(problems) > 0 {
			reply.ValidationErrors = problems
			reply.Error = (&structs.ValidationError{Problems: problems}).Error()
		}
	}
	return nil
}

// GetJob returns a job, nil when it does not exist.
func (j *Job) GetJob(args *structs.JobSpecificRequest, reply *structs.SingleJobResponse) error {
	if done, err := j.srv.Forward("Job.GetJob", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(j.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		job, err := store.JobByID(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Job = job
		if job != nil {
			return job.ModifyIndex, nil
		}
		return store.Index(state.TableJobs)
	})
}

// List returns the stubs of the jobs of a namespace ("*" for all) whose
// ID starts with Prefix, each with its summary.
func (j *Job) List(args *structs.JobListRequest, reply *structs.JobListResponse) error {
	if done, err := j.srv.Forward("Job.List", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	filter, err := newListFilter(args.Filter)
	if err != nil {
		return err
	}
	return blockingQuery(j.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		jobs, err := store.JobsByIDPrefix(ws, ns, args.Prefix)
		if err != nil {
			return 0, err
		}
		stubs := make([]*structs.JobListStub, 0, len(jobs))
		for _, job := range jobs {
			keep, err := filter.match(job)
			if err != nil {
				return 0, err
			}
			if !keep {
				continue
			}
			summary, err := store.JobSummaryByID(ws, job.Namespace, job.ID)
			if err != nil {
				return 0, err
			}
			stub := job.Stub(summary)
			if args.Fields != nil && args.Fields.Meta {
				stub.Meta = job.Meta
			}
			stubs = append(stubs, stub)
		}
		reply.Jobs = stubs
		return maxTableIndex(store, state.TableJobs, state.TableJobSummary)
	})
}

// Allocations returns the stubs of a job's allocations; with All, also
// those of earlier, purged jobs with the same ID.
func (j *Job) Allocations(args *structs.JobSpecificRequest, reply *structs.JobAllocationsResponse) error {
	if done, err := j.srv.Forward("Job.Allocations", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(j.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		allocs, err := store.AllocsByJob(ws, ns, args.JobID, args.All)
		if err != nil {
			return 0, err
		}
		stubs := make([]*structs.AllocListStub, 0, len(allocs))
		for _, a := range allocs {
			stubs = append(stubs, a.Stub())
		}
		reply.Allocations = stubs
		return store.Index(state.TableAllocs)
	})
}

// Evaluations returns a job's evaluations.
func (j *Job) Evaluations(args *structs.JobSpecificRequest, reply *structs.JobEvaluationsResponse) error {
	if done, err := j.srv.Forward("Job.Evaluations", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(j.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		evals, err := store.EvalsByJob(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Evaluations = evals
		return store.Index(state.TableEvals)
	})
}

// Summary returns a job's summary, nil when the job does not exist.
func (j *Job) Summary(args *structs.JobSpecificRequest, reply *structs.JobSummaryResponse) error {
	if done, err := j.srv.Forward("Job.Summary", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(j.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		summary, err := store.JobSummaryByID(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.JobSummary = summary
		if summary != nil {
			return summary.ModifyIndex, nil
		}
		return store.Index(state.TableJobSummary)
	})
}

// GetJobVersions returns a job's stored versions, newest first, and with
// Diffs the difference between each version and the one before it.
func (j *Job) GetJobVersions(args *structs.JobVersionsRequest, reply *structs.JobVersionsResponse) error {
	if done, err := j.srv.Forward("Job.GetJobVersions", args, args, reply); done {
		return err
	}
	ns := args.RequestNamespace()
	return blockingQuery(j.srv, &args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		versions, err := store.JobVersionsByID(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Versions = versions
		reply.Diffs = nil
		if args.Diffs || args.DiffVersion != nil || args.DiffTagName != "" {
			if reply.Diffs, err = versionDiffs(args, versions); err != nil {
				return 0, err
			}
		}
		var index uint64
		for _, v := range versions {
			if v.ModifyIndex > index {
				index = v.ModifyIndex
			}
		}
		if index == 0 {
			return store.Index(state.TableJobVersion)
		}
		return index, nil
	})
}

// versionDiffs diffs each version (newest first) against the one before
// it, or against the version the request names by number or tag, which
// must exist.
func versionDiffs(args *structs.JobVersionsRequest, versions []*structs.Job) ([]*structs.JobDiff, error) {
	var base *structs.Job
	switch {
	case args.DiffTagName != "":
		for _, v := range versions {
			if v.VersionTag != nil && v.VersionTag.Name == args.DiffTagName {
				base = v
			}
		}
		if base == nil {
			return nil, structs.KindErrorf(structs.ErrNotFound, "tag %q not found on job %q", args.DiffTagName, args.JobID)
		}
	case args.DiffVersion != nil:
		for _, v := range versions {
			if v.Version == *args.DiffVersion {
				base = v
			}
		}
		if base == nil {
			return nil, structs.KindErrorf(structs.ErrNotFound, "job %q version %d not found", args.JobID, *args.DiffVersion)
		}
	}
	var diffs []*structs.JobDiff
	for i, v := range versions {
		old := base
		if old == nil {
			if i+1 == len(versions) {
				break
			}
			old = versions[i+1]
		} else if old == v {
			continue
		}
		d, err := old.Diff(v, true)
		if err != nil {
			return nil, fmt.Errorf("job %q: diffing versions %d and %d: %w", args.JobID, old.Version, v.Version, err)
		}
		diffs = append(diffs, d)
	}
	return diffs, nil
}
