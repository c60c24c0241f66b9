package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// Timings of the worker loop.
const (
	// workerDequeueTimeout is how long one Dequeue waits for work.
	workerDequeueTimeout = 500 * time.Millisecond
	// workerRaftSyncLimit bounds the wait for the local state store to
	// reach the index an eval or a plan refresh needs.
	workerRaftSyncLimit = 5 * time.Second
	// workerSyncGrace is how much longer a worker that timed out waiting
	// for its store keeps waiting before it takes new work: a store that
	// far behind would only fail the next eval too.
	workerSyncGrace = 10 * workerRaftSyncLimit
	// workerDequeueErrGrace is how long dequeue errors are logged at
	// debug level only; they are expected while a leader is elected.
	workerDequeueErrGrace = 10 * time.Second

	// Backoff bases and limits: min(base << failures, limit).
	backoffBaselineFast             = 20 * time.Millisecond
	backoffBaselineSlow             = 500 * time.Millisecond
	backoffLimitSlow                = 10 * time.Second
	backoffSchedulerVersionMismatch = 30 * time.Second
)

// Config wires a Worker. Everything but the schedulers is shared by
// the workers of a pool.
type Config struct {
	// Endpoints reach the leader.
	Endpoints Endpoints
	// State returns this server's state store; called anew for every
	// wait, because a snapshot restore replaces the store.
	State func() *state.StateStore
	// EnabledSchedulers are the eval types the worker dequeues.
	EnabledSchedulers []string
	// Factories build schedulers by eval type; scheduler.Builtin() when
	// nil. The server adds its core (garbage collection) scheduler under
	// structs.JobTypeCore.
	Factories scheduler.Factories
	// Clock times waits, backoffs and metrics and stamps evals;
	// clock.Real{} when nil.
	Clock clock.Clock
	// Logger; a null logger when nil.
	Logger hclog.Logger
}

// Worker is one scheduling worker: a goroutine that takes evaluations
// from the leader, waits until the local state store has caught up with
// each, runs its scheduler on a snapshot, and acks or nacks it. It acts as
// the scheduler's Planner, forwarding plans and eval writes to the
// leader.
//
// Pause, Resume and Stop may be called from any goroutine; they return at
// once and the worker follows at its next step: it always finishes the
// eval in hand first.
type Worker struct {
	id        string
	endpoints Endpoints
	state     func() *state.StateStore
	enabled   []string
	factories scheduler.Factories
	clock     clock.Clock
	logger    hclog.Logger

	// ctx ends with the server; stop is closed by Stop.
	ctx  context.Context
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	started  time.Time
	status   Status
	workload WorkloadStatus
	pause    bool
	stopping bool
	// wake is closed and replaced when pause or stop changes, to rouse a
	// parked worker.
	wake chan struct{}
	// changed is closed and replaced whenever status or workload change.
	changed chan struct{}
	// cancelIdle interrupts what the worker waits on between evals
	// (Dequeue, a backoff), so pause and stop take effect at once.
	cancelIdle context.CancelFunc

	// Loop-goroutine state.
	dequeueFailures  int
	dequeueFailingAt time.Time
	// scratch is the schedulers' working memory, reused from one eval to
	// the next (the worker runs one at a time).
	scratch scheduler.Scratch
}

