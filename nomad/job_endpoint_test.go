package nomad

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// latestIndex returns the server's state index.
func latestIndex(t *testing.T, s *Server) uint64 {
	t.Helper()
	idx, err := s.State().LatestIndex()
	must.NoError(t, err)
	return idx
}

func TestJobEndpoint_RegisterRejectsInvalidJobsWithEveryProblem(t *testing.T) {
	s := newTestServer(t, nil)
	cases := []struct {
		name string
		req  *structs.JobRegisterRequest
		want []string
	}{
		{"missing job", &structs.JobRegisterRequest{}, []string{"missing job"}},
		{"several problems", func() *structs.JobRegisterRequest {
			j := mock.Job()
			j.Priority = 500
			j.TaskGroups[0].Count = -1
			j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 1
			return &structs.JobRegisterRequest{Job: j, EvalPriority: 101}
		}(), []string{"priority", "count", "memory", "eval priority must be between 1 and 100"}},
		{"count of 2^31-1", func() *structs.JobRegisterRequest {
			j := mock.Job()
			j.TaskGroups[0].Count = math.MaxInt32
			return &structs.JobRegisterRequest{Job: j}
		}(), []string{"count 2147483647 exceeds the server's limit of 50000 allocations per job (job_max_count)"}},
		{"count of 2^63-1", func() *structs.JobRegisterRequest {
			j := mock.Job()
			j.TaskGroups[0].Count = math.MaxInt64
			return &structs.JobRegisterRequest{Job: j}
		}(), []string{"count 9223372036854775807 exceeds"}},
		{"namespace mismatch", &structs.JobRegisterRequest{Job: func() *structs.Job {
			j := mock.Job()
			j.Namespace = "team-a"
			return j
		}(), WriteRequest: structs.WriteRequest{Namespace: "team-b"}}, []string{`job namespace "team-a" does not match`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := latestIndex(t, s)
			var reply structs.JobRegisterResponse
			err := s.RPC("Job.Register", tc.req, &reply)
			must.True(t, structs.IsValidationError(err), must.Sprintf("error %v", err))
			var v *structs.ValidationError
			must.True(t, errors.As(err, &v))
			must.GreaterEq(t, len(tc.want), len(v.Problems))
			for _, w := range tc.want {
				must.StrContains(t, err.Error(), w)
			}
			must.Eq(t, before, latestIndex(t, s), must.Sprint("nothing invalid reaches Raft"))
		})
	}
}

func TestJobEndpoint_RegisterRefusesInvalidUpdates(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	registerJob(t, s, job)
	changed := job.Copy()
	changed.Type = structs.JobTypeBatch
	changed.TaskGroups[0].ReschedulePolicy = nil
	changed.TaskGroups[0].RestartPolicy = nil
	changed.TaskGroups[0].Update = nil
	changed.TaskGroups[0].Migrate = nil
	var reply structs.JobRegisterResponse
	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: changed}, &reply)
	must.ErrorContains(t, err, `cannot update job from type "service" to "batch"`)
}

func TestJobEndpoint_EnforceIndex(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	register := func(index uint64) (*structs.JobRegisterResponse, error) {
		var reply structs.JobRegisterResponse
		j := job.Copy()
		j.Meta = map[string]string{"at": time.Now().String()}
		err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: j, EnforceIndex: true, JobModifyIndex: index}, &reply)
		return &reply, err
	}
	_, err := register(5)
	mustCoded(t, err, 400, "Enforcing job modify index 5: job does not exist")
	first, err := register(0)
	must.NoError(t, err)

	before := latestIndex(t, s)
	_, err = register(0)
	mustCoded(t, err, 400, "Enforcing job modify index 0: job already exists")
	_, err = register(first.JobModifyIndex - 1)
	must.ErrorContains(t, err, "job exists with conflicting job modify index")
	must.Eq(t, before, latestIndex(t, s))

	second, err := register(first.JobModifyIndex)
	must.NoError(t, err)
	must.Greater(t, first.JobModifyIndex, second.JobModifyIndex)
}

func TestJobEndpoint_RejectJobRegistration(t *testing.T) {
	s := newTestServer(t, nil)
	cfg := *structs.DefaultSchedulerConfiguration()
	cfg.RejectJobRegistration = true
	var set structs.SchedulerSetConfigurationResponse
	must.NoError(t, s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: cfg}, &set))

	before := latestIndex(t, s)
	var reply structs.JobRegisterResponse
	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: mock.Job()}, &reply)
	must.ErrorIs(t, err, structs.ErrJobRegistrationOff)
	must.Eq(t, before, latestIndex(t, s))
}

