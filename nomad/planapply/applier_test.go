package planapply_test

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
	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/planapply/planapplytest"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// testEpoch is the fake clocks' starting time.
var testEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

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

// applierHarness runs an Applier on a fake clock against a
// statetest.Store.
type applierHarness struct {
	t       *testing.T
	s       *statetest.Store
	clock   *clock.Fake
	queue   *planapply.Queue
	evals   *fakeOutstanding
	applier *planapply.Applier
	// waits receives the sequence number every time a plan starts
	// waiting for a pending stop to commit; waited counts those waits.
	waits  chan uint64
	waited atomic.Int64
}

// newApplierHarness starts an applier over raft; drain fails whatever the
// twin still holds when the test ends, so Run can return. opts change
// the applier's configuration.
func newApplierHarness(t *testing.T, s *statetest.Store, raft planapply.Raft, pipeline int, drain func(), opts ...func(*planapply.Config)) *applierHarness {
	t.Helper()
	clk := clock.NewFake(testEpoch)
	q := planapply.NewQueue(clk)
	q.SetEnabled(true)
	evals := &fakeOutstanding{}
	cfg := planapply.Config{
		Queue:           q,
		Evals:           evals,
		Raft:            raft,
		State:           s.StateStore,
		Clock:           clk,
		Pipeline:        pipeline,
		EvalParallelism: 1,
	}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := planapply.New(cfg)
	must.NoError(t, err)
	h := &applierHarness{t: t, s: s, clock: clk, queue: q, evals: evals, applier: a, waits: make(chan uint64, 16)}
	a.SetWaitHook(func(seq uint64) {
		h.waited.Add(1)
		select {
		case h.waits <- seq:
		default: // nobody is looking
		}
	})

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
func newManualHarness(t *testing.T, pipeline int) (*applierHarness, *planapplytest.ManualRaft) {
	s := statetest.NewStore(t)
	raft := planapplytest.NewManualRaft(t, s)
	h := newApplierHarness(t, s, raft, pipeline, raft.FailQueued)
	return h, raft
}

// newPlan starts a plan for a new eval of job, written to state first
// (committing a plan touches its eval).
func (h *applierHarness) newPlan(job *structs.Job) *mock.PlanBuilder { return planFor(h.s, job) }

func planFor(s *statetest.Store, job *structs.Job) *mock.PlanBuilder {
	return mock.BuildPlan(s.Eval(job).MakePlan(job))
}

// submit hands a plan in under a fresh outstanding token.
func (h *applierHarness) submit(plan *structs.Plan) planapply.Future {
	h.t.Helper()
	token := structs.GenerateUUID()
	h.evals.set(plan.EvalID, token)
	plan.EvalToken = token
	f, err := h.queue.Enqueue(plan)
	must.NoError(h.t, err)
	return f
}

// answer waits for a plan's answer.
func answer(t *testing.T, f planapply.Future) (*structs.PlanResult, error) {
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
func notAnswered(t *testing.T, f planapply.Future) {
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
	n, j := h.s.Node(), h.s.Job()
	old := h.s.Alloc(j, n, 500)
	plan := h.newPlan(j).Stop(old).Place(statetest.SizedAlloc(j, n, 500), statetest.SizedAlloc(j, n, 500)).Build()

	f := h.submit(plan)
	raft.WaitDispatched(1)
	notAnswered(t, f)
	req := raft.Request(0)
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

	index := raft.Commit()
	r, err := answer(t, f)
	must.NoError(t, err)
	must.Eq(t, index, r.AllocIndex)
	must.Zero(t, r.RefreshIndex)
	must.Len(t, 2, r.NodeAllocation[n.ID])
	must.Eq(t, plan.NodeUpdate, r.NodeUpdate)

	live, err := h.s.StateStore().AllocsByNodeTerminal(nil, n.ID, false)
	must.NoError(t, err)
	must.Len(t, 2, live)
	stopped, err := h.s.StateStore().AllocByID(nil, old.ID)
	must.NoError(t, err)
	must.Eq(t, structs.AllocDesiredStatusStop, stopped.DesiredStatus)
}

func TestPlanApplier_TokenCheck(t *testing.T) {
	h, raft := newManualHarness(t, 1)
	n, j := h.s.Node(), h.s.Job()

	mismatch := h.newPlan(j).Place(statetest.SizedAlloc(j, n, 500)).Build()
	mismatch.EvalToken = "not the token"
	h.evals.set(mismatch.EvalID, "the token")
	f2, err := h.queue.Enqueue(mismatch)
	must.NoError(t, err)
	_, err = answer(t, f2)
	must.ErrorIs(t, err, structs.ErrTokenMismatch)

	gone := h.newPlan(j).Place(statetest.SizedAlloc(j, n, 500)).Build()
	f3, err := h.queue.Enqueue(gone)
	must.NoError(t, err)
	_, err = answer(t, f3)
	must.ErrorIs(t, err, structs.ErrNotOutstanding)
	must.StrContains(t, err.Error(), gone.EvalID)
	must.Zero(t, raft.Dispatched())
}

func TestPlanApplier_PartialCommit(t *testing.T) {
	h, raft := newManualHarness(t, 1)
	good, full, j := h.s.Node(), h.s.Node(), h.s.Job()
	h.s.Alloc(j, full, 3500)
	refresh := h.s.Latest()
	plan := h.newPlan(j).Place(statetest.SizedAlloc(j, good, 500), statetest.SizedAlloc(j, full, 500)).Build()

	f := h.submit(plan)
	raft.WaitDispatched(1)
	index := raft.Commit()
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
	good, full, j := h.s.Node(), h.s.Node(), h.s.Job()
	h.s.Alloc(j, full, 3500)
	refresh := h.s.Latest() // the newest write to allocs
	plan := h.newPlan(j).AllAtOnce().Place(statetest.SizedAlloc(j, good, 500), statetest.SizedAlloc(j, full, 500)).Build()

	r, err := answer(t, h.submit(plan))
	must.NoError(t, err)
	must.MapEmpty(t, r.NodeAllocation)
	must.Eq(t, []string{full.ID}, r.RejectedNodes)
	must.Eq(t, refresh, r.RefreshIndex)
	must.Zero(t, r.AllocIndex)
	must.Zero(t, raft.Dispatched()) // nothing to commit
}

// TestPlanApplier_PipelinedPlansSeeEachOther: plan 2 is judged while plan
// 1 is still in Raft, and sees plan 1's allocs: no overcommit.
func TestPlanApplier_PipelinedPlansSeeEachOther(t *testing.T) {
	h, raft := newManualHarness(t, 2)
	x, y, j := h.s.Node(), h.s.Node(), h.s.Job()

	f1 := h.submit(h.newPlan(j).Place(statetest.SizedAlloc(j, x, 3500)).Build())
	raft.WaitDispatched(1)
	// 3500 in flight + 500 > 3900: rejected on top of plan 1.
	f2 := h.submit(h.newPlan(j).Place(statetest.SizedAlloc(j, x, 500)).Build())
	// Another node: dispatched while plan 1 is still out.
	f3 := h.submit(h.newPlan(j).Place(statetest.SizedAlloc(j, y, 500)).Build())
	raft.WaitDispatched(2)
	notAnswered(t, f1)
	notAnswered(t, f2)
	notAnswered(t, f3)

	i1 := raft.Commit()
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

	i3 := raft.Commit()
	r3, err := answer(t, f3)
	must.NoError(t, err)
	must.Eq(t, i3, r3.AllocIndex)
	must.Greater(t, i1, i3)
}

// TestPlanApplier_PipelineDepth: no more than Pipeline results are in
// Raft at once, and answers follow dispatch order.
func TestPlanApplier_PipelineDepth(t *testing.T) {
	h, raft := newManualHarness(t, 2)
	j := h.s.Job()
	var futures []planapply.Future
	for range 4 {
		n := h.s.Node()
		futures = append(futures, h.submit(h.newPlan(j).Place(statetest.SizedAlloc(j, n, 500)).Build()))
	}
	raft.WaitDispatched(2)
	// The third plan is judged and waits for a slot.
	must.Eq(t, 2, raft.Dispatched())

	var order []uint64
	for i := range futures {
		index := raft.Commit()
		if i+2 < len(futures) {
			raft.WaitDispatched(i + 3)
		}
		r, err := answer(t, futures[i])
		must.NoError(t, err)
		must.Eq(t, index, r.AllocIndex)
		order = append(order, r.AllocIndex)
		must.LessEq(t, 2, raft.Dispatched()-(i+1))
	}
	must.True(t, slices.IsSorted(order))
}

// TestPlanApplier_RaftFailureMidPipeline: the failed plan gets the error;
// the plan judged on top of it keeps its own, committed answer; and the
// failed plan's allocs no longer count for the next one.
func TestPlanApplier_RaftFailureMidPipeline(t *testing.T) {
	h, raft := newManualHarness(t, 4)
	x, y, j := h.s.Node(), h.s.Node(), h.s.Job()

	f1 := h.submit(h.newPlan(j).Place(statetest.SizedAlloc(j, x, 3500)).Build())
	raft.WaitDispatched(1)
	// Judged on top of plan 1: y fits, x does not (3500 + 500 > 3900).
	f2 := h.submit(h.newPlan(j).Place(statetest.SizedAlloc(j, x, 500), statetest.SizedAlloc(j, y, 500)).Build())
	raft.WaitDispatched(2)

	boom := errors.New("leadership lost while committing log")
	raft.Fail(boom)
	_, err := answer(t, f1)
	must.ErrorIs(t, err, boom)
	must.StrContains(t, err.Error(), "applying the result")

	i2 := raft.Commit()
	r2, err := answer(t, f2)
	must.NoError(t, err)
	must.Eq(t, i2, r2.AllocIndex)
	must.Eq(t, []string{x.ID}, r2.RejectedNodes)

	// Plan 1 never happened: x is empty again for the next plan.
	f3 := h.submit(h.newPlan(j).Place(statetest.SizedAlloc(j, x, 3900)).Build())
	raft.WaitDispatched(3)
	raft.Commit()
	r3, err := answer(t, f3)
	must.NoError(t, err)
	must.SliceEmpty(t, r3.RejectedNodes)
	statetest.NoOvercommit(t, h.s.StateStore())
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
			x, y, j, other := h.s.Node(), h.s.Node(), h.s.Job(), h.s.Job()
			a := h.s.Alloc(j, x, 3500)

			// Plan 1 moves a off x.
			f1 := h.submit(h.newPlan(j).Stop(a).Place(statetest.SizedAlloc(j, y, 3500)).Build())
			raft.WaitDispatched(1)
			// Plan 2 needs a's room on x: 3500 + 3900 > 3900 unless the stop commits.
			f2 := h.submit(h.newPlan(other).Place(statetest.SizedAlloc(other, x, 3900)).Build())
			select {
			case seq := <-h.waits:
				must.Eq(t, 1, seq)
			case <-time.After(10 * time.Second):
				t.Fatal("plan 2 did not wait for plan 1")
			}
			must.Eq(t, 1, raft.Dispatched())

			if !stopCommits {
				raft.Fail(errors.New("raft: failed to commit"))
				_, err := answer(t, f1)
				must.Error(t, err)
				r2, err := answer(t, f2)
				must.NoError(t, err)
				must.Eq(t, []string{x.ID}, r2.RejectedNodes)
				must.Eq(t, 1, raft.Dispatched())
				statetest.NoOvercommit(t, h.s.StateStore())
				return
			}
			raft.Commit()
			_, err := answer(t, f1)
			must.NoError(t, err)
			raft.WaitDispatched(2)
			raft.Commit()
			r2, err := answer(t, f2)
			must.NoError(t, err)
			must.SliceEmpty(t, r2.RejectedNodes)
			statetest.NoOvercommit(t, h.s.StateStore())
		})
	}
}

