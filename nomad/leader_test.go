package nomad

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/coresched"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// writeEval writes evals straight through Raft.
func writeEval(t *testing.T, s *Server, evals ...*structs.Evaluation) uint64 {
	t.Helper()
	_, index, err := s.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals})
	must.NoError(t, err)
	return index
}

func TestLeader_RebuildsBrokerAndBlockedEvalsFromState(t *testing.T) {
	dir := t.TempDir()
	onDisk := func(c *Config) { c.DevMode, c.DataDir = false, dir }
	p1, broker1, blocked1, plans1 := fakePipeline()
	s1 := newTestServerWith(t, onDisk, p1)
	must.True(t, broker1.Enabled())
	must.True(t, blocked1.isEnabled())

	job := mock.Job()
	pendingID := registerJob(t, s1, job).EvalID
	blocked := mock.Eval(mock.EvalForJob(job), mock.EvalStatus(structs.EvalStatusBlocked))
	writeEval(t, s1, blocked)
	enqueued, _, _ := broker1.snapshot()
	must.Len(t, 1, enqueued, must.Sprint("the FSM hands the new pending eval to the leader's broker"))
	must.Eq(t, pendingID, enqueued[0].ID)
	must.Eq(t, []string{blocked.ID}, blocked1.blocked)
	must.NoError(t, s1.Shutdown())
	must.False(t, broker1.Enabled(), must.Sprint("losing leadership disables the broker"))
	must.False(t, blocked1.isEnabled())
	must.False(t, plans1.enabled)

	p2, broker2, blocked2, plans2 := fakePipeline()
	newTestServerWith(t, onDisk, p2)
	_, restored, _ := broker2.snapshot()
	must.Len(t, 1, restored)
	must.Eq(t, pendingID, restored[0].ID)
	must.Eq(t, []string{blocked.ID}, blocked2.blocked)
	must.True(t, plans2.enabled)
}

func TestLeader_SchedulerConfigPausesTheBroker(t *testing.T) {
	p, broker, blocked, _ := fakePipeline()
	s := newTestServerWith(t, func(c *Config) { c.DefaultSchedulerConfig.PauseEvalBroker = true }, p)
	must.False(t, broker.Enabled(), must.Sprint("the default configuration pauses the broker"))
	registerJob(t, s, mock.Job())

	setPause := func(pause bool) {
		t.Helper()
		var get structs.SchedulerConfigurationResponse
		must.NoError(t, s.RPC("Operator.SchedulerGetConfiguration", &structs.GenericRequest{}, &get))
		cfg := *get.SchedulerConfig
		cfg.PauseEvalBroker = pause
		var set structs.SchedulerSetConfigurationResponse
		must.NoError(t, s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: cfg, CAS: true}, &set))
		must.True(t, set.Updated)
	}
	setPause(false)
	must.True(t, broker.Enabled())
	must.True(t, blocked.isEnabled())
	_, restored, _ := broker.snapshot()
	must.Len(t, 1, restored, must.Sprint("resuming restores the evals written while paused"))

	setPause(true)
	must.False(t, broker.Enabled())
	must.False(t, blocked.isEnabled())

	// While paused, workers get empty answers instead of errors.
	var reply structs.EvalDequeueResponse
	must.NoError(t, s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService},
		Timeout: time.Millisecond, SchedulerVersion: structs.SchedulerVersion}, &reply))
	must.Nil(t, reply.Eval)
}

func TestLeader_OperatorConfigCASAndValidation(t *testing.T) {
	s := newTestServer(t, nil)
	var get structs.SchedulerConfigurationResponse
	must.NoError(t, s.RPC("Operator.SchedulerGetConfiguration", &structs.GenericRequest{}, &get))
	cfg := *get.SchedulerConfig
	cfg.SchedulerAlgorithm = structs.SchedulerAlgorithmSpread
	stale := cfg
	stale.ModifyIndex--
	var set structs.SchedulerSetConfigurationResponse
	must.NoError(t, s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: stale, CAS: true}, &set))
	must.False(t, set.Updated)
	must.NoError(t, s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: cfg, CAS: true}, &set))
	must.True(t, set.Updated)

	// A plain (not CAS) write always applies and says so, as Nomad does.
	set = structs.SchedulerSetConfigurationResponse{}
	must.NoError(t, s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: stale}, &set))
	must.True(t, set.Updated)

	bad := cfg
	bad.SchedulerAlgorithm = "random"
	err := s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: bad}, &set)
	must.True(t, structs.IsValidationError(err))
	must.ErrorContains(t, err, "invalid scheduler algorithm: random")
}

// recordingObserver logs leadership changes.
type recordingObserver struct {
	mu  sync.Mutex
	log []string
	ctx context.Context
}

