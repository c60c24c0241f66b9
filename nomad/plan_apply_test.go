package nomad

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// fakeOutstanding is the broker's view of outstanding deliveries, set by
// hand.
type fakeOutstanding struct {
	mu     sync.Mutex
	tokens map[string]string
}

func (f *fakeOutstanding) Outstanding(evalID string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tokens[evalID]
	return t, ok
}

func (f *fakeOutstanding) set(evalID, token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tokens == nil {
		f.tokens = make(map[string]string)
	}
	f.tokens[evalID] = token
}

// applierHarness runs a PlanApplier on a fake clock against a testState.
type applierHarness struct {
	t       *testing.T
	s       *testState
	clock   *clock.Fake
	queue   *PlanQueue
	evals   *fakeOutstanding
	applier *PlanApplier
	// waits receives the sequence number every time a plan starts
	// waiting for a pending stop to commit; waited counts those waits.
	waits  chan uint64
	waited atomic.Int64
}

// newApplierHarness starts an applier over raft; drain fails whatever the
// twin still holds when the test ends, so Run can return.
func newApplierHarness(t *testing.T, s *testState, raft PlanRaft, pipeline int, drain func()) *applierHarness {
	t.Helper()
	clk := clock.NewFake(testEpoch)
	q := NewPlanQueue(clk)
	q.SetEnabled(true)
	evals := &fakeOutstanding{}
	a, err := NewPlanApplier(PlanApplierConfig{
		Queue:           q,
		Evals:           evals,
		Raft:            raft,
		State:           func() *state.StateStore { return s.store },
		Clock:           clk,
		Pipeline:        pipeline,
		EvalParallelism: 1,
	})
	must.NoError(t, err)
	h := &applierHarness{t: t, s: s, clock: clk, queue: q, evals: evals, applier: a, waits: make(chan uint64, 16)}
	a.waitHook = func(seq uint64) {
		h.waited.Add(1)
		select {
		case h.waits <- seq:
		default: // nobody is looking
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		q.SetEnabled(false)
		cancel()
		if drain != nil {
			drain()
		}
		must.NoError(t, <-done)
	})
	return h
}

// newManualHarness is an applier over a manual Raft twin.
func newManualHarness(t *testing.T, pipeline int) (*applierHarness, *manualPlanRaft) {
	s := newTestState(t)
	raft := newManualPlanRaft(t, s)
	h := newApplierHarness(t, s, raft, pipeline, func() {
		raft.mu.Lock()
		queued := raft.queue
		raft.queue = nil
		raft.mu.Unlock()
		for _, e := range queued {
			e.future.complete(0, errRaftTwinShutdown)
		}
	})
	return h, raft
}

// newPlan starts a plan for a new eval of job, written to state first
// (committing a plan touches its eval).
func (h *applierHarness) newPlan(job *structs.Job) *mock.PlanBuilder { return planFor(h.s, job) }

func planFor(s *testState, job *structs.Job) *mock.PlanBuilder {
	return mock.BuildPlan(s.eval(job).MakePlan(job))
}

// submit hands a plan in under a fresh outstanding token.
func (h *applierHarness) submit(plan *structs.Plan) PlanFuture {
	h.t.Helper()
	token := structs.GenerateUUID()
	h.evals.set(plan.EvalID, token)
	plan.EvalToken = token
	f, err := h.queue.Enqueue(plan)
	must.NoError(h.t, err)
	return f
}

// answer waits for a plan's answer.
func answer(t *testing.T, f PlanFuture) (*structs.PlanResult, error) {
	t.Helper()
	select {
	case <-f.Done():
		return f.Wait()
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the plan within 10s")
		return nil, nil
	}
}

// notAnswered asserts the plan has no answer yet.
func notAnswered(t *testing.T, f PlanFuture) {
	t.Helper()
	select {
	case <-f.Done():
		r, err := f.Wait()
		t.Fatalf("plan answered early: %+v, %v", r, err)
	default:
	}
}