func TestJobEndpoint_TemplatesGetNoEval(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.BatchJob()
	job.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "*/15 * * * *"}
	reply := registerJob(t, s, job)
	must.Eq(t, "", reply.EvalID)
	must.Eq(t, uint64(0), reply.EvalCreateIndex)
	evals, _ := s.State().EvalsByJob(nil, job.Namespace, job.ID)
	must.SliceEmpty(t, evals)
}

func TestJobEndpoint_RegisterCancelsTheSupersededDeployment(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	registerJob(t, s, job)
	stored, _ := s.State().JobByID(nil, job.Namespace, job.ID)
	d := structs.NewDeployment(stored, 50, time.Now())
	_, _, err := s.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Deployment: d})
	must.NoError(t, err)

	update := job.Copy()
	update.TaskGroups[0].Count = 5
	registerJob(t, s, update)
	got, _ := s.State().DeploymentByID(nil, d.ID)
	must.Eq(t, structs.DeploymentStatusCancelled, got.Status)
	must.Eq(t, structs.DeploymentStatusDescriptionNewerJob, got.StatusDescription)
}

func TestJobEndpoint_DeregisterAndEvaluate(t *testing.T) {
	s := newTestServer(t, nil)
	node := mock.Node()
	registerNode(t, s, node)
	job := mock.Job()
	registerJob(t, s, job)
	alloc := placeAlloc(t, s, job, node, 0)

	var eval structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Evaluate", &structs.JobEvaluateRequest{JobID: job.ID}, &eval))
	must.NotEq(t, "", eval.EvalID)

	// Force-rescheduling marks the failed alloc in the eval's entry.
	var ack structs.GenericResponse
	must.NoError(t, s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{
		{ID: alloc.ID, ClientStatus: structs.AllocClientStatusFailed}}}, &ack))
	must.NoError(t, s.RPC("Job.Evaluate", &structs.JobEvaluateRequest{JobID: job.ID,
		EvalOptions: structs.EvalOptions{ForceReschedule: true}}, &eval))
	got, _ := s.State().AllocByID(nil, alloc.ID)
	must.True(t, got.DesiredTransition.ShouldForceReschedule())
	e, _ := s.State().EvalByID(nil, eval.EvalID)
	must.Eq(t, got.AllocModifyIndex, e.CreateIndex)

	var dereg structs.JobDeregisterResponse
	must.NoError(t, s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: job.ID}, &dereg))
	stopped, _ := s.State().JobByID(nil, job.Namespace, job.ID)
	must.True(t, stopped.Stop)
	must.Eq(t, dereg.JobModifyIndex, stopped.JobModifyIndex)
	e, _ = s.State().EvalByID(nil, dereg.EvalID)
	must.Eq(t, structs.EvalTriggerJobDeregister, e.TriggeredBy)

	must.NoError(t, s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: job.ID, Purge: true}, &dereg))
	gone, _ := s.State().JobByID(nil, job.Namespace, job.ID)
	must.Nil(t, gone)

	// Deregistering a job that is gone succeeds, with an eval, as in Nomad.
	dereg = structs.JobDeregisterResponse{}
	must.NoError(t, s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: job.ID}, &dereg))
	must.UUIDv4(t, dereg.EvalID)
	e, _ = s.State().EvalByID(nil, dereg.EvalID)
	must.Eq(t, structs.JobTypeService, e.Type)
	err := s.RPC("Job.Evaluate", &structs.JobEvaluateRequest{JobID: job.ID}, &eval)
	must.ErrorIs(t, err, structs.ErrUnknownJob)
	err = s.RPC("Job.Deregister", &structs.JobDeregisterRequest{}, &dereg)
	must.True(t, structs.IsValidationError(err))
}