// TestPlanApplier_PreemptionEvals: one pending eval per job that loses
// allocs to preemption.
func TestPlanApplier_PreemptionEvals(t *testing.T) {
	h, raft := newManualHarness(t, 1)
	n, low, high := h.s.Node(), h.s.Job(), h.s.Job()
	v1, v2 := h.s.Alloc(low, n, 1500), h.s.Alloc(low, n, 1500)
	p := statetest.SizedAlloc(high, n, 3900)
	plan := h.newPlan(high).Preempt(p.ID, v1, v2).Place(p).Build()

	f := h.submit(plan)
	raft.WaitDispatched(1)
	req := raft.Request(0)
	must.Len(t, 2, req.AllocsPreempted)
	must.Len(t, 1, req.PreemptionEvals)
	pe := req.PreemptionEvals[0]
	must.Eq(t, low.ID, pe.JobID)
	must.Eq(t, structs.EvalTriggerPreemption, pe.TriggeredBy)
	must.Eq(t, structs.EvalStatusPending, pe.Status)
	must.Eq(t, low.Type, pe.Type)

	raft.Commit()
	_, err := answer(t, f)
	must.NoError(t, err)
	evicted, err := h.s.StateStore().AllocByID(nil, v1.ID)
	must.NoError(t, err)
	must.Eq(t, structs.AllocDesiredStatusEvict, evicted.DesiredStatus)
	must.Eq(t, p.ID, evicted.PreemptedByAllocation)
	stored, err := h.s.StateStore().EvalByID(nil, pe.ID)
	must.NoError(t, err)
	must.NotNil(t, stored)
	statetest.NoOvercommit(t, h.s.StateStore())
}

