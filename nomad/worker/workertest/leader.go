// Package workertest holds Leader, the in-memory twin of the leader's
// worker endpoints, for the tests of the scheduling workers and of the
// server that runs them.
//
// It is imported only by tests. It does not import nomad/worker (whose
// own tests use it), so the check that Leader implements
// worker.Endpoints lives in those tests.
package workertest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/broker"
	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/planjudge"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Store is the committed state the leader reads and writes through:
// Write applies one change at the next index, like one Raft entry, and
// is safe for concurrent use. *statetest.Store implements it.
type Store interface {
	Write(fn func(tx *state.Txn) error) (uint64, error)
	Latest() uint64
	StateStore() *state.StateStore
}

// PlanApplier commits a plan and returns its result; see
// Leader.SetPlanApplier.
type PlanApplier func(plan *structs.Plan) (*structs.PlanResult, error)

// Leader is the in-memory twin of the leader's worker endpoints
// (Eval.Dequeue, Eval.Ack, Eval.Nack, Eval.Update, Eval.Create,
// Eval.Reblock and Plan.Submit; it implements worker.Endpoints): an eval
// broker, a blocked-evals tracker and a plan applier in one process, all
// writing one Store. Its eval writes play the FSM's leader-side effects
// too: pending evals go to the broker, blocked ones to the tracker.
//
// By default plans are applied serially: each is judged by planjudge
// against the newest state and committed at once, so no result is ever
// in flight. SetPlanApplier puts a real plan queue and applier in its
// place.
//
// It does not do what lies outside one process: no RPC, codec or
// forwarding from followers, no Raft (writes are immediate and never
// fail over), no leadership changes, no eval GC, periodic or
// deployment evals, and no node heartbeats.
type Leader struct {
	// Broker and Blocked are the leader's eval broker and blocked-evals
	// tracker, for tests to inspect or drive.
	Broker  *broker.Broker
	Blocked *broker.BlockedEvals
	// PlanEvals makes the default applier write the eval a plan carries
	// with a result that commits the plan whole, as a leader whose
	// servers all run structs.MinVersionPlanEval does. Off, it ignores
	// the eval, as an older leader does. Set before the first plan.
	PlanEvals bool

	store Store
	clock clock.Clock
	apply PlanApplier

	// planMu makes the default applier serial.
	planMu sync.Mutex
}

// NewLeader starts a leader over s on clock c with the serial planjudge
// applier. The broker and tracker stop at the end of the test.
func NewLeader(t testing.TB, s Store, c clock.Clock) *Leader {
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
	t.Cleanup(func() {
		blocked.SetEnabled(false)
		eb.SetEnabled(false)
	})
	l := &Leader{Broker: eb, Blocked: blocked, store: s, clock: c}
	l.apply = l.judgeAndCommit
	return l
}

// SetPlanApplier makes SubmitPlan hand plans to apply (a plan queue and
// applier, say) instead of judging and committing them itself. An
// applier that commits through a Raft twin should call AfterPlanResults
// for each result it applies.
func (l *Leader) SetPlanApplier(apply PlanApplier) { l.apply = apply }

// WriteEvals is Raft and the FSM for evals: write them, then hand
// pending ones to the broker and blocked ones to the tracker.
func (l *Leader) WriteEvals(evals ...*structs.Evaluation) error {
	index, err := l.store.Write(func(tx *state.Txn) error { return tx.UpsertEvals(evals) })
	if err != nil {
		return err
	}
	l.EvalsApplied(index, evals)
	return nil
}

// EvalsApplied is the FSM's leader-side effect of evals committed at
// index: pending ones are enqueued, blocked ones tracked, and a complete
// eval that placed everything untracks its job's blocked eval.
func (l *Leader) EvalsApplied(_ uint64, evals []*structs.Evaluation) {
	for _, e := range evals {
		switch {
		case e.ShouldEnqueue():
			l.Broker.Enqueue(e)
		case e.ShouldBlock():
			l.Blocked.Block(e)
		case e.Status == structs.EvalStatusComplete && len(e.FailedTGAllocs) == 0:
			l.Blocked.Untrack(e.JobID, e.Namespace)
		}
	}
}

// AfterPlanResults is the FSM's leader-side effect of a plan result
// committed at index: preemption evals go to the broker, nodes where
// allocs stopped have room again for blocked evals, and the plan's eval,
// when the result carried it, has the effects of an eval update.
func (l *Leader) AfterPlanResults(index uint64, req *structs.ApplyPlanResultsRequest) {
	l.EvalsApplied(index, req.PreemptionEvals)
	if req.Eval != nil {
		defer l.EvalsApplied(index, []*structs.Evaluation{req.Eval})
	}
	st := l.store.StateStore()
	for _, stops := range [][]*structs.AllocStop{req.AllocsStopped, req.AllocsPreempted} {
		for _, stop := range stops {
			a, err := st.AllocByID(nil, stop.ID)
			if err != nil || a == nil {
				continue
			}
			if n, err := st.NodeByID(nil, a.NodeID); err == nil && n != nil {
				l.Blocked.Unblock(n.ComputedClass, index)
			}
		}
	}
}