func TestJobEndpoint_Reads(t *testing.T) {
	s := newTestServer(t, nil)
	node := mock.Node()
	registerNode(t, s, node)
	job := mock.Job()
	reg := registerJob(t, s, job)
	placeAlloc(t, s, job, node, 0)
	update := job.Copy()
	update.TaskGroups[0].Count = 4
	registerJob(t, s, update)

	var one structs.SingleJobResponse
	must.NoError(t, s.RPC("Job.GetJob", &structs.JobSpecificRequest{JobID: job.ID}, &one))
	must.Eq(t, 4, one.Job.TaskGroups[0].Count)
	must.Eq(t, one.Job.ModifyIndex, one.Index)

	var list structs.JobListResponse
	must.NoError(t, s.RPC("Job.List", &structs.JobListRequest{Fields: &structs.JobStubFields{Meta: true}}, &list))
	must.Len(t, 1, list.Jobs)
	must.NotNil(t, list.Jobs[0].JobSummary)
	must.Eq(t, job.Meta, list.Jobs[0].Meta)

	var allocs structs.JobAllocationsResponse
	must.NoError(t, s.RPC("Job.Allocations", &structs.JobSpecificRequest{JobID: job.ID}, &allocs))
	must.Len(t, 1, allocs.Allocations)
	var evals structs.JobEvaluationsResponse
	must.NoError(t, s.RPC("Job.Evaluations", &structs.JobSpecificRequest{JobID: job.ID}, &evals))
	must.Len(t, 2, evals.Evaluations)
	var summary structs.JobSummaryResponse
	must.NoError(t, s.RPC("Job.Summary", &structs.JobSpecificRequest{JobID: job.ID}, &summary))
	must.Eq(t, 1, summary.JobSummary.Summary["web"].Starting)

	var versions structs.JobVersionsResponse
	must.NoError(t, s.RPC("Job.GetJobVersions", &structs.JobVersionsRequest{JobID: job.ID, Diffs: true}, &versions))
	must.Len(t, 2, versions.Versions)
	must.Eq(t, uint64(1), versions.Versions[0].Version)
	must.Len(t, 1, versions.Diffs)
	must.Eq(t, structs.DiffTypeEdited, versions.Diffs[0].Type)

	var none structs.SingleJobResponse
	must.NoError(t, s.RPC("Job.GetJob", &structs.JobSpecificRequest{JobID: "nope"}, &none))
	must.Nil(t, none.Job)
	must.GreaterEq(t, reg.Index, none.Index)
}

func TestJobEndpoint_Validate(t *testing.T) {
	s := newTestServer(t, nil)
	bad := mock.Job()
	bad.TaskGroups[0].Count = -1
	bad.TaskGroups[0].Tasks[0].Driver = ""
	var reply structs.JobValidateResponse
	must.NoError(t, s.RPC("Job.Validate", &structs.JobValidateRequest{Job: bad}, &reply))
	must.GreaterEq(t, 2, len(reply.ValidationErrors))
	must.NotEq(t, "", reply.Error)

	must.NoError(t, s.RPC("Job.Validate", &structs.JobValidateRequest{Job: mock.Job()}, &reply))
	must.SliceEmpty(t, reply.ValidationErrors)
	must.Eq(t, "", reply.Error)
}

// Validate checks the config blocks of the drivers built in and says
// whether it could check every task's block.
func TestJobEndpoint_ValidateDriverConfig(t *testing.T) {
	s := newTestServer(t, nil)
	cases := []struct {
		name      string
		driver    string
		config    map[string]interface{}
		validated bool
		problem   string
	}{
		{"raw_exec, good", "raw_exec", map[string]interface{}{"command": "/bin/true"}, true, ""},
		{"raw_exec, no command", "raw_exec", map[string]interface{}{"args": []interface{}{"x"}}, true, "missing command"},
		{"raw_exec, unknown key", "raw_exec", map[string]interface{}{"command": "/bin/true", "comand": "x"}, true, `unknown field "comand"`},
		{"exec, wrong type", "exec", map[string]interface{}{"command": 3}, true, "command"},
		{"mock_driver, good", "mock_driver", map[string]interface{}{"run_for": "1s"}, true, ""},
		{"a driver only a client knows", "docker", map[string]interface{}{"image": "redis"}, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := mock.Job()
			task := job.TaskGroups[0].Tasks[0]
			task.Driver, task.Config = tc.driver, tc.config
			var reply structs.JobValidateResponse
			must.NoError(t, s.RPC("Job.Validate", &structs.JobValidateRequest{Job: job}, &reply))
			must.Eq(t, tc.validated, reply.DriverConfigValidated)
			if tc.problem == "" {
				must.SliceEmpty(t, reply.ValidationErrors)
				return
			}
			must.Len(t, 1, reply.ValidationErrors)
			must.StrContains(t, reply.ValidationErrors[0], fmt.Sprintf("task %q: driver %q", task.Name, tc.driver))
			must.StrContains(t, reply.ValidationErrors[0], tc.problem)
		})
	}
}