func TestPlanApplier_CommitsAndAnswers(t *testing.T) {
	h, raft := newManualHarness(t, 1)
	n, j := h.s.node(), h.s.job()
	old := h.s.alloc(j, n, 500)
	plan := h.newPlan(j).Stop(old).Place(newTestAlloc(j, n, 500), newTestAlloc(j, n, 500)).Build()

	f := h.submit(plan)
	raft.waitDispatched(1)
	notAnswered(t, f)
	req := raft.request(0)
	must.Eq(t, plan.EvalID, req.EvalID)
	must.Eq(t, []*structs.AllocStop{{ID: old.ID, DesiredDescription: structs.AllocNotNeeded}}, req.AllocsStopped)
	must.Len(t, 2, req.AllocsUpdated)
	for _, a := range req.AllocsUpdated {
		must.Nil(t, a.Job) // carried once, in req.Job
		must.Eq(t, testEpoch.UnixNano(), a.CreateTime)
		must.Eq(t, testEpoch.UnixNano(), a.ModifyTime)
	}
	must.Eq(t, j.ID, req.Job.ID)
	must.Eq(t, testEpoch.UnixNano(), req.UpdatedAt)

	index := raft.commit()
	r, err := answer(t, f)
	must.NoError(t, err)
	must.Eq(t, index, r.AllocIndex)
	must.Zero(t, r.RefreshIndex)
	must.Len(t, 2, r.NodeAllocation[n.ID])
	must.Eq(t, plan.NodeUpdate, r.NodeUpdate)

	live, err := h.s.store.AllocsByNodeTerminal(nil, n.ID, false)
	must.NoError(t, err)
	must.Len(t, 2, live)
	stopped, err := h.s.store.AllocByID(nil, old.ID)
	must.NoError(t, err)
	must.Eq(t, structs.AllocDesiredStatusStop, stopped.DesiredStatus)
}

func TestPlanApplier_TokenCheck(t *testing.T) {
	h, raft := newManualHarness(t, 1)
	n, j := h.s.node(), h.s.job()

	mismatch := h.newPlan(j).Place(newTestAlloc(j, n, 500)).Build()
	mismatch.EvalToken = "not the token"
	h.evals.set(mismatch.EvalID, "the token")
	f2, err := h.queue.Enqueue(mismatch)
	must.NoError(t, err)
	_, err = answer(t, f2)
	must.ErrorIs(t, err, structs.ErrTokenMismatch)

	gone := h.newPlan(j).Place(newTestAlloc(j, n, 500)).Build()
	f3, err := h.queue.Enqueue(gone)
	must.NoError(t, err)
	_, err = answer(t, f3)
	must.ErrorIs(t, err, structs.ErrNotOutstanding)
	must.StrContains(t, err.Error(), gone.EvalID)
	must.Zero(t, raft.dispatchedCount())
}

func TestPlanApplier_PartialCommit(t *testing.T) {
	h, raft := newManualHarness(t, 1)
	good, full, j := h.s.node(), h.s.node(), h.s.job()
	h.s.alloc(j, full, 3500)
	refresh := h.s.latest()
	plan := h.newPlan(j).Place(newTestAlloc(j, good, 500), newTestAlloc(j, full, 500)).Build()

	f := h.submit(plan)
	raft.waitDispatched(1)
	index := raft.commit()
	r, err := answer(t, f)
	must.NoError(t, err)
	must.Eq(t, []string{full.ID}, r.RejectedNodes)
	must.Len(t, 1, r.NodeAllocation[good.ID])
	must.Eq(t, index, r.AllocIndex)
	// RefreshIndex is raised from the snapshot's alloc index to the commit.
	must.Less(t, index, refresh)
	must.Eq(t, index, r.RefreshIndex)
}

func TestPlanApplier_AllAtOnce(t *testing.T) {
	h, raft := newManualHarness(t, 1)
	good, full, j := h.s.node(), h.s.node(), h.s.job()
	h.s.alloc(j, full, 3500)
	refresh := h.s.latest() // the newest write to allocs
	plan := h.newPlan(j).AllAtOnce().Place(newTestAlloc(j, good, 500), newTestAlloc(j, full, 500)).Build()

	r, err := answer(t, h.submit(plan))
	must.NoError(t, err)
	must.MapEmpty(t, r.NodeAllocation)
	must.Eq(t, []string{full.ID}, r.RejectedNodes)
	must.Eq(t, refresh, r.RefreshIndex)
	must.Zero(t, r.AllocIndex)
	must.Zero(t, raft.dispatchedCount()) // nothing to commit
}