// Dequeue is Eval.Dequeue: the eval, its token, and the index the worker
// must wait for (the newest write to any eval of the job).
func (l *Leader) Dequeue(ctx context.Context, req *structs.EvalDequeueRequest) (*structs.EvalDequeueResponse, error) {
	if req.SchedulerVersion != structs.SchedulerVersion {
		return nil, fmt.Errorf("dequeue: %w", structs.ErrSchedulerVersion)
	}
	eval, token, err := l.Broker.Dequeue(ctx, req.Schedulers, req.Timeout)
	if err != nil || eval == nil {
		return &structs.EvalDequeueResponse{}, err
	}
	waitIndex := eval.ModifyIndex
	evals, err := l.store.StateStore().EvalsByJob(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return nil, err
	}
	for _, e := range evals {
		waitIndex = max(waitIndex, e.ModifyIndex)
	}
	return &structs.EvalDequeueResponse{Eval: eval, Token: token, WaitIndex: waitIndex}, nil
}

// Ack is Eval.Ack.
func (l *Leader) Ack(req *structs.EvalAckRequest) error {
	return l.Broker.Ack(req.EvalID, req.Token)
}

// Nack is Eval.Nack.
func (l *Leader) Nack(req *structs.EvalAckRequest) error {
	return l.Broker.Nack(req.EvalID, req.Token)
}

// UpdateEval is Eval.Update: the worker's own eval, under its token.
func (l *Leader) UpdateEval(req *structs.EvalUpdateRequest) error {
	if len(req.Evals) != 1 {
		return fmt.Errorf("eval update: exactly one eval, got %d", len(req.Evals))
	}
	eval := req.Evals[0].Copy()
	if err := l.Broker.OutstandingReset(eval.ID, req.EvalToken); err != nil {
		return fmt.Errorf("eval update %q: %w", eval.ID, err)
	}
	return l.WriteEvals(eval)
}

// CreateEval is Eval.Create: a new eval whose PreviousEval the worker
// holds.
func (l *Leader) CreateEval(req *structs.EvalUpdateRequest) error {
	if len(req.Evals) != 1 {
		return fmt.Errorf("eval create: exactly one eval, got %d", len(req.Evals))
	}
	eval := req.Evals[0].Copy()
	if err := l.Broker.OutstandingReset(eval.PreviousEval, req.EvalToken); err != nil {
		return fmt.Errorf("eval create %q: previous eval %q: %w", eval.ID, eval.PreviousEval, err)
	}
	if existing, err := l.store.StateStore().EvalByID(nil, eval.ID); err != nil || existing != nil {
		return fmt.Errorf("eval create %q: evaluation already exists", eval.ID)
	}
	return l.WriteEvals(eval)
}

// ReblockEval is Eval.Reblock: a stored blocked eval back into the
// tracker.
func (l *Leader) ReblockEval(req *structs.EvalUpdateRequest) error {
	if len(req.Evals) != 1 {
		return fmt.Errorf("eval reblock: exactly one eval, got %d", len(req.Evals))
	}
	eval := req.Evals[0]
	if err := l.Broker.OutstandingReset(eval.ID, req.EvalToken); err != nil {
		return fmt.Errorf("eval reblock %q: %w", eval.ID, err)
	}
	stored, err := l.store.StateStore().EvalByID(nil, eval.ID)
	if err != nil {
		return err
	}
	if stored == nil || stored.Status != structs.EvalStatusBlocked {
		return fmt.Errorf("eval reblock %q: not a stored blocked evaluation", eval.ID)
	}
	l.Blocked.Reblock(eval.Copy(), req.EvalToken)
	return nil
}

// SubmitPlan is Plan.Submit: pause the nack timer (the token guard),
// apply the plan, resume.
func (l *Leader) SubmitPlan(req *structs.PlanRequest) (*structs.PlanResponse, error) {
	plan := req.Plan
	if err := l.Broker.PauseNackTimeout(plan.EvalID, plan.EvalToken); err != nil {
		return nil, fmt.Errorf("plan for eval %q: %w", plan.EvalID, err)
	}
	defer func() { _ = l.Broker.ResumeNackTimeout(plan.EvalID, plan.EvalToken) }()
	result, err := l.apply(plan)
	if err != nil {
		return nil, err
	}
	return &structs.PlanResponse{Result: result}, nil
}

// judgeAndCommit is the default applier: check the token, judge the plan
// against the newest state, commit what fits.
func (l *Leader) judgeAndCommit(plan *structs.Plan) (*structs.PlanResult, error) {
	l.planMu.Lock()
	defer l.planMu.Unlock()
	switch token, ok := l.Broker.Outstanding(plan.EvalID); {
	case !ok:
		return nil, fmt.Errorf("plan for eval %q: %w", plan.EvalID, structs.ErrNotOutstanding)
	case token != plan.EvalToken:
		return nil, fmt.Errorf("plan for eval %q: %w", plan.EvalID, structs.ErrTokenMismatch)
	}
	view := l.store.StateStore().Snapshot().SchedulerView()
	verdict, err := planjudge.Judge(planjudge.View{State: view, InFlight: planjudge.NewInFlight()}, plan, 1)
	if err != nil {
		return nil, err
	}
	result := verdict.Result
	if !result.IsNoOp() {
		apply := planjudge.BuildRequest(view, plan, result, l.clock.Now())
		if l.PlanEvals && plan.Eval != nil && len(result.RejectedNodes) == 0 {
			apply.Eval = plan.Eval.Copy()
			result.EvalWritten = true
		}
		index, err := l.store.Write(func(tx *state.Txn) error { return tx.UpsertPlanResults(apply) })
		if err != nil {
			return nil, fmt.Errorf("plan for eval %q: applying the result: %w", plan.EvalID, err)
		}
		result.AllocIndex = index
		l.AfterPlanResults(index, apply)
	}
	if result.RefreshIndex != 0 {
		result.RefreshIndex = max(result.RefreshIndex, l.store.Latest())
	}
	return result, nil
}