func TestJobEndpoint_BlockingQueryWakesOnWrite(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	first := registerJob(t, s, job)

	type result struct {
		reply structs.SingleJobResponse
		err   error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.err = s.RPC("Job.GetJob", &structs.JobSpecificRequest{JobID: job.ID,
			QueryOptions: structs.QueryOptions{MinQueryIndex: first.JobModifyIndex, MaxQueryTime: time.Minute}}, &r.reply)
		done <- r
	}()
	select {
	case <-done:
		t.Fatal("a blocking query must wait for a newer index")
	case <-time.After(50 * time.Millisecond):
	}
	update := job.Copy()
	update.TaskGroups[0].Count = 7
	second := registerJob(t, s, update)
	select {
	case r := <-done:
		must.NoError(t, r.err)
		must.Eq(t, second.JobModifyIndex, r.reply.Index)
		must.Eq(t, 7, r.reply.Job.TaskGroups[0].Count)
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking query did not wake up")
	}
}

func TestJobEndpoint_BlockingQueryTimesOutOnTheClock(t *testing.T) {
	fake := clock.NewFake(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newTestServer(t, func(c *Config) { c.Clock = fake })
	job := mock.Job()
	first := registerJob(t, s, job)

	armed := fake.Pending()
	done := make(chan *structs.SingleJobResponse, 1)
	go func() {
		var reply structs.SingleJobResponse
		must.NoError(t, s.RPC("Job.GetJob", &structs.JobSpecificRequest{JobID: job.ID,
			QueryOptions: structs.QueryOptions{MinQueryIndex: first.JobModifyIndex, MaxQueryTime: time.Second}}, &reply))
		done <- &reply
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	must.NoError(t, fake.BlockUntil(ctx, armed+1))
	// The wait is the requested time plus up to 1/16 of it as jitter.
	fake.Advance(time.Second + time.Second/16)
	select {
	case reply := <-done:
		must.Eq(t, first.JobModifyIndex, reply.Index, must.Sprint("a timed out query answers with what it has"))
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking query did not time out")
	}
}

// planTestScheduler stands in for the service scheduler in Job.Plan's
// test: it places one alloc per group on the first node, reports one
// group it could not place, and creates a blocked eval.
type planTestScheduler struct {
	state   scheduler.State
	planner scheduler.Planner
}

func (p *planTestScheduler) Process(eval *structs.Evaluation) error {
	job, err := p.state.JobByID(eval.Namespace, eval.JobID)
	if err != nil {
		return err
	}
	nodes, err := p.state.Nodes()
	if err != nil {
		return err
	}
	if !eval.AnnotatePlan {
		return errors.New("a dry run must ask for annotations")
	}
	plan := eval.MakePlan(job)
	plan.Annotations = &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{}}
	for _, tg := range job.TaskGroups {
		plan.AppendAlloc(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0])))
		plan.Annotations.DesiredTGUpdates[tg.Name] = &structs.DesiredUpdates{Place: 1}
	}
	if _, _, err := p.planner.SubmitPlan(plan); err != nil {
		return err
	}
	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	done.FailedTGAllocs = map[string]*structs.AllocMetric{"web": {NodesEvaluated: len(nodes), NodesExhausted: 1}}
	if err := p.planner.CreateEval(eval.CreateBlockedEval(nil, false, done.FailedTGAllocs, time.Now())); err != nil {
		return err
	}
	return p.planner.UpdateEval(done)
}