// TestPlanApplier_PipelinedPlansSeeEachOther: plan 2 is judged while plan
// 1 is still in Raft, and sees plan 1's allocs: no overcommit.
func TestPlanApplier_PipelinedPlansSeeEachOther(t *testing.T) {
	h, raft := newManualHarness(t, 2)
	x, y, j := h.s.node(), h.s.node(), h.s.job()

	f1 := h.submit(h.newPlan(j).Place(newTestAlloc(j, x, 3500)).Build())
	raft.waitDispatched(1)
	// 3500 in flight + 500 > 3900: rejected on top of plan 1.
	f2 := h.submit(h.newPlan(j).Place(newTestAlloc(j, x, 500)).Build())
	// Another node: dispatched while plan 1 is still out.
	f3 := h.submit(h.newPlan(j).Place(newTestAlloc(j, y, 500)).Build())
	raft.waitDispatched(2)
	notAnswered(t, f1)
	notAnswered(t, f2)
	notAnswered(t, f3)

	i1 := raft.commit()
	r1, err := answer(t, f1)
	must.NoError(t, err)
	must.Eq(t, i1, r1.AllocIndex)
	// Plan 2 committed nothing; its refresh covers plan 1's commit so the
	// scheduler sees the allocs it lost to.
	r2, err := answer(t, f2)
	must.NoError(t, err)
	must.Eq(t, []string{x.ID}, r2.RejectedNodes)
	must.Zero(t, r2.AllocIndex)
	must.GreaterEq(t, i1, r2.RefreshIndex)
	notAnswered(t, f3)

	i3 := raft.commit()
	r3, err := answer(t, f3)
	must.NoError(t, err)
	must.Eq(t, i3, r3.AllocIndex)
	must.Greater(t, i1, i3)
}

// TestPlanApplier_PipelineDepth: no more than Pipeline results are in
// Raft at once, and answers follow dispatch order.
func TestPlanApplier_PipelineDepth(t *testing.T) {
	h, raft := newManualHarness(t, 2)
	j := h.s.job()
	var futures []PlanFuture
	for range 4 {
		n := h.s.node()
		futures = append(futures, h.submit(h.newPlan(j).Place(newTestAlloc(j, n, 500)).Build()))
	}
	raft.waitDispatched(2)
	// The third plan is judged and waits for a slot.
	must.Eq(t, 2, raft.dispatchedCount())

	var order []uint64
	for i := range futures {
		index := raft.commit()
		if i+2 < len(futures) {
			raft.waitDispatched(i + 3)
		}
		r, err := answer(t, futures[i])
		must.NoError(t, err)
		must.Eq(t, index, r.AllocIndex)
		order = append(order, r.AllocIndex)
		must.LessEq(t, 2, raft.dispatchedCount()-(i+1))
	}
	must.True(t, slices.IsSorted(order))
}

// TestPlanApplier_RaftFailureMidPipeline: the failed plan gets the error;
// the plan judged on top of it keeps its own, committed answer; and the
// failed plan's allocs no longer count for the next one.
func TestPlanApplier_RaftFailureMidPipeline(t *testing.T) {
	h, raft := newManualHarness(t, 4)
	x, y, j := h.s.node(), h.s.node(), h.s.job()

	f1 := h.submit(h.newPlan(j).Place(newTestAlloc(j, x, 3500)).Build())
	raft.waitDispatched(1)
	// Judged on top of plan 1: y fits, x does not (3500 + 500 > 3900).
	f2 := h.submit(h.newPlan(j).Place(newTestAlloc(j, x, 500), newTestAlloc(j, y, 500)).Build())
	raft.waitDispatched(2)

	boom := errors.New("leadership lost while committing log")
	raft.fail(boom)
	_, err := answer(t, f1)
	must.ErrorIs(t, err, boom)
	must.StrContains(t, err.Error(), "applying the result")

	i2 := raft.commit()
	r2, err := answer(t, f2)
	must.NoError(t, err)
	must.Eq(t, i2, r2.AllocIndex)
	must.Eq(t, []string{x.ID}, r2.RejectedNodes)

	// Plan 1 never happened: x is empty again for the next plan.
	f3 := h.submit(h.newPlan(j).Place(newTestAlloc(j, x, 3900)).Build())
	raft.waitDispatched(3)
	raft.commit()
	r3, err := answer(t, f3)
	must.NoError(t, err)
	must.SliceEmpty(t, r3.RejectedNodes)
	assertNoOvercommit(t, h.s)
}