func (o *recordingObserver) LeadershipGained(ctx context.Context) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.log = append(o.log, "gained")
	o.ctx = ctx
}

func (o *recordingObserver) LeadershipLost() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.log = append(o.log, "lost")
}

func TestLeader_ObserversFollowLeadership(t *testing.T) {
	s := newTestServer(t, nil)
	o := &recordingObserver{}
	s.AddLeadershipObserver(o)
	must.Eq(t, []string{"gained"}, o.log, must.Sprint("an observer added to a leader is told at once"))
	must.NoError(t, o.ctx.Err())
	s.revokeLeadership()
	must.Eq(t, []string{"gained", "lost"}, o.log)
	must.Error(t, o.ctx.Err(), must.Sprint("the leadership context ends on revoke"))
}

func TestLeader_FailedEvalsGetAFollowUp(t *testing.T) {
	p, broker, _, _ := fakePipeline()
	s := newTestServerWith(t, nil, p)
	job := mock.Job()
	evalID := registerJob(t, s, job).EvalID
	eval, _ := s.State().EvalByID(nil, evalID)
	broker.fail(eval)

	var failed *structs.Evaluation
	waitFor(t, func() bool {
		failed, _ = s.State().EvalByID(nil, evalID)
		return failed.Status == structs.EvalStatusFailed
	})
	must.Eq(t, fmt.Sprintf(structs.EvalDescDeliveryLimit, 3), failed.StatusDescription)
	followUp, _ := s.State().EvalByID(nil, failed.NextEval)
	must.NotNil(t, followUp)
	must.Eq(t, structs.EvalTriggerFailedFollowUp, followUp.TriggeredBy)
	must.Eq(t, structs.EvalStatusPending, followUp.Status)
	must.Eq(t, evalID, followUp.PreviousEval)
	must.Between(t, time.Minute, followUp.Wait, 6*time.Minute)
	waitFor(t, func() bool {
		_, _, acked := broker.snapshot()
		return len(acked) == 1
	})

	// A failed core eval is only acked: nothing of it is in state.
	core := coresched.NewEval(structs.CoreJobEvalGC, 1, time.Now())
	broker.fail(core)
	waitFor(t, func() bool {
		_, _, acked := broker.snapshot()
		return len(acked) == 2
	})
	got, _ := s.State().EvalByID(nil, core.ID)
	must.Nil(t, got)
}

func TestLeader_CancelsSupersededAndDuplicateEvals(t *testing.T) {
	p, broker, blocked, _ := fakePipeline()
	s := newTestServerWith(t, nil, p)
	job := mock.Job()
	superseded := mock.Eval(mock.EvalForJob(job))
	dup := mock.Eval(mock.EvalForJob(job), mock.EvalStatus(structs.EvalStatusBlocked))
	writeEval(t, s, superseded, dup)

	broker.supersede(superseded)
	waitFor(t, func() bool {
		e, _ := s.State().EvalByID(nil, superseded.ID)
		return e.Status == structs.EvalStatusCanceled
	})
	e, _ := s.State().EvalByID(nil, superseded.ID)
	must.Eq(t, structs.EvalDescCanceledNewer, e.StatusDescription)

	stored, _ := s.State().EvalByID(nil, dup.ID)
	blocked.dups <- []*structs.Evaluation{stored}
	waitFor(t, func() bool {
		e, _ := s.State().EvalByID(nil, dup.ID)
		return e.Status == structs.EvalStatusCanceled
	})
	e, _ = s.State().EvalByID(nil, dup.ID)
	must.Eq(t, fmt.Sprintf(structs.EvalDescDuplicateBlock, job.ID), e.StatusDescription)
}