// TestPlanApplier_WaitsForSnapshotIndex: a plan made at an index the store
// has not reached waits for it, up to the timeout.
func TestPlanApplier_WaitsForSnapshotIndex(t *testing.T) {
	h, raft := newManualHarness(t, 1)
	n, j := h.s.Node(), h.s.Job()

	ahead := h.newPlan(j).Place(statetest.SizedAlloc(j, n, 500)).Build()
	ahead.SnapshotIndex = h.s.Latest() + 1
	f := h.submit(ahead)
	must.NoError(t, h.clock.BlockUntil(context.Background(), 1)) // the wait's timer
	notAnswered(t, f)
	h.s.Job() // the store reaches the index
	raft.WaitDispatched(1)
	raft.Commit()
	_, err := answer(t, f)
	must.NoError(t, err)

	never := h.newPlan(j).Place(statetest.SizedAlloc(j, n, 500)).Build()
	never.SnapshotIndex = h.s.Latest() + 100
	f2 := h.submit(never)
	must.NoError(t, h.clock.BlockUntil(context.Background(), 1))
	h.clock.Advance(planapply.DefaultSnapshotTimeout)
	_, err = answer(t, f2)
	must.ErrorContains(t, err, "timed out after 10s waiting for index=")
}

// TestPlanApplier_StopAnswersEverything: ending Run answers the plans in
// flight with their Raft outcome, and the queue flushes the rest.
func TestPlanApplier_StopAnswersEverything(t *testing.T) {
	s := statetest.NewStore(t)
	raft := planapplytest.NewManualRaft(t, s)
	clk := clock.NewFake(testEpoch)
	q := planapply.NewQueue(clk)
	q.SetEnabled(true)
	evals := &fakeOutstanding{}
	a, err := planapply.New(planapply.Config{Queue: q, Evals: evals, Raft: raft, State: s.StateStore, Clock: clk, Pipeline: 1})
	must.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	n, j := s.Node(), s.Job()
	submit := func() planapply.Future {
		p := planFor(s, j).Place(statetest.SizedAlloc(j, n, 100)).Build()
		p.EvalToken = "t"
		evals.set(p.EvalID, "t")
		f, err := q.Enqueue(p)
		must.NoError(t, err)
		return f
	}
	f1 := submit()
	raft.WaitDispatched(1)
	f2 := submit() // judged, waits for a pipeline slot

	cancel()
	_, err = answer(t, f2)
	must.ErrorIs(t, err, planapply.ErrQueueFlushed)
	notAnswered(t, f1) // still in Raft
	raft.Commit()
	must.NoError(t, <-done)
	r1, err := answer(t, f1)
	must.NoError(t, err)
	must.Positive(t, r1.AllocIndex)

	// A second Run after the first returned is fine (next leadership term).
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { done <- a.Run(ctx2) }()
	f3 := submit()
	raft.WaitDispatched(2)
	raft.Commit()
	_, err = answer(t, f3)
	must.NoError(t, err)
	q.SetEnabled(false)
	cancel2()
	must.NoError(t, <-done)
}

