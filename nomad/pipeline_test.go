package nomad

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// These tests run the server with its real eval broker, blocked-evals
// tracker and plan queue.

// dequeue takes one eval of the given types through the endpoint.
func dequeue(t *testing.T, s *Server, types ...string) *structs.EvalDequeueResponse {
	t.Helper()
	var reply structs.EvalDequeueResponse
	must.NoError(t, s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{Schedulers: types,
		Timeout: 5 * time.Second, SchedulerVersion: structs.SchedulerVersion}, &reply))
	must.NotNil(t, reply.Eval)
	return &reply
}

func TestPipeline_RegisteredJobReachesAWorker(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	reg := registerJob(t, s, job)

	deq := dequeue(t, s, structs.JobTypeService, structs.JobTypeBatch)
	must.Eq(t, reg.EvalID, deq.Eval.ID)
	must.Eq(t, reg.EvalCreateIndex, deq.WaitIndex)

	done := deq.Eval.Copy()
	done.Status = structs.EvalStatusComplete
	var ack structs.GenericResponse
	must.NoError(t, s.RPC("Eval.Update", &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done}, EvalToken: deq.Token}, &ack))
	must.NoError(t, s.RPC("Eval.Ack", &structs.EvalAckRequest{EvalID: done.ID, Token: deq.Token}, &ack))
	err := s.RPC("Eval.Ack", &structs.EvalAckRequest{EvalID: done.ID, Token: deq.Token}, &ack)
	must.Error(t, err)
}

func TestPipeline_OneEvalPerJobAndSupersededEvalsCanceled(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	first := registerJob(t, s, job).EvalID
	deq := dequeue(t, s, structs.JobTypeService)
	must.Eq(t, first, deq.Eval.ID)

	// Two more evals of the job wait behind the one in flight; when it is
	// acked the newest goes ahead and the other is canceled in state.
	second := registerJob(t, s, job.Copy()).EvalID
	third := registerJob(t, s, job.Copy()).EvalID
	var ack structs.GenericResponse
	must.NoError(t, s.RPC("Eval.Ack", &structs.EvalAckRequest{EvalID: first, Token: deq.Token}, &ack))
	next := dequeue(t, s, structs.JobTypeService)
	must.Eq(t, third, next.Eval.ID)
	waitFor(t, func() bool {
		e, _ := s.State().EvalByID(nil, second)
		return e.Status == structs.EvalStatusCanceled
	})
	e, _ := s.State().EvalByID(nil, second)
	must.Eq(t, structs.EvalDescCanceledNewer, e.StatusDescription)
}

func TestPipeline_DeliveryLimitFailsTheEvalWithAFollowUp(t *testing.T) {
	fake := clock.NewFake(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newTestServer(t, func(c *Config) {
		c.Clock = fake
		c.MinHeartbeatTTL = 1000 * time.Hour
	})
	job := mock.Job()
	evalID := registerJob(t, s, job).EvalID

	var ack structs.GenericResponse
	for i := 0; i < s.config.EvalDeliveryLimit; i++ {
		deq := dequeue(t, s, structs.JobTypeService)
		must.Eq(t, evalID, deq.Eval.ID)
		must.NoError(t, s.RPC("Eval.Nack", &structs.EvalAckRequest{EvalID: evalID, Token: deq.Token}, &ack))
		// Redelivery waits 1 s after the first nack, 20 s after the second.
		fake.Advance(s.config.EvalNackSubsequentReenqueueDelay)
	}
	var failed *structs.Evaluation
	waitFor(t, func() bool {
		failed, _ = s.State().EvalByID(nil, evalID)
		return failed.Status == structs.EvalStatusFailed
	})
	must.Eq(t, fmt.Sprintf(structs.EvalDescDeliveryLimit, s.config.EvalDeliveryLimit), failed.StatusDescription)
	followUp, _ := s.State().EvalByID(nil, failed.NextEval)
	must.NotNil(t, followUp)
	must.Eq(t, structs.EvalTriggerFailedFollowUp, followUp.TriggeredBy)

	// The follow-up waits its delay in the broker, on the clock.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan *structs.Evaluation, 1)
	go func() {
		e, _, _ := s.evalBroker.Dequeue(ctx, []string{structs.JobTypeService}, 0)
		got <- e
	}()
	fake.Advance(followUp.Wait)
	select {
	case e := <-got:
		must.Eq(t, followUp.ID, e.ID)
	case <-time.After(5 * time.Second):
		t.Fatal("the follow-up was not released after its wait")
	}
}

func TestPipeline_JobPlanRunsTheRealScheduler(t *testing.T) {
	s := newTestServer(t, nil)
	for i := 0; i < 2; i++ {
		registerNode(t, s, mock.Node())
	}
	job := mock.Job(mock.Count(3))
	before := latestIndex(t, s)
	var reply structs.JobPlanResponse
	must.NoError(t, s.RPC("Job.Plan", &structs.JobPlanRequest{Job: job, Diff: true}, &reply))
	must.Eq(t, before, latestIndex(t, s))
	must.NotNil(t, reply.Annotations)
	must.Eq(t, uint64(3), reply.Annotations.DesiredTGUpdates["web"].Place)
	must.MapEmpty(t, reply.FailedTGAllocs)
	must.Eq(t, structs.DiffTypeAdded, reply.Diff.Type)

	// More than fits: the dry run explains what could not be placed.
	big := mock.Job(mock.Count(3), mock.TaskResources(3500, 256))
	must.NoError(t, s.RPC("Job.Plan", &structs.JobPlanRequest{Job: big}, &reply))
	must.MapContainsKey(t, reply.FailedTGAllocs, "web")
	must.Positive(t, reply.FailedTGAllocs["web"].NodesExhausted)
	must.Len(t, 1, reply.CreatedEvals, must.Sprint("the blocked eval it would create"))
}

func TestPipeline_PlanSubmitNeedsTheLeaderQueueAndToken(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	registerJob(t, s, job)
	deq := dequeue(t, s, structs.JobTypeService)

	plan := deq.Eval.MakePlan(job)
	plan.EvalToken = "not-the-token"
	var reply structs.PlanResponse
	err := s.RPC("Plan.Submit", &structs.PlanRequest{Plan: plan}, &reply)
	must.ErrorIs(t, err, structs.ErrTokenMismatch)

	// With the right token the leader's applier judges and commits it.
	plan.EvalToken = deq.Token
	node := mock.Node()
	registerNode(t, s, node)
	stored, err := s.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	plan.Job = stored
	alloc := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
	alloc.EvalID = deq.Eval.ID
	plan.AppendAlloc(alloc)
	must.NoError(t, s.RPC("Plan.Submit", &structs.PlanRequest{Plan: plan}, &reply))
	must.NotNil(t, reply.Result)
	must.Positive(t, reply.Result.AllocIndex)
	got, err := s.State().AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.NotNil(t, got, must.Sprint("the applier committed the placement"))
	must.Eq(t, reply.Result.AllocIndex, got.CreateIndex)
}