func TestLeader_SchedulesGarbageCollection(t *testing.T) {
	fake := clock.NewFake(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	p, broker, _, _ := fakePipeline()
	s := newTestServerWith(t, func(c *Config) {
		c.Clock = fake
		c.EvalGCInterval = time.Minute
		c.JobGCInterval = 2 * time.Minute
	}, p)
	coreJobs := func() []string {
		enqueued, _, _ := broker.snapshot()
		var kinds []string
		for _, e := range enqueued {
			if e.Type == structs.JobTypeCore {
				kinds = append(kinds, e.JobID)
			}
		}
		return kinds
	}
	fake.Advance(time.Minute)
	waitFor(t, func() bool { return len(coreJobs()) == 1 })
	must.Eq(t, []string{structs.CoreJobEvalGC}, coreJobs())
	fake.Advance(time.Minute)
	waitFor(t, func() bool { return len(coreJobs()) == 3 })
	must.SliceContainsAll(t, []string{structs.CoreJobEvalGC, structs.CoreJobEvalGC, structs.CoreJobJobGC}, coreJobs())

	var reply structs.GenericResponse
	must.NoError(t, s.RPC("System.GarbageCollect", &structs.GenericRequest{}, &reply))
	must.SliceContains(t, coreJobs(), structs.CoreJobForceGC)
	enqueued, _, _ := broker.snapshot()
	force := enqueued[len(enqueued)-1]
	must.Eq(t, structs.CoreJobPriority, force.Priority)
	must.Eq(t, "-", force.Namespace)
	must.Eq(t, latestIndex(t, s), force.ModifyIndex)
}

func TestEvalEndpoint_WorkerProtocol(t *testing.T) {
	p, broker, blocked, plans := fakePipeline()
	s := newTestServerWith(t, nil, p)
	job := mock.Job()
	evalID := registerJob(t, s, job).EvalID
	// A later eval of the same job raises the index the worker waits for.
	later := mock.Eval(mock.EvalForJob(job), mock.EvalStatus(structs.EvalStatusBlocked))
	laterIndex := writeEval(t, s, later)

	var deq structs.EvalDequeueResponse
	err := s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService},
		SchedulerVersion: 99}, &deq)
	must.ErrorIs(t, err, structs.ErrSchedulerVersion)
	must.NoError(t, s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService},
		Timeout: time.Second, SchedulerVersion: structs.SchedulerVersion}, &deq))
	must.Eq(t, evalID, deq.Eval.ID)
	must.NotEq(t, "", deq.Token)
	must.Eq(t, laterIndex, deq.WaitIndex)

	// Plans need the delivery's token.
	plans.result = &structs.PlanResult{AllocIndex: 77}
	plan := deq.Eval.MakePlan(job)
	plan.EvalToken = "stolen"
	var planReply structs.PlanResponse
	err = s.RPC("Plan.Submit", &structs.PlanRequest{Plan: plan}, &planReply)
	must.ErrorIs(t, err, structs.ErrTokenMismatch)
	plan.EvalToken = deq.Token
	must.NoError(t, s.RPC("Plan.Submit", &structs.PlanRequest{Plan: plan}, &planReply))
	must.Eq(t, uint64(77), planReply.Index)
	must.Len(t, 1, plans.plans)
	must.False(t, broker.paused[evalID], must.Sprint("the nack timer resumes after the plan"))

	// The worker's writes carry the token.
	blockedEval := deq.Eval.CreateBlockedEval(nil, false, nil, time.Now())
	var ack structs.GenericResponse
	err = s.RPC("Eval.Create", &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{blockedEval}, EvalToken: "x"}, &ack)
	must.ErrorIs(t, err, structs.ErrTokenMismatch)
	must.NoError(t, s.RPC("Eval.Create", &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{blockedEval}, EvalToken: deq.Token}, &ack))
	err = s.RPC("Eval.Create", &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{blockedEval}, EvalToken: deq.Token}, &ack)
	must.ErrorContains(t, err, "evaluation already exists")

	done := deq.Eval.Copy()
	done.Status = structs.EvalStatusComplete
	must.NoError(t, s.RPC("Eval.Update", &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done}, EvalToken: deq.Token}, &ack))
	stored, _ := s.State().EvalByID(nil, evalID)
	must.Eq(t, structs.EvalStatusComplete, stored.Status)
	err = s.RPC("Eval.Update", &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done, done}, EvalToken: deq.Token}, &ack)
	must.True(t, structs.IsValidationError(err))

	// Reblock only applies to an eval blocked in state.
	err = s.RPC("Eval.Reblock", &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{deq.Eval}, EvalToken: deq.Token}, &ack)
	must.ErrorContains(t, err, "not already in a blocked state")

	must.NoError(t, s.RPC("Eval.Ack", &structs.EvalAckRequest{EvalID: evalID, Token: deq.Token}, &ack))
	err = s.RPC("Eval.Ack", &structs.EvalAckRequest{EvalID: evalID, Token: deq.Token}, &ack)
	must.ErrorIs(t, err, structs.ErrNotOutstanding)
	err = s.RPC("Eval.Nack", &structs.EvalAckRequest{}, &ack)
	must.True(t, structs.IsValidationError(err))

	// A blocked eval, dequeued, can be reblocked without a write.
	reblock := mock.Eval(mock.EvalForJob(mock.Job()), mock.EvalStatus(structs.EvalStatusBlocked))
	writeEval(t, s, reblock)
	stored, _ = s.State().EvalByID(nil, reblock.ID)
	broker.Enqueue(stored)
	must.NoError(t, s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService},
		Timeout: time.Second, SchedulerVersion: structs.SchedulerVersion}, &deq))
	before := latestIndex(t, s)
	must.NoError(t, s.RPC("Eval.Reblock", &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{deq.Eval}, EvalToken: deq.Token}, &ack))
	must.Eq(t, before, latestIndex(t, s))
	must.Eq(t, []string{reblock.ID}, blocked.reblocked)
	must.NoError(t, s.RPC("Eval.Nack", &structs.EvalAckRequest{EvalID: reblock.ID, Token: deq.Token}, &ack))
}