// New checks cfg and returns a worker that is not started.
func New(cfg Config) (*Worker, error) {
	var errs []error
	if cfg.Endpoints == nil {
		errs = append(errs, errors.New("Endpoints is required"))
	}
	if cfg.State == nil {
		errs = append(errs, errors.New("State is required"))
	}
	if len(cfg.EnabledSchedulers) == 0 {
		errs = append(errs, errors.New("EnabledSchedulers must not be empty"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("worker config: %w", err)
	}
	return newWorker(cfg), nil
}

// newWorker builds a worker from a config already checked.
func newWorker(cfg Config) *Worker {
	if cfg.Factories == nil {
		cfg.Factories = scheduler.Builtin()
	}
	w := &Worker{
		id:        structs.GenerateUUID(),
		endpoints: cfg.Endpoints,
		state:     cfg.State,
		enabled:   slices.Clone(cfg.EnabledSchedulers),
		factories: cfg.Factories,
		clock:     cfg.Clock,
		logger:    cfg.Logger,
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		wake:      make(chan struct{}),
		changed:   make(chan struct{}),
	}
	if w.clock == nil {
		w.clock = clock.Real{}
	}
	if w.logger == nil {
		w.logger = hclog.NewNullLogger()
	}
	w.logger = w.logger.Named("worker").With("worker_id", w.id)
	return w
}

// ID returns the worker's UUID.
func (w *Worker) ID() string { return w.id }

// Start runs the worker in a goroutine of its own until Stop or until
// ctx ends (the server shuts down; the eval in hand is abandoned and the
// broker redelivers it). Start may be called once.
func (w *Worker) Start(ctx context.Context) {
	w.mu.Lock()
	if w.status != UnknownStatus {
		w.mu.Unlock()
		return
	}
	w.ctx = ctx
	w.started = w.clock.Now().UTC()
	w.status = Starting
	w.noteLocked()
	w.mu.Unlock()
	go w.run()
}

// Pause makes the worker park once the eval in hand is done.
func (w *Worker) Pause() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopping || w.pause {
		return
	}
	w.pause = true
	w.status = Pausing
	w.noteLocked()
	w.rouseLocked()
}

// Resume undoes Pause.
func (w *Worker) Resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopping || !w.pause {
		return
	}
	w.pause = false
	w.status = Resuming
	w.noteLocked()
	w.rouseLocked()
}

// Stop makes the worker exit once the eval in hand is done; Done closes
// then.
func (w *Worker) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopping {
		return
	}
	w.stopping = true
	if w.status != Stopped {
		w.status = Stopping
		w.noteLocked()
	}
	close(w.stop)
	w.rouseLocked()
	if w.ctx == nil {
		// Never started: nothing will run to close done.
		w.status, w.workload = Stopped, WorkloadStopped
		w.noteLocked()
		close(w.done)
	}
}

// Done is closed when the worker has exited.
func (w *Worker) Done() <-chan struct{} { return w.done }

func (w *Worker) noteLocked() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// watch returns the current status and a channel closed at the next
// change of status or workload.
func (w *Worker) watch() (Status, WorkloadStatus, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status, w.workload, w.changed
}

func (w *Worker) rouseLocked() {
	close(w.wake)
	w.wake = make(chan struct{})
	if w.cancelIdle != nil {
		w.cancelIdle()
	}
}

// Status returns the lifecycle status.
func (w *Worker) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status
}

// WorkloadStatus returns what the worker is doing.
func (w *Worker) WorkloadStatus() WorkloadStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.workload
}

// Info describes a worker for /v1/agent/schedulers; the JSON names
// are that endpoint's (snake_case, unlike the rest of the API).
type Info struct {
	ID                string    `json:"id"`
	EnabledSchedulers []string  `json:"enabled_schedulers"`
	Started           time.Time `json:"started"`
	Status            string    `json:"status"`
	WorkloadStatus    string    `json:"workload_status"`
}

// Info returns the worker's description.
func (w *Worker) Info() Info {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Info{
		ID:                w.id,
		EnabledSchedulers: slices.Clone(w.enabled),
		Started:           w.started,
		Status:            w.status.String(),
		WorkloadStatus:    w.workload.String(),
	}
}

func (w *Worker) setWorkload(s WorkloadStatus) {
	w.mu.Lock()
	w.workload = s
	w.noteLocked()
	w.mu.Unlock()
}

// run is the worker loop.
func (w *Worker) run() {
	defer func() {
		w.mu.Lock()
		w.status, w.workload = Stopped, WorkloadStopped
		w.noteLocked()
		w.mu.Unlock()
		close(w.done)
	}()
	w.mu.Lock()
	if w.status == Starting {
		w.status = Started
	}
	w.workload = WorkloadRunning
	w.noteLocked()
	w.mu.Unlock()

	for w.waitWhilePaused() {
		eval, token, waitIndex, ok := w.dequeue()
		if !ok {
			continue
		}
		w.process(eval, token, waitIndex)
	}
}