func TestJobEndpoint_PlanIsADryRun(t *testing.T) {
	planTest := func(_ *scheduler.Config, st scheduler.State, pl scheduler.Planner) scheduler.Scheduler {
		return &planTestScheduler{state: st, planner: pl}
	}
	// The periodic batch job at the end is planned by the test scheduler
	// too.
	s := newTestServer(t, func(c *Config) {
		c.Schedulers = scheduler.Builtin()
		c.Schedulers[structs.JobTypeService] = planTest
		c.Schedulers[structs.JobTypeBatch] = planTest
	})
	registerNode(t, s, mock.Node())
	job := mock.Job()
	registerJob(t, s, job)
	stored, _ := s.State().JobByID(nil, job.Namespace, job.ID)
	before := latestIndex(t, s)

	update := job.Copy()
	update.TaskGroups[0].Count = 9
	var reply structs.JobPlanResponse
	must.NoError(t, s.RPC("Job.Plan", &structs.JobPlanRequest{Job: update, Diff: true}, &reply))
	must.Eq(t, before, latestIndex(t, s), must.Sprint("a dry run writes nothing"))
	must.Eq(t, uint64(1), reply.Annotations.DesiredTGUpdates["web"].Place)
	must.Eq(t, 1, reply.FailedTGAllocs["web"].NodesExhausted)
	must.Len(t, 1, reply.CreatedEvals)
	must.Eq(t, stored.JobModifyIndex, reply.JobModifyIndex)
	must.Eq(t, structs.DiffTypeEdited, reply.Diff.Type)
	must.Eq(t, uint64(1), reply.Diff.TaskGroups[0].Updates[structs.UpdateTypeCreate])
	got, _ := s.State().JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, 3, got.TaskGroups[0].Count)

	bad := mock.Job()
	bad.TaskGroups[0].Count = -2
	err := s.RPC("Job.Plan", &structs.JobPlanRequest{Job: bad}, &reply)
	must.True(t, structs.IsValidationError(err))

	periodic := mock.BatchJob()
	periodic.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "0 * * * *"}
	must.NoError(t, s.RPC("Job.Plan", &structs.JobPlanRequest{Job: periodic}, &reply))
	must.Eq(t, 0, reply.NextPeriodicLaunch.Minute())
	must.True(t, reply.NextPeriodicLaunch.After(time.Now()))
}

// The server's job_max_count applies to register, plan and validate alike.
func TestJobEndpoint_CountLimitIsTheServers(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.JobMaxCount = 20 })
	job := mock.Job()
	job.TaskGroups[0].Count = 21
	var reg structs.JobRegisterResponse
	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job.Copy()}, &reg)
	must.True(t, structs.IsValidationError(err), must.Sprintf("error %v", err))
	must.StrContains(t, err.Error(), "limit of 20 allocations per job")

	var plan structs.JobPlanResponse
	err = s.RPC("Job.Plan", &structs.JobPlanRequest{Job: job.Copy()}, &plan)
	must.True(t, structs.IsValidationError(err), must.Sprintf("error %v", err))

	var val structs.JobValidateResponse
	must.NoError(t, s.RPC("Job.Validate", &structs.JobValidateRequest{Job: job.Copy()}, &val))
	must.StrContains(t, val.Error, "limit of 20 allocations per job")

	job.TaskGroups[0].Count = 20
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job.Copy()}, &reg))
}

// A job that could be committed but not decoded again never reaches Raft:
// validation bounds the driver config's depth, and the Raft write checks
// the encoded entry as a last line.
func TestJobEndpoint_DeepConfigNeverReachesRaft(t *testing.T) {
	s := newTestServer(t, nil)
	deep := func(depth int) *structs.Job {
		j := mock.Job()
		var v interface{} = "leaf"
		for range depth {
			v = map[string]interface{}{"a": v}
		}
		j.TaskGroups[0].Tasks[0].Config = map[string]interface{}{"nested": v}
		return j
	}
	for _, depth := range []int{structs.MaxConfigDepth, 10_000} {
		before := latestIndex(t, s)
		var reply structs.JobRegisterResponse
		err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: deep(depth)}, &reply)
		must.True(t, structs.IsValidationError(err), must.Sprintf("depth %d: error %v", depth, err))
		must.StrContains(t, err.Error(), "config: nests deeper than 32 levels")
		must.Eq(t, before, latestIndex(t, s))
	}

	before := latestIndex(t, s)
	job := deep(2000)
	job.Canonicalize()
	_, _, err := s.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	must.ErrorIs(t, err, structs.ErrEntryTooDeep)
	must.True(t, structs.IsValidationError(err))
	must.Eq(t, before, latestIndex(t, s))
	registerJob(t, s, mock.Job())
}

func TestJobEndpoint_RegisterPreservesCountsAndResources(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	registerJob(t, s, job)
	stored, _ := s.State().JobByID(nil, job.Namespace, job.ID)
	wantCount := stored.TaskGroups[0].Count
	wantCPU := stored.TaskGroups[0].Tasks[0].Resources.CPU

	update := stored.Copy()
	update.TaskGroups[0].Count = wantCount + 3
	update.TaskGroups[0].Tasks[0].Resources.CPU = wantCPU + 50
	var reply structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: update,
		PreserveCounts: true, PreserveResources: true}, &reply))
	got, _ := s.State().JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, wantCount, got.TaskGroups[0].Count)
	must.Eq(t, wantCPU, got.TaskGroups[0].Tasks[0].Resources.CPU)
}