func TestEvalEndpoint_Reads(t *testing.T) {
	s := newTestServer(t, nil)
	node := mock.Node()
	registerNode(t, s, node)
	job := mock.Job()
	evalID := registerJob(t, s, job).EvalID
	stored, _ := s.State().JobByID(nil, job.Namespace, job.ID)
	alloc := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
	alloc.EvalID = evalID
	_, _, err := s.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{alloc}, Job: stored}})
	must.NoError(t, err)
	eval, _ := s.State().EvalByID(nil, evalID)
	next := eval.CreateBlockedEval(nil, false, nil, time.Now())
	linked := eval.Copy()
	linked.BlockedEval = next.ID
	linked.Status = structs.EvalStatusComplete
	writeEval(t, s, linked, next)

	var one structs.SingleEvalResponse
	must.NoError(t, s.RPC("Eval.GetEval", &structs.EvalSpecificRequest{EvalID: evalID, IncludeRelated: true}, &one))
	must.Len(t, 1, one.Eval.RelatedEvals)
	must.Eq(t, next.ID, one.Eval.RelatedEvals[0].ID)

	var list structs.EvalListResponse
	must.NoError(t, s.RPC("Eval.List", &structs.EvalListRequest{FilterJobID: job.ID,
		FilterEvalStatus: structs.EvalStatusBlocked}, &list))
	must.Len(t, 1, list.Evaluations)
	must.NoError(t, s.RPC("Eval.List", &structs.EvalListRequest{QueryOptions: structs.QueryOptions{Prefix: evalID[:6]}}, &list))
	must.Len(t, 1, list.Evaluations)

	var allocs structs.EvalAllocationsResponse
	must.NoError(t, s.RPC("Eval.Allocations", &structs.EvalSpecificRequest{EvalID: evalID}, &allocs))
	must.Len(t, 1, allocs.Allocations)
}

func TestAllocEndpoint(t *testing.T) {
	s := newTestServer(t, nil)
	node := mock.Node()
	registerNode(t, s, node)
	job := mock.Job()
	registerJob(t, s, job)
	alloc := placeAlloc(t, s, job, node, 0)

	var one structs.SingleAllocResponse
	must.NoError(t, s.RPC("Alloc.GetAlloc", &structs.AllocSpecificRequest{AllocID: alloc.ID}, &one))
	must.Eq(t, alloc.ID, one.Alloc.ID)
	var many structs.AllocsGetResponse
	must.NoError(t, s.RPC("Alloc.GetAllocs", &structs.AllocsGetRequest{AllocIDs: []string{alloc.ID, "gone"}}, &many))
	must.Len(t, 1, many.Allocs)
	var list structs.AllocListResponse
	must.NoError(t, s.RPC("Alloc.List", &structs.AllocListRequest{Fields: &structs.AllocStubFields{Resources: true}}, &list))
	must.Len(t, 1, list.Allocations)
	must.NotNil(t, list.Allocations[0].AllocatedResources)

	var stop structs.AllocStopResponse
	must.NoError(t, s.RPC("Alloc.Stop", &structs.AllocStopRequest{AllocID: alloc.ID}, &stop))
	got, _ := s.State().AllocByID(nil, alloc.ID)
	must.True(t, got.DesiredTransition.ShouldMigrate())
	must.Nil(t, got.DesiredTransition.Reschedule)
	eval, _ := s.State().EvalByID(nil, stop.EvalID)
	must.Eq(t, structs.EvalTriggerAllocStop, eval.TriggeredBy)
	must.Eq(t, stop.Index, eval.CreateIndex)
	must.Eq(t, stop.Index, got.AllocModifyIndex)

	// ?reschedule=true marks the alloc for rescheduling as well.
	must.NoError(t, s.RPC("Alloc.Stop", &structs.AllocStopRequest{AllocID: alloc.ID, Reschedule: true}, &stop))
	got, _ = s.State().AllocByID(nil, alloc.ID)
	must.True(t, *got.DesiredTransition.Reschedule)

	err := s.RPC("Alloc.Stop", &structs.AllocStopRequest{AllocID: "nope"}, &stop)
	must.ErrorIs(t, err, structs.ErrUnknownAlloc)
}