// TestPlanApplier_PendingStopsAreNotCounted: a plan that needs the room a
// pending stop frees waits for that stop to commit. If the stop fails, the
// plan is rejected rather than committed on top of an alloc still there.
func TestPlanApplier_PendingStopsAreNotCounted(t *testing.T) {
	for _, stopCommits := range []bool{true, false} {
		name := "stop fails"
		if stopCommits {
			name = "stop commits"
		}
		t.Run(name, func(t *testing.T) {
			h, raft := newManualHarness(t, 4)
			x, y, j, other := h.s.node(), h.s.node(), h.s.job(), h.s.job()
			a := h.s.alloc(j, x, 3500)

			// Plan 1 moves a off x.
			f1 := h.submit(h.newPlan(j).Stop(a).Place(newTestAlloc(j, y, 3500)).Build())
			raft.waitDispatched(1)
			// Plan 2 needs a's room on x: 3500 + 3900 > 3900 unless the stop commits.
			f2 := h.submit(h.newPlan(other).Place(newTestAlloc(other, x, 3900)).Build())
			select {
			case seq := <-h.waits:
				must.Eq(t, 1, seq)
			case <-time.After(10 * time.Second):
				t.Fatal("plan 2 did not wait for plan 1")
			}
			must.Eq(t, 1, raft.dispatchedCount())

			if !stopCommits {
				raft.fail(errors.New("raft: failed to commit"))
				_, err := answer(t, f1)
				must.Error(t, err)
				r2, err := answer(t, f2)
				must.NoError(t, err)
				must.Eq(t, []string{x.ID}, r2.RejectedNodes)
				must.Eq(t, 1, raft.dispatchedCount())
				assertNoOvercommit(t, h.s)
				return
			}
			raft.commit()
			_, err := answer(t, f1)
			must.NoError(t, err)
			raft.waitDispatched(2)
			raft.commit()
			r2, err := answer(t, f2)
			must.NoError(t, err)
			must.SliceEmpty(t, r2.RejectedNodes)
			assertNoOvercommit(t, h.s)
		})
	}
}

// TestPlanApplier_PreemptionEvals: one pending eval per job that loses
// allocs to preemption.
func TestPlanApplier_PreemptionEvals(t *testing.T) {
	h, raft := newManualHarness(t, 1)
	n, low, high := h.s.node(), h.s.job(), h.s.job()
	v1, v2 := h.s.alloc(low, n, 1500), h.s.alloc(low, n, 1500)
	p := newTestAlloc(high, n, 3900)
	plan := h.newPlan(high).Preempt(p.ID, v1, v2).Place(p).Build()

	f := h.submit(plan)
	raft.waitDispatched(1)
	req := raft.request(0)
	must.Len(t, 2, req.AllocsPreempted)
	must.Len(t, 1, req.PreemptionEvals)
	pe := req.PreemptionEvals[0]
	must.Eq(t, low.ID, pe.JobID)
	must.Eq(t, structs.EvalTriggerPreemption, pe.TriggeredBy)
	must.Eq(t, structs.EvalStatusPending, pe.Status)
	must.Eq(t, low.Type, pe.Type)

	raft.commit()
	_, err := answer(t, f)
	must.NoError(t, err)
	evicted, err := h.s.store.AllocByID(nil, v1.ID)
	must.NoError(t, err)
	must.Eq(t, structs.AllocDesiredStatusEvict, evicted.DesiredStatus)
	must.Eq(t, p.ID, evicted.PreemptedByAllocation)
	stored, err := h.s.store.EvalByID(nil, pe.ID)
	must.NoError(t, err)
	must.NotNil(t, stored)
	assertNoOvercommit(t, h.s)
}

// TestPlanApplier_WaitsForSnapshotIndex: a plan made at an index the store
// has not reached waits for it, up to the timeout.
func TestPlanApplier_WaitsForSnapshotIndex(t *testing.T) {
	h, raft := newManualHarness(t, 1)
	n, j := h.s.node(), h.s.job()

	ahead := h.newPlan(j).Place(newTestAlloc(j, n, 500)).Build()
	ahead.SnapshotIndex = h.s.latest() + 1
	f := h.submit(ahead)
	must.NoError(t, h.clock.BlockUntil(context.Background(), 1)) // the wait's timer
	notAnswered(t, f)
	h.s.job() // the store reaches the index
	raft.waitDispatched(1)
	raft.commit()
	_, err := answer(t, f)
	must.NoError(t, err)

	never := h.newPlan(j).Place(newTestAlloc(j, n, 500)).Build()
	never.SnapshotIndex = h.s.latest() + 100
	f2 := h.submit(never)
	must.NoError(t, h.clock.BlockUntil(context.Background(), 1))
	h.clock.Advance(DefaultPlanSnapshotTimeout)
	_, err = answer(t, f2)
	must.ErrorContains(t, err, "timed out after 10s waiting for index=")
}

