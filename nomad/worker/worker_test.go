package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/nomad/worker/workertest"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// schedulerFunc is a scheduler made of one function, for tests.
type schedulerFunc func(eval *structs.Evaluation) error

func (f schedulerFunc) Process(eval *structs.Evaluation) error { return f(eval) }

// factoryOf builds a Factory whose schedulers run fn.
func factoryOf(fn func(st scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error) scheduler.Factory {
	return func(_ *scheduler.Config, st scheduler.State, p scheduler.Planner) scheduler.Scheduler {
		return schedulerFunc(func(eval *structs.Evaluation) error { return fn(st, p, eval) })
	}
}

// recordingEndpoints passes calls through and reports acks, nacks and
// plans on channels.
type recordingEndpoints struct {
	Endpoints
	acks  chan string
	nacks chan string
	plans chan *structs.Plan
}

func newRecordingEndpoints(inner Endpoints) *recordingEndpoints {
	return &recordingEndpoints{
		Endpoints: inner,
		acks:      make(chan string, 100),
		nacks:     make(chan string, 100),
		plans:     make(chan *structs.Plan, 100),
	}
}

func (r *recordingEndpoints) Ack(req *structs.EvalAckRequest) error {
	err := r.Endpoints.Ack(req)
	r.acks <- req.EvalID
	return err
}

func (r *recordingEndpoints) Nack(req *structs.EvalAckRequest) error {
	err := r.Endpoints.Nack(req)
	r.nacks <- req.EvalID
	return err
}

func (r *recordingEndpoints) SubmitPlan(req *structs.PlanRequest) (*structs.PlanResponse, error) {
	r.plans <- req.Plan
	return r.Endpoints.SubmitPlan(req)
}

// receive waits for a value on ch.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10s", what)
		var zero T
		return zero
	}
}

// workerHarness runs workers against a local leader. The leader and the
// workers have fake clocks of their own, so a test advancing the workers'
// time knows every timer on it is a worker's.
type workerHarness struct {
	t      *testing.T
	s      *statetest.Store
	clock  *clock.Fake
	leader *workertest.Leader
	ep     *recordingEndpoints
}

func newWorkerHarness(t *testing.T) *workerHarness {
	s := statetest.NewStore(t)
	l := workertest.NewLeader(t, s, clock.NewFake(testEpoch))
	return &workerHarness{t: t, s: s, clock: clock.NewFake(testEpoch), leader: l, ep: newRecordingEndpoints(l)}
}

