package nomad

import (
	"context"
	"fmt"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/broker"
	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/planapply/planapplytest"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/structs"
)

// localLeader is the leader side of scheduling in one process: a broker,
// a blocked-evals tracker, a plan queue and an applier over a Raft twin,
// all writing one statetest.Store. Its endpoints are the in-memory twin of
// the RPC endpoints workers call; its fsm hooks play the FSM's leader-side
// effects (enqueue pending evals, track blocked ones).
type localLeader struct {
	t       testing.TB
	s       *statetest.Store
	clock   clock.Clock
	broker  *broker.Broker
	blocked *broker.BlockedEvals
	queue   *planapply.Queue
	applier *planapply.Applier
}

// newLocalLeader starts a leader over s whose applier commits through
// a planapplytest.AutoRaft with the given commit latency and pipeline depth.
func newLocalLeader(t testing.TB, s *statetest.Store, c clock.Clock, pipeline int) *localLeader {
	t.Helper()
	bcfg := broker.DefaultConfig()
	bcfg.Clock = c
	eb, err := broker.New(bcfg)
	must.NoError(t, err)
	eb.SetEnabled(true)
	blcfg := broker.DefaultBlockedEvalsConfig()
	blcfg.Clock = c
	blocked, err := broker.NewBlockedEvals(eb, blcfg)
	must.NoError(t, err)
	blocked.SetEnabled(true)
	q := planapply.NewQueue(c)
	q.SetEnabled(true)
	l := &localLeader{t: t, s: s, clock: c, broker: eb, blocked: blocked, queue: q}

	raft := planapplytest.NewAutoRaft(t, s, 0, l.afterPlanResults)
	l.applier, err = planapply.New(planapply.Config{
		Queue: q, Evals: eb, Raft: raft,
		State: s.State,
		Clock: c, Pipeline: pipeline,
	})
	must.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.applier.Run(ctx) }()
	t.Cleanup(func() {
		q.SetEnabled(false)
		cancel()
		must.NoError(t, <-done)
		blocked.SetEnabled(false)
		eb.SetEnabled(false)
	})
	return l
}

// writeEvals is Raft + FSM for evals: write, then hand pending ones to the
// broker and blocked ones to the tracker.
func (l *localLeader) writeEvals(evals ...*structs.Evaluation) error {
	index, err := l.s.Write(func(tx *state.Txn) error { return tx.UpsertEvals(evals) })
	if err != nil {
		return err
	}
	l.evalsApplied(index, evals)
	return nil
}

func (l *localLeader) evalsApplied(_ uint64, evals []*structs.Evaluation) {
	for _, e := range evals {
		switch {
		case e.ShouldEnqueue():
			l.broker.Enqueue(e)
		case e.ShouldBlock():
			l.blocked.Block(e)
		case e.Status == structs.EvalStatusComplete && len(e.FailedTGAllocs) == 0:
			l.blocked.Untrack(e.JobID, e.Namespace)
		}
	}
}

// afterPlanResults is the FSM's leader-side effect of a plan result:
// preemption evals go to the broker, and nodes where allocs stopped have
// room again for blocked evals.
func (l *localLeader) afterPlanResults(index uint64, req *structs.ApplyPlanResultsRequest) {
	l.evalsApplied(index, req.PreemptionEvals)
	for _, stops := range [][]*structs.AllocStop{req.AllocsStopped, req.AllocsPreempted} {
		for _, stop := range stops {
			a, err := l.s.State().AllocByID(nil, stop.ID)
			if err != nil || a == nil {
				continue
			}
			if n, err := l.s.State().NodeByID(nil, a.NodeID); err == nil && n != nil {
				l.blocked.Unblock(n.ComputedClass, index)
			}
		}
	}
}