func TestNewPlanApplier_Validates(t *testing.T) {
	_, err := planapply.New(planapply.Config{Pipeline: -1})
	must.ErrorContains(t, err, "Queue is required")
	must.ErrorContains(t, err, "Raft is required")
	must.ErrorContains(t, err, "Pipeline must be >= 1")
}

// TestPlanApplier_Metrics: one committed plan records the applier's
// timings.
func TestPlanApplier_Metrics(t *testing.T) {
	sink := metricstest.WithInmem(t)
	h, raft := newManualHarness(t, 1)
	n, j := h.s.Node(), h.s.Job()
	f := h.submit(h.newPlan(j).Place(statetest.SizedAlloc(j, n, 500)).Build())
	raft.WaitDispatched(1)
	raft.Commit()
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
	s := statetest.NewStore(t)
	raft := planapplytest.NewManualRaft(t, s)
	clk := clock.NewFake(testEpoch)
	q := planapply.NewQueue(clk)
	evals := &fakeOutstanding{}
	a, err := planapply.New(planapply.Config{Queue: q, Evals: evals, Raft: raft, State: s.StateStore, Clock: clk})
	must.NoError(t, err)
	n, j := s.Node(), s.Job()

	for term := range 2 {
		q.SetEnabled(true)
		ctx, cancel := context.WithCancel(context.Background())
		a.LeadershipGained(ctx)
		p := planFor(s, j).Place(statetest.SizedAlloc(j, n, 100)).Build()
		p.EvalToken = "t"
		evals.set(p.EvalID, "t")
		f, err := q.Enqueue(p)
		must.NoError(t, err)
		raft.WaitDispatched(term + 1)
		raft.Commit()
		_, err = answer(t, f)
		must.NoError(t, err)
		cancel()
		a.LeadershipLost()
		must.False(t, a.Running())
		q.SetEnabled(false)
	}
	a.LeadershipLost() // no term running: returns at once
}