// worker starts a worker whose service scheduler runs fn.
func (h *workerHarness) worker(fn func(st scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error) *Worker {
	h.t.Helper()
	return h.workerWith(h.ep, fn)
}

func (h *workerHarness) workerWith(ep Endpoints, fn func(st scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error) *Worker {
	h.t.Helper()
	w, err := New(Config{
		Endpoints:         ep,
		State:             func() *state.StateStore { return h.s.StateStore() },
		EnabledSchedulers: []string{structs.JobTypeService, structs.JobTypeCore},
		Factories:         map[string]scheduler.Factory{structs.JobTypeService: factoryOf(fn)},
		Clock:             h.clock,
	})
	must.NoError(h.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	w.Start(ctx)
	h.t.Cleanup(func() {
		w.Stop()
		cancel()
		<-w.Done()
	})
	return w
}

// register writes a job and its pending eval, which reaches the broker.
func (h *workerHarness) register(job *structs.Job) *structs.Evaluation {
	h.t.Helper()
	e := &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID, Status: structs.EvalStatusPending,
	}
	must.NoError(h.t, h.leader.WriteEvals(e))
	return e
}

// waitFor waits until the worker's status and workload satisfy ok.
func waitForWorker(t *testing.T, w *Worker, what string, ok func(Status, WorkloadStatus) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		st, wl, changed := w.watch()
		if ok(st, wl) {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("worker never got %s; it is %s/%s", what, st, wl)
		}
	}
}

func idle(st Status, wl WorkloadStatus) bool {
	return st == Started && wl == WorkloadWaitingToDequeue
}

func completeEval(p scheduler.Planner, eval *structs.Evaluation) error {
	e := eval.Copy()
	e.Status = structs.EvalStatusComplete
	return p.UpdateEval(e)
}

func TestWorker_SchedulesAndAcks(t *testing.T) {
	h := newWorkerHarness(t)
	n, j := h.s.Node(), h.s.Job()
	var snapIndex uint64
	w := h.worker(func(st scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error {
		snapIndex, _ = st.LatestIndex()
		plan := eval.MakePlan(j)
		plan.AppendAlloc(newTestAlloc(j, n, 500))
		r, fresh, err := p.SubmitPlan(plan)
		if err != nil {
			return err
		}
		if fresh != nil || r.RefreshIndex != 0 || r.AllocIndex == 0 {
			return fmt.Errorf("unexpected result %+v", r)
		}
		return completeEval(p, eval)
	})
	waitForWorker(t, w, "idle", idle)
	info := w.Info()
	must.Eq(t, w.ID(), info.ID)
	must.Eq(t, testEpoch, info.Started)
	must.Eq(t, "Started", info.Status)

	e := h.register(j)
	must.Eq(t, e.ID, receive(t, h.ep.acks, "ack"))
	plan := receive(t, h.ep.plans, "plan")
	must.Eq(t, snapIndex, plan.SnapshotIndex)
	token, _ := h.leader.Broker.Outstanding(e.ID)
	must.Eq(t, "", token) // acked
	must.NotEq(t, "", plan.EvalToken)

	stored, err := h.s.StateStore().EvalByID(nil, e.ID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusComplete, stored.Status)
	must.Eq(t, snapIndex, stored.SnapshotIndex)
	must.Eq(t, testEpoch.UnixNano(), stored.ModifyTime)
	allocs, err := h.s.StateStore().AllocsByJob(nil, j.Namespace, j.ID, false)
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	waitForWorker(t, w, "idle again", idle)
}

func TestWorker_NacksOnFailure(t *testing.T) {
	cases := map[string]func() error{
		"error": func() error { return errors.New("no can do") },
		"panic": func() error { panic("scheduler bug") },
	}
	for name, fail := range cases {
		t.Run(name, func(t *testing.T) {
			h := newWorkerHarness(t)
			j := h.s.Job()
			h.worker(func(scheduler.State, scheduler.Planner, *structs.Evaluation) error { return fail() })
			e := h.register(j)
			must.Eq(t, e.ID, receive(t, h.ep.nacks, "nack"))
			// Nacked, so waiting out the redelivery delay.
			must.Eq(t, 1, h.leader.Broker.Stats().TotalWaiting)
		})
	}
}

// TestWorker_WaitsForTheEvalsIndex: the worker schedules only once its
// store has everything the leader had when it handed the eval out, and
// nacks the eval if that takes longer than the sync limit.
func TestWorker_WaitsForTheEvalsIndex(t *testing.T) {
	h := newWorkerHarness(t)
	j := h.s.Job()
	ahead := &laggingEndpoints{Endpoints: h.ep, extra: 1}
	scheduled := make(chan uint64, 1)
	w := h.workerWith(ahead, func(st scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error {
		idx, _ := st.LatestIndex()
		scheduled <- idx
		return completeEval(p, eval)
	})
	e := h.register(j)
	waitForWorker(t, w, "waiting for raft", func(_ Status, wl WorkloadStatus) bool { return wl == WorkloadWaitingForRaft })
	want := h.s.Latest() + 1
	h.s.Job() // the store reaches the wait index
	must.GreaterEq(t, want, receive(t, scheduled, "scheduling"))
	must.Eq(t, e.ID, receive(t, h.ep.acks, "ack"))

	// Now a wait index the store never reaches.
	ahead.extra = 1000
	e2 := h.register(h.s.Job())
	waitForWorker(t, w, "waiting for raft", func(_ Status, wl WorkloadStatus) bool { return wl == WorkloadWaitingForRaft })
	must.NoError(t, h.clock.BlockUntil(context.Background(), 1))
	h.clock.Advance(workerRaftSyncLimit)
	must.Eq(t, e2.ID, receive(t, h.ep.nacks, "nack"))
}

// laggingEndpoints hands out wait indexes beyond the store's.
type laggingEndpoints struct {
	Endpoints
	extra uint64
}

func (l *laggingEndpoints) Dequeue(ctx context.Context, req *structs.EvalDequeueRequest) (*structs.EvalDequeueResponse, error) {
	resp, err := l.Endpoints.Dequeue(ctx, req)
	if resp != nil && resp.Eval != nil {
		resp.WaitIndex += l.extra
	}
	return resp, err
}

// TestWorker_RefreshAfterPartialCommit: a plan partially rejected comes
// back with a fresh state at least as new as the RefreshIndex, and the
// next plan is stamped with it.
func TestWorker_RefreshAfterPartialCommit(t *testing.T) {
	h := newWorkerHarness(t)
	good, full, j := h.s.Node(), h.s.Node(), h.s.Job()
	h.s.Alloc(j, full, 3500)
	type step struct {
		result *structs.PlanResult
		index  uint64
	}
	steps := make(chan step, 2)
	h.worker(func(st scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error {
		plan := eval.MakePlan(j)
		plan.AppendAlloc(newTestAlloc(j, good, 500))
		plan.AppendAlloc(newTestAlloc(j, full, 500))
		r, fresh, err := p.SubmitPlan(plan)
		if err != nil {
			return err
		}
		if fresh == nil {
			return errors.New("no fresh state after a partial commit")
		}
		idx, _ := fresh.LatestIndex()
		steps <- step{r, idx}
		plan2 := eval.MakePlan(j)
		plan2.AppendAlloc(newTestAlloc(j, good, 500))
		if _, _, err := p.SubmitPlan(plan2); err != nil {
			return err
		}
		return completeEval(p, eval)
	})
	h.register(j)
	first := receive(t, h.ep.plans, "plan")
	got := receive(t, steps, "refresh")
	must.Eq(t, []string{full.ID}, got.result.RejectedNodes)
	must.GreaterEq(t, got.result.RefreshIndex, got.index)
	second := receive(t, h.ep.plans, "second plan")
	must.Eq(t, got.index, second.SnapshotIndex)
	must.Less(t, second.SnapshotIndex, first.SnapshotIndex)
	receive(t, h.ep.acks, "ack")
}

// TestWorker_PauseResumeStop walks the statuses.
func TestWorker_PauseResumeStop(t *testing.T) {
	h := newWorkerHarness(t)
	j := h.s.Job()
	release := make(chan struct{})
	inScheduler := make(chan string, 10)
	w := h.worker(func(_ scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error {
		inScheduler <- eval.ID
		<-release
		return completeEval(p, eval)
	})
	waitForWorker(t, w, "idle", idle)

	// Paused while idle: parks at once, takes nothing.
	w.Pause()
	waitForWorker(t, w, "paused", func(st Status, wl WorkloadStatus) bool {
		return st == Paused && wl == WorkloadPaused
	})
	e1 := h.register(j)
	w.Resume()
	must.Eq(t, e1.ID, receive(t, inScheduler, "scheduling"))
	waitForWorker(t, w, "started", func(st Status, wl WorkloadStatus) bool {
		return st == Started && wl == WorkloadScheduling
	})

	// Paused mid-eval: finishes it, then parks.
	w.Pause()
	must.Eq(t, Pausing, w.Status())
	e2 := h.register(h.s.Job())
	release <- struct{}{}
	must.Eq(t, e1.ID, receive(t, h.ep.acks, "ack"))
	waitForWorker(t, w, "paused", func(st Status, _ WorkloadStatus) bool { return st == Paused })
	select {
	case id := <-inScheduler:
		t.Fatalf("a paused worker took eval %s", id)
	default:
	}
	w.Resume()
	must.Eq(t, e2.ID, receive(t, inScheduler, "scheduling"))

	// Stopped mid-eval: finishes it and exits.
	w.Stop()
	must.Eq(t, Stopping, w.Status())
	release <- struct{}{}
	must.Eq(t, e2.ID, receive(t, h.ep.acks, "ack"))
	<-w.Done()
	must.Eq(t, Stopped, w.Status())
	must.Eq(t, WorkloadStopped, w.WorkloadStatus())
	w.Pause() // no effect once stopped
	must.Eq(t, "Stopped", w.Info().Status)
}

// scriptedEndpoints answers from queued results, for error paths.
type scriptedEndpoints struct {
	mu          sync.Mutex
	dequeues    []error
	submits     []error
	dequeueCall chan struct{}
	submitCall  chan struct{}
}

func newScriptedEndpoints() *scriptedEndpoints {
	return &scriptedEndpoints{dequeueCall: make(chan struct{}, 10), submitCall: make(chan struct{}, 10)}
}

func (s *scriptedEndpoints) next(list *[]error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(*list) == 0 {
		return nil
	}
	err := (*list)[0]
	*list = (*list)[1:]
	return err
}

func (s *scriptedEndpoints) Dequeue(ctx context.Context, req *structs.EvalDequeueRequest) (*structs.EvalDequeueResponse, error) {
	s.dequeueCall <- struct{}{}
	if err := s.next(&s.dequeues); err != nil {
		return nil, err
	}
	<-ctx.Done() // nothing to hand out
	return nil, ctx.Err()
}

func (s *scriptedEndpoints) SubmitPlan(req *structs.PlanRequest) (*structs.PlanResponse, error) {
	s.submitCall <- struct{}{}
	if err := s.next(&s.submits); err != nil {
		return nil, err
	}
	return &structs.PlanResponse{Result: &structs.PlanResult{AllocIndex: 1}}, nil
}

func (s *scriptedEndpoints) Ack(*structs.EvalAckRequest) error            { return nil }
func (s *scriptedEndpoints) Nack(*structs.EvalAckRequest) error           { return nil }
func (s *scriptedEndpoints) UpdateEval(*structs.EvalUpdateRequest) error  { return nil }
func (s *scriptedEndpoints) CreateEval(*structs.EvalUpdateRequest) error  { return nil }
func (s *scriptedEndpoints) ReblockEval(*structs.EvalUpdateRequest) error { return nil }

// TestWorker_DequeueBackoff: dequeue errors back off 20 ms, 40 ms, 80 ms
// on the clock; a success resets the count.
func TestWorker_DequeueBackoff(t *testing.T) {
	h := newWorkerHarness(t)
	boom := errors.New("rpc error: connection refused")
	ep := newScriptedEndpoints()
	ep.dequeues = []error{boom, boom, boom}
	w := h.workerWith(ep, nil)
	for _, d := range []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond} {
		receive(t, ep.dequeueCall, "dequeue")
		waitForWorker(t, w, "backoff", func(_ Status, wl WorkloadStatus) bool { return wl == WorkloadBackoff })
		// The status shows before the backoff's timer is set: advancing
		// the clock in between would pass a timer not yet there.
		must.NoError(t, h.clock.BlockUntil(context.Background(), 1))
		h.clock.Advance(d - time.Millisecond)
		select {
		case <-ep.dequeueCall:
			t.Fatalf("dequeued again before %v passed", d)
		default:
		}
		h.clock.Advance(time.Millisecond)
	}
	receive(t, ep.dequeueCall, "dequeue")
	waitForWorker(t, w, "idle", idle)
}

// TestWorker_RetriesWhileNoLeader: plan submission is retried, 500 ms then
// 1 s later, while the leader is missing; other errors are not retried.
func TestWorker_RetriesWhileNoLeader(t *testing.T) {
	h := newWorkerHarness(t)
	ep := newScriptedEndpoints()
	ep.submits = []error{
		fmt.Errorf("rpc: %w", structs.ErrNoLeader),
		fmt.Errorf("rpc: %w", structs.ErrPlanQueueDisabled),
	}
	w := h.workerWith(ep, nil)
	p := &workerPlanner{w: w, eval: &structs.Evaluation{ID: "e"}, token: "t"}
	done := make(chan error, 1)
	go func() {
		_, _, err := p.SubmitPlan(&structs.Plan{EvalID: "e"})
		done <- err
	}()
	receive(t, ep.submitCall, "submit")
	must.NoError(t, h.clock.BlockUntil(context.Background(), 1))
	h.clock.Advance(backoffBaselineSlow - 1)
	must.Eq(t, 1, h.clock.Pending()) // not yet
	h.clock.Advance(1)
	receive(t, ep.submitCall, "submit")
	must.NoError(t, h.clock.BlockUntil(context.Background(), 1))
	h.clock.Advance(2 * backoffBaselineSlow)
	receive(t, ep.submitCall, "submit")
	must.NoError(t, receive(t, done, "result"))

	ep.mu.Lock()
	ep.submits = []error{structs.ErrTokenMismatch}
	ep.mu.Unlock()
	_, _, err := p.SubmitPlan(&structs.Plan{EvalID: "e"})
	must.ErrorContains(t, err, structs.ErrTokenMismatch.Error())
}

// TestWorker_ReblockWritesChangedQueuedCounts: a reblocked eval whose
// queued counts moved is written before it is reblocked.
func TestWorker_ReblockWritesChangedQueuedCounts(t *testing.T) {
	h := newWorkerHarness(t)
	j := h.s.Job() // its summary queues the group's count
	blocked := &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: j.Namespace, Priority: j.Priority, Type: j.Type,
		TriggeredBy: structs.EvalTriggerQueuedAllocs, JobID: j.ID, Status: structs.EvalStatusBlocked,
	}
	must.NoError(t, h.leader.WriteEvals(blocked))
	// Released by a capacity change, the blocked eval reaches the broker.
	h.leader.Blocked.Unblock("any", h.s.Latest())
	h.worker(func(st scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error {
		e := eval.Copy()
		e.QueuedAllocations = map[string]int{j.TaskGroups[0].Name: 42}
		return p.ReblockEval(e)
	})
	must.Eq(t, blocked.ID, receive(t, h.ep.acks, "ack"))
	stored, err := h.s.StateStore().EvalByID(nil, blocked.ID)
	must.NoError(t, err)
	must.Eq(t, 42, stored.QueuedAllocations[j.TaskGroups[0].Name])
	must.Eq(t, structs.EvalStatusBlocked, stored.Status)
	h.leader.Blocked.Sync()
	must.Eq(t, 1, h.leader.Blocked.Stats().TotalBlocked)
}

func TestWorkerStatusStrings(t *testing.T) {
	must.Eq(t, []string{"Unknown", "Starting", "Started", "Pausing", "Paused", "Resuming", "Stopping", "Stopped"},
		[]string{UnknownStatus.String(), Starting.String(), Started.String(), Pausing.String(),
			Paused.String(), Resuming.String(), Stopping.String(), Stopped.String()})
	must.Eq(t, []string{"UnknownStatus", "Running", "WaitingToDequeue", "WaitingForRaft", "Scheduling", "Submitting", "Backoff", "Stopped", "Paused"},
		[]string{WorkloadUnknownStatus.String(), WorkloadRunning.String(), WorkloadWaitingToDequeue.String(), WorkloadWaitingForRaft.String(),
			WorkloadScheduling.String(), WorkloadSubmitting.String(), WorkloadBackoff.String(), WorkloadStopped.String(), WorkloadPaused.String()})
}

func TestNew_Validates(t *testing.T) {
	_, err := New(Config{})
	must.ErrorContains(t, err, "Endpoints is required")
	must.ErrorContains(t, err, "EnabledSchedulers must not be empty")
}

// TestWorker_Metrics: one eval records the worker's stage timings.
func TestWorker_Metrics(t *testing.T) {
	sink := metricstest.WithInmem(t)
	h := newWorkerHarness(t)
	n, j := h.s.Node(), h.s.Job()
	w := h.worker(func(_ scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error {
		plan := eval.MakePlan(j)
		plan.AppendAlloc(newTestAlloc(j, n, 500))
		if _, _, err := p.SubmitPlan(plan); err != nil {
			return err
		}
		return completeEval(p, eval)
	})
	waitForWorker(t, w, "idle", idle)
	h.register(j)
	receive(t, h.ep.acks, "ack")
	waitForWorker(t, w, "idle", idle) // the ack's timing is recorded after the call
	for _, name := range []string{"dequeue_eval", "wait_for_index", "invoke_scheduler.service", "submit_plan", "update_eval", "send_ack"} {
		count, _ := metricstest.Sample(t, sink, "nomad.nomad.worker."+name)
		must.Eq(t, 1, count, must.Sprintf("nomad.worker.%s", name))
	}
}