// Dequeue is Eval.Dequeue: the eval, its token, and the index the worker
// must wait for (the newest write to any eval of the job).
func (l *localLeader) Dequeue(ctx context.Context, req *structs.EvalDequeueRequest) (*structs.EvalDequeueResponse, error) {
	if req.SchedulerVersion != structs.SchedulerVersion {
		return nil, fmt.Errorf("dequeue: %w", structs.ErrSchedulerVersion)
	}
	eval, token, err := l.broker.Dequeue(ctx, req.Schedulers, req.Timeout)
	if err != nil || eval == nil {
		return &structs.EvalDequeueResponse{}, err
	}
	waitIndex := eval.ModifyIndex
	evals, err := l.s.State().EvalsByJob(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return nil, err
	}
	for _, e := range evals {
		waitIndex = max(waitIndex, e.ModifyIndex)
	}
	return &structs.EvalDequeueResponse{Eval: eval, Token: token, WaitIndex: waitIndex}, nil
}

func (l *localLeader) Ack(req *structs.EvalAckRequest) error {
	return l.broker.Ack(req.EvalID, req.Token)
}

func (l *localLeader) Nack(req *structs.EvalAckRequest) error {
	return l.broker.Nack(req.EvalID, req.Token)
}

// UpdateEval is Eval.Update: the worker's own eval, under its token.
func (l *localLeader) UpdateEval(req *structs.EvalUpdateRequest) error {
	if len(req.Evals) != 1 {
		return fmt.Errorf("eval update: exactly one eval, got %d", len(req.Evals))
	}
	eval := req.Evals[0].Copy()
	if err := l.broker.OutstandingReset(eval.ID, req.EvalToken); err != nil {
		return fmt.Errorf("eval update %q: %w", eval.ID, err)
	}
	return l.writeEvals(eval)
}

// CreateEval is Eval.Create: a new eval whose PreviousEval the worker
// holds.
func (l *localLeader) CreateEval(req *structs.EvalUpdateRequest) error {
	if len(req.Evals) != 1 {
		return fmt.Errorf("eval create: exactly one eval, got %d", len(req.Evals))
	}
	eval := req.Evals[0].Copy()
	if err := l.broker.OutstandingReset(eval.PreviousEval, req.EvalToken); err != nil {
		return fmt.Errorf("eval create %q: previous eval %q: %w", eval.ID, eval.PreviousEval, err)
	}
	if existing, err := l.s.State().EvalByID(nil, eval.ID); err != nil || existing != nil {
		return fmt.Errorf("eval create %q: evaluation already exists", eval.ID)
	}
	return l.writeEvals(eval)
}

// ReblockEval is Eval.Reblock: a stored blocked eval back into the tracker.
func (l *localLeader) ReblockEval(req *structs.EvalUpdateRequest) error {
	if len(req.Evals) != 1 {
		return fmt.Errorf("eval reblock: exactly one eval, got %d", len(req.Evals))
	}
	eval := req.Evals[0]
	if err := l.broker.OutstandingReset(eval.ID, req.EvalToken); err != nil {
		return fmt.Errorf("eval reblock %q: %w", eval.ID, err)
	}
	stored, err := l.s.State().EvalByID(nil, eval.ID)
	if err != nil {
		return err
	}
	if stored == nil || stored.Status != structs.EvalStatusBlocked {
		return fmt.Errorf("eval reblock %q: not a stored blocked evaluation", eval.ID)
	}
	l.blocked.Reblock(eval.Copy(), req.EvalToken)
	return nil
}

// SubmitPlan is Plan.Submit: pause the nack timer (the token guard), queue,
// wait, resume.
func (l *localLeader) SubmitPlan(req *structs.PlanRequest) (*structs.PlanResponse, error) {
	plan := req.Plan
	if err := l.broker.PauseNackTimeout(plan.EvalID, plan.EvalToken); err != nil {
		return nil, fmt.Errorf("plan for eval %q: %w", plan.EvalID, err)
	}
	defer func() { _ = l.broker.ResumeNackTimeout(plan.EvalID, plan.EvalToken) }()
	f, err := l.queue.Enqueue(plan)
	if err != nil {
		return nil, err
	}
	result, err := f.Wait()
	if err != nil {
		return nil, err
	}
	return &structs.PlanResponse{Result: result}, nil
}

var _ worker.Endpoints = (*localLeader)(nil)
