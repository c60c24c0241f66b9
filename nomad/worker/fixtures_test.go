package worker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/broker"
	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/planjudge"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// testEpoch is the fake clocks' starting time.
var testEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testState is a state store written at increasing indexes, standing in
// for what Raft and the FSM would have committed. Writes may come from
// several goroutines (the test and a Raft twin); write serialises them so
// indexes are applied in order.
type testState struct {
	t     testing.TB
	store *state.StateStore

	mu    sync.Mutex
	index uint64
}

func newTestState(t testing.TB) *testState {
	t.Helper()
	s, err := state.NewStateStore(nil)
	must.NoError(t, err)
	return &testState{t: t, store: s}
}

// write applies fn at the next index, like one Raft entry.
func (s *testState) write(fn func(tx *state.Txn) error) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	index := s.index + 1
	if err := s.store.WithWriteTxn(index, fn); err != nil {
		return 0, err
	}
	s.index = index
	return index, nil
}

// mustWrite is write for test setup.
func (s *testState) mustWrite(fn func(tx *state.Txn) error) uint64 {
	s.t.Helper()
	index, err := s.write(fn)
	must.NoError(s.t, err)
	return index
}

// latest is the index of the last write.
func (s *testState) latest() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.index
}

// node registers a mock node (ready, eligible, 3900 MHz / 7936 MB free).
func (s *testState) node(opts ...mock.NodeOption) *structs.Node {
	s.t.Helper()
	n := mock.Node(opts...)
	s.mustWrite(func(tx *state.Txn) error { return tx.UpsertNode(n) })
	return n
}

// job registers a mock service job.
func (s *testState) job(opts ...mock.JobOption) *structs.Job {
	s.t.Helper()
	j := mock.Job(opts...)
	s.mustWrite(func(tx *state.Txn) error { return tx.UpsertJob(j) })
	stored, err := s.store.JobByID(nil, j.Namespace, j.ID)
	must.NoError(s.t, err)
	return stored
}

// alloc commits a running alloc of job on node using cpu MHz.
func (s *testState) alloc(job *structs.Job, node *structs.Node, cpu int64) *structs.Allocation {
	s.t.Helper()
	a := newTestAlloc(job, node, cpu)
	a.ClientStatus = structs.AllocClientStatusRunning
	s.upsertAllocs(a)
	stored, err := s.store.AllocByID(nil, a.ID)
	must.NoError(s.t, err)
	return stored
}

// eval writes a pending eval for job.
func (s *testState) eval(job *structs.Job) *structs.Evaluation {
	s.t.Helper()
	e := mock.Eval(mock.EvalForJob(job))
	s.mustWrite(func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) })
	return e
}

// upsertAllocs commits allocs as they are.
func (s *testState) upsertAllocs(allocs ...*structs.Allocation) {
	s.t.Helper()
	s.mustWrite(func(tx *state.Txn) error { return tx.UpsertAllocs(allocs) })
}

func (s *testState) snapshot() *state.StateSnapshot { return s.store.Snapshot() }

// allocMemMB is every test alloc's memory. For the arithmetic in test
// comments, a mock node offers allocs 3900 MHz and 7936 MB (4000 MHz less
// 100 reserved, 8192 MB less 256 reserved).
const allocMemMB = 256

// newTestAlloc returns a new, pending alloc of job on node using cpu MHz
// and allocMemMB MB (see mock.SizedAlloc).
func newTestAlloc(job *structs.Job, node *structs.Node, cpu int64) *structs.Allocation {
	return mock.SizedAlloc(job, node, cpu, allocMemMB)
}

// localLeader is the leader side of scheduling in one process: a broker,
// a blocked-evals tracker and a serial plan applier (planjudge, no queue),
// all writing one testState. Its endpoints are the in-memory twin of the
// RPC endpoints workers call; its fsm hooks play the FSM's leader-side
// effects (enqueue pending evals, track blocked ones).
type localLeader struct {
	t       testing.TB
	s       *testState
	clock   clock.Clock
	broker  *broker.Broker
	blocked *broker.BlockedEvals

	// planMu makes the applier serial: one plan judged and committed at
	// a time, so no result is ever in flight.
	planMu sync.Mutex
}

// newLocalLeader starts a leader over s whose plan applier judges each
// plan with planjudge against the newest state and commits it at once.
func newLocalLeader(t testing.TB, s *testState, c clock.Clock) *localLeader {
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
	return &localLeader{t: t, s: s, clock: c, broker: eb, blocked: blocked}
}

// writeEvals is Raft + FSM for evals: write, then hand pending ones to the
// broker and blocked ones to the tracker.
func (l *localLeader) writeEvals(evals ...*structs.Evaluation) error {
	index, err := l.s.write(func(tx *state.Txn) error { return tx.UpsertEvals(evals) })
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
			a, err := l.s.store.AllocByID(nil, stop.ID)
			if err != nil || a == nil {
				continue
			}
			if n, err := l.s.store.NodeByID(nil, a.NodeID); err == nil && n != nil {
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
	evals, err := l.s.store.EvalsByJob(nil, eval.Namespace, eval.JobID)
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
	if existing, err := l.s.store.EvalByID(nil, eval.ID); err != nil || existing != nil {
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
	stored, err := l.s.store.EvalByID(nil, eval.ID)
	if err != nil {
		return err
	}
	if stored == nil || stored.Status != structs.EvalStatusBlocked {
		return fmt.Errorf("eval reblock %q: not a stored blocked evaluation", eval.ID)
	}
	l.blocked.Reblock(eval.Copy(), req.EvalToken)
	return nil
}

// SubmitPlan is Plan.Submit with a serial applier: pause the nack timer
// (the token guard), check the token, judge the plan against the newest
// state, commit what fits, resume.
func (l *localLeader) SubmitPlan(req *structs.PlanRequest) (*structs.PlanResponse, error) {
	plan := req.Plan
	if err := l.broker.PauseNackTimeout(plan.EvalID, plan.EvalToken); err != nil {
		return nil, fmt.Errorf("plan for eval %q: %w", plan.EvalID, err)
	}
	defer func() { _ = l.broker.ResumeNackTimeout(plan.EvalID, plan.EvalToken) }()

	l.planMu.Lock()
	defer l.planMu.Unlock()
	switch token, ok := l.broker.Outstanding(plan.EvalID); {
	case !ok:
		return nil, fmt.Errorf("plan for eval %q: %w", plan.EvalID, structs.ErrNotOutstanding)
	case token != plan.EvalToken:
		return nil, fmt.Errorf("plan for eval %q: %w", plan.EvalID, structs.ErrTokenMismatch)
	}
	view := l.s.store.Snapshot().SchedulerView()
	verdict, err := planjudge.Judge(planjudge.View{State: view, InFlight: planjudge.NewInFlight()}, plan, 1)
	if err != nil {
		return nil, err
	}
	result := verdict.Result
	if !result.IsNoOp() {
		apply := planjudge.BuildRequest(view, plan, result, l.clock.Now())
		index, err := l.s.write(func(tx *state.Txn) error { return tx.UpsertPlanResults(apply) })
		if err != nil {
			return nil, fmt.Errorf("plan for eval %q: applying the result: %w", plan.EvalID, err)
		}
		result.AllocIndex = index
		l.afterPlanResults(index, apply)
	}
	if result.RefreshIndex != 0 {
		result.RefreshIndex = max(result.RefreshIndex, l.s.latest())
	}
	return &structs.PlanResponse{Result: result}, nil
}

var _ Endpoints = (*localLeader)(nil)