// waitWhilePaused parks the worker while paused; false means exit.
func (w *Worker) waitWhilePaused() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if w.stopping || w.ctx.Err() != nil {
			return false
		}
		if !w.pause {
			if w.status != Started {
				w.status = Started
				w.workload = WorkloadRunning
				w.noteLocked()
			}
			return true
		}
		if w.status != Paused {
			w.status, w.workload = Paused, WorkloadPaused
			w.noteLocked()
		}
		wake := w.wake
		w.mu.Unlock()
		select {
		case <-wake:
		case <-w.ctx.Done():
		}
		w.mu.Lock()
	}
}

// idleContext returns a context that ends when the worker is paused or
// stopped or the server ends, for the waits between evals.
func (w *Worker) idleContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(w.ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pause || w.stopping {
		cancel()
		return ctx, cancel
	}
	w.cancelIdle = cancel
	return ctx, func() {
		w.mu.Lock()
		w.cancelIdle = nil
		w.mu.Unlock()
		cancel()
	}
}

// dequeue asks the leader for an eval; ok is false when there is none
// (timeout, error, pause or stop).
func (w *Worker) dequeue() (eval *structs.Evaluation, token string, waitIndex uint64, ok bool) {
	w.setWorkload(WorkloadWaitingToDequeue)
	ctx, cancel := w.idleContext()
	defer cancel()
	start := w.clock.Now()
	resp, err := w.endpoints.Dequeue(ctx, &structs.EvalDequeueRequest{
		Schedulers:       w.enabled,
		Timeout:          workerDequeueTimeout,
		SchedulerVersion: structs.SchedulerVersion,
		WorkerID:         w.id,
	})
	if err != nil {
		if ctx.Err() == nil {
			w.dequeueFailed(ctx, err)
		}
		return nil, "", 0, false
	}
	w.dequeueFailures = 0
	w.dequeueFailingAt = time.Time{}
	if resp == nil || resp.Eval == nil {
		return nil, "", 0, false
	}
	// An eval that arrived is in hand, even if a pause or stop came
	// meanwhile: it is processed, not handed back.
	clock.EmitDuration([]string{"nomad", "worker", "dequeue_eval"}, w.clock.Now().Sub(start), nil)
	return resp.Eval, resp.Token, resp.GetWaitIndex(), true
}

// dequeueFailed logs a dequeue error (quietly during the grace period a
// leader election takes) and backs off.
func (w *Worker) dequeueFailed(ctx context.Context, err error) {
	now := w.clock.Now()
	if w.dequeueFailingAt.IsZero() {
		w.dequeueFailingAt = now
	}
	// A paused broker (PauseEvalBroker) is an operator's choice, not a
	// fault: it is never logged as an error.
	paused := structs.IsKind(err, structs.ErrBrokerDisabled)
	if paused || now.Sub(w.dequeueFailingAt) < workerDequeueErrGrace {
		w.logger.Debug("failed to dequeue evaluation", "error", err)
	} else {
		w.logger.Error("failed to dequeue evaluation", "error", err)
	}
	if structs.IsKind(err, structs.ErrSchedulerVersion) {
		w.backoff(ctx, backoffSchedulerVersionMismatch)
		return
	}
	w.backoff(ctx, backoffDelay(backoffBaselineFast, backoffLimitSlow, w.dequeueFailures))
	w.dequeueFailures++
}

// backoffDelay is min(base << failures, limit).
func backoffDelay(base, limit time.Duration, failures int) time.Duration {
	if failures >= 32 {
		return limit
	}
	return min(base<<failures, limit)
}