// TestPlanApplier_StopAnswersEverything: ending Run answers the plans in
// flight with their Raft outcome, and the queue flushes the rest.
func TestPlanApplier_StopAnswersEverything(t *testing.T) {
	s := newTestState(t)
	raft := newManualPlanRaft(t, s)
	clk := clock.NewFake(testEpoch)
	q := NewPlanQueue(clk)
	q.SetEnabled(true)
	evals := &fakeOutstanding{}
	a, err := NewPlanApplier(PlanApplierConfig{Queue: q, Evals: evals, Raft: raft, State: func() *state.StateStore { return s.store }, Clock: clk, Pipeline: 1})
	must.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	n, j := s.node(), s.job()
	submit := func() PlanFuture {
		p := planFor(s, j).Place(newTestAlloc(j, n, 100)).Build()
		p.EvalToken = "t"
		evals.set(p.EvalID, "t")
		f, err := q.Enqueue(p)
		must.NoError(t, err)
		return f
	}
	f1 := submit()
	raft.waitDispatched(1)
	f2 := submit() // judged, waits for a pipeline slot

	cancel()
	_, err = answer(t, f2)
	must.ErrorIs(t, err, ErrPlanQueueFlushed)
	notAnswered(t, f1) // still in Raft
	raft.commit()
	must.NoError(t, <-done)
	r1, err := answer(t, f1)
	must.NoError(t, err)
	must.Positive(t, r1.AllocIndex)

	// A second Run after the first returned is fine (next leadership term).
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { done <- a.Run(ctx2) }()
	f3 := submit()
	raft.waitDispatched(2)
	raft.commit()
	_, err = answer(t, f3)
	must.NoError(t, err)
	q.SetEnabled(false)
	cancel2()
	must.NoError(t, <-done)
}

func TestNewPlanApplier_Validates(t *testing.T) {
	_, err := NewPlanApplier(PlanApplierConfig{Pipeline: -1})
	must.ErrorContains(t, err, "Queue is required")
	must.ErrorContains(t, err, "Raft is required")
	must.ErrorContains(t, err, "Pipeline must be >= 1")
}

// assertNoOvercommit checks every node's committed, non-terminal allocs
// fit it.
func assertNoOvercommit(t testing.TB, s *testState) {
	t.Helper()
	nodes, err := s.store.Nodes(nil)
	must.NoError(t, err)
	for _, n := range nodes {
		allocs, err := s.store.AllocsByNodeTerminal(nil, n.ID, false)
		must.NoError(t, err)
		fit, dim, used := structs.AllocsFit(n, allocs)
		must.True(t, fit, must.Sprintf("node %s overcommitted on %s: %d allocs use %+v", n.ID, dim, len(allocs), used.Flattened))
	}
}

// TestPlanApplier_Metrics: one committed plan records the applier's
// timings.
func TestPlanApplier_Metrics(t *testing.T) {
	sink := metricstest.WithInmem(t)
	h, raft := newManualHarness(t, 1)
	n, j := h.s.node(), h.s.job()
	f := h.submit(h.newPlan(j).Place(newTestAlloc(j, n, 500)).Build())
	raft.waitDispatched(1)
	raft.commit()
	_, err := answer(t, f)
	must.NoError(t, err)
	for _, name := range []string{"wait_for_index", "evaluate", "apply"} {
		count, _ := metricstest.Sample(t, sink, "nomad.nomad.plan."+name)
		must.Eq(t, 1, count, must.Sprintf("nomad.plan.%s", name))
	}
}

// TestPlanApplier_LeadershipTerms: as a LeadershipObserver the applier
// runs for each term and is done when LeadershipLost returns.
func TestPlanApplier_LeadershipTerms(t *testing.T) {
	s := newTestState(t)
	raft := newManualPlanRaft(t, s)
	clk := clock.NewFake(testEpoch)
	q := NewPlanQueue(clk)
	evals := &fakeOutstanding{}
	a, err := NewPlanApplier(PlanApplierConfig{Queue: q, Evals: evals, Raft: raft, State: func() *state.StateStore { return s.store }, Clock: clk})
	must.NoError(t, err)
	n, j := s.node(), s.job()

	for term := range 2 {
		q.SetEnabled(true)
		ctx, cancel := context.WithCancel(context.Background())
		a.LeadershipGained(ctx)
		p := planFor(s, j).Place(newTestAlloc(j, n, 100)).Build()
		p.EvalToken = "t"
		evals.set(p.EvalID, "t")
		f, err := q.Enqueue(p)
		must.NoError(t, err)
		raft.waitDispatched(term + 1)
		raft.commit()
		_, err = answer(t, f)
		must.NoError(t, err)
		cancel()
		a.LeadershipLost()
		must.False(t, a.running.Load())
		q.SetEnabled(false)
	}
	a.LeadershipLost() // no term running: returns at once
}