// backoff waits d on the clock; false when ctx ended first.
func (w *Worker) backoff(ctx context.Context, d time.Duration) bool {
	prev := w.WorkloadStatus()
	w.setWorkload(WorkloadBackoff)
	defer w.setWorkload(prev)
	fired := make(chan struct{})
	t := w.clock.AfterFunc(d, func() { close(fired) })
	select {
	case <-fired:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}

// process schedules one eval and acks or nacks it.
func (w *Worker) process(eval *structs.Evaluation, token string, waitIndex uint64) {
	logger := w.logger.With("eval_id", eval.ID, "job_id", eval.JobID, "namespace", eval.Namespace)
	w.setWorkload(WorkloadWaitingForRaft)
	snap, err := w.snapshotMinIndex(w.ctx, waitIndex)
	if err != nil {
		logger.Error("state store did not catch up with the evaluation", "wait_index", waitIndex, "error", err)
		w.nack(eval, token)
		// Give the store time before taking more work it cannot serve.
		ctx, cancel := w.idleContext()
		_, _ = w.snapshotMinIndexWithin(ctx, waitIndex, workerSyncGrace)
		cancel()
		return
	}

	w.setWorkload(WorkloadScheduling)
	if err := w.invokeScheduler(snap, eval, token, logger); err != nil {
		logger.Error("scheduling the evaluation failed", "error", err)
		w.nack(eval, token)
		return
	}
	w.ack(eval, token)
}

// invokeScheduler runs the eval's scheduler on snap, with the worker as
// its Planner. A panicking scheduler fails the eval, not the server.
func (w *Worker) invokeScheduler(snap *state.StateSnapshot, eval *structs.Evaluation, token string, logger hclog.Logger) (err error) {
	index, err := snap.LatestIndex()
	if err != nil {
		return err
	}
	planner := &workerPlanner{w: w, eval: eval, token: token, snap: snap, snapshotIndex: index}
	cfg := &scheduler.Config{Logger: logger, Now: w.clock.Now, Scratch: &w.scratch}
	sched, err := w.factories.New(eval.Type, cfg, snap.SchedulerView(), planner)
	if err != nil {
		return fmt.Errorf("eval %q: %w", eval.ID, err)
	}

	defer func() {
		if r := recover(); r != nil {
			logger.Error("scheduler panicked", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("eval %q: %s scheduler panicked: %v", eval.ID, eval.Type, r)
		}
	}()
	start := w.clock.Now()
	defer func() {
		clock.EmitDuration([]string{"nomad", "worker", "invoke_scheduler", eval.Type}, w.clock.Now().Sub(start), nil)
	}()
	if err := sched.Process(eval); err != nil {
		return fmt.Errorf("eval %q: %w", eval.ID, err)
	}
	return nil
}

// snapshotMinIndex waits up to workerRaftSyncLimit for the local store to
// reach index.
func (w *Worker) snapshotMinIndex(ctx context.Context, index uint64) (*state.StateSnapshot, error) {
	start := w.clock.Now()
	defer func() {
		clock.EmitDuration([]string{"nomad", "worker", "wait_for_index"}, w.clock.Now().Sub(start), nil)
	}()
	return w.snapshotMinIndexWithin(ctx, index, workerRaftSyncLimit)
}

func (w *Worker) snapshotMinIndexWithin(ctx context.Context, index uint64, limit time.Duration) (*state.StateSnapshot, error) {
	for {
		wctx, cancel := clock.WithTimeout(ctx, w.clock, limit)
		snap, err := w.state().SnapshotMinIndex(wctx, index)
		timedOut := clock.TimedOut(wctx)
		cancel()
		switch {
		case err == nil:
			return snap, nil
		case errors.Is(err, state.ErrStoreAbandoned):
			continue // a restore replaced the store; wait on the new one
		case timedOut:
			return nil, fmt.Errorf("timed out after %v waiting for state index %d", limit, index)
		default:
			return nil, err
		}
	}
}

func (w *Worker) ack(eval *structs.Evaluation, token string) {
	start := w.clock.Now()
	if err := w.endpoints.Ack(&structs.EvalAckRequest{EvalID: eval.ID, Token: token}); err != nil {
		w.logger.Error("failed to ack evaluation", "eval_id", eval.ID, "error", err)
	}
	clock.EmitDuration([]string{"nomad", "worker", "send_ack"}, w.clock.Now().Sub(start), nil)
}

func (w *Worker) nack(eval *structs.Evaluation, token string) {
	if err := w.endpoints.Nack(&structs.EvalAckRequest{EvalID: eval.ID, Token: token}); err != nil {
		w.logger.Error("failed to nack evaluation", "eval_id", eval.ID, "error", err)
	}
	metrics.IncrCounter([]string{"nomad", "worker", "send_nack"}, 1)
}
