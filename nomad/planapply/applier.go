package planapply

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/planjudge"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// DefaultPipeline is how many plan results may be in Raft at once
// unless configured (server.plan_apply_pipeline). With one, the
// applier judges the next plan while the previous one commits but waits
// for that commit before sending another; deeper pipelines let Raft group
// several plans into one fsync. Measured with a 1 ms group commit, 16
// commits 6.5 times as many plans per second as 1, and 32 hardly more
// (the applier is then CPU bound); a depth above the number of workers
// submitting at once changes nothing, and thanks to planjudge.InFlight's
// rule a deeper pipeline adds no risk. See website/content/performance.md.
const DefaultPipeline = 16

// DefaultSnapshotTimeout bounds how long the applier waits for its
// state store to reach the index a plan was made at.
const DefaultSnapshotTimeout = 10 * time.Second

// Metric keys of the plan applier.
var (
	metricPlanWaitForIndex = []string{"nomad", "plan", "wait_for_index"}
	metricPlanEvaluate     = []string{"nomad", "plan", "evaluate"}
	metricPlanApply        = []string{"nomad", "plan", "apply"}
	metricPlanInflight     = []string{"nomad", "plan", "inflight"}
	metricPlanNodeRejected = []string{"nomad", "plan", "node_rejected"}
)

// OutstandingEvals tells the applier whether the worker that sent a plan
// still holds its eval. broker.Broker implements it. Safe for concurrent
// use.
type OutstandingEvals interface {
	// Outstanding returns the token of the eval's current delivery; ok is
	// false when the eval is not outstanding.
	Outstanding(evalID string) (token string, ok bool)
}

// Config wires an Applier.
type Config struct {
	// Queue is where plans come from. The applier dequeues; Plan.Submit
	// enqueues.
	Queue *Queue
	// Evals guards against plans of evals no longer outstanding: a worker
	// whose delivery timed out, or one that talks to a former leader.
	Evals OutstandingEvals
	// Raft commits the results.
	Raft Raft
	// State returns this server's state store; called anew for every plan
	// because a snapshot restore replaces the store.
	State func() *state.StateStore
	// Clock times waits and metrics and stamps allocs; clock.Real{} when
	// nil.
	Clock clock.Clock
	// Logger; a null logger when nil.
	Logger hclog.Logger
	// Pipeline is how many results may be in Raft at once;
	// DefaultPipeline when 0.
	Pipeline int
	// EvalParallelism is how many goroutines check the nodes of one large
	// plan; half the CPUs (at least one) when 0.
	EvalParallelism int
	// SnapshotTimeout bounds the wait for the state store to reach a
	// plan's SnapshotIndex; DefaultSnapshotTimeout when 0.
	SnapshotTimeout time.Duration
	// JobRefs reports whether every server applies plan results that
	// name their job's stored version instead of carrying the job (see
	// structs.JobVersionRef); asked for each result that needs a job.
	// Nil: never, every result carries its job.
	JobRefs func() bool
	// PlanEvals reports whether every server writes the eval a plan
	// result carries (structs.MinVersionPlanEval); asked for each plan
	// that carries its eval and commits whole. Nil: never, the worker
	// writes its eval with an update of its own.
	PlanEvals func() bool
}

// Applier is the single judge of plans, on the leader. It takes plans
// from the plan queue one at a time, checks each node of each plan
// against the newest state plus the results still being committed (the
// rules are package planjudge's), commits what fits through Raft, and
// answers the submitter once the commit is applied. Judging plan N+1
// overlaps the commit of plan N, and up to Pipeline results are in Raft
// at once; answers go out in the order the plans were judged.
//
// The server runs it while it leads: see Run.
type Applier struct {
	queue       *Queue
	evals       OutstandingEvals
	raft        Raft
	state       func() *state.StateStore
	clock       clock.Clock
	logger      hclog.Logger
	pipeline    int
	parallelism int
	snapTimeout time.Duration
	jobRefs     func() bool
	planEvals   func() bool

	running atomic.Bool
	// termMu guards termDone, closed when the Run started by
	// LeadershipGained returns.
	termMu   sync.Mutex
	termDone chan struct{}
	// waitHook, set by tests only, is called when a plan starts waiting
	// for the commit of the pending result seq.
	waitHook func(seq uint64)
}

// New checks cfg and returns an applier that is not running.
func New(cfg Config) (*Applier, error) {
	var errs []error
	if cfg.Queue == nil {
		errs = append(errs, errors.New("Queue is required"))
	}
	if cfg.Evals == nil {
		errs = append(errs, errors.New("Evals is required"))
	}
	if cfg.Raft == nil {
		errs = append(errs, errors.New("Raft is required"))
	}
	if cfg.State == nil {
		errs = append(errs, errors.New("State is required"))
	}
	if cfg.Pipeline < 0 {
		errs = append(errs, fmt.Errorf("Pipeline must be >= 1 (0 for the default), got %d", cfg.Pipeline))
	}
	if cfg.EvalParallelism < 0 {
		errs = append(errs, fmt.Errorf("EvalParallelism must be >= 1 (0 for the default), got %d", cfg.EvalParallelism))
	}
	if cfg.SnapshotTimeout < 0 {
		errs = append(errs, fmt.Errorf("SnapshotTimeout must be positive (0 for the default), got %v", cfg.SnapshotTimeout))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("plan applier config: %w", err)
	}
	a := &Applier{
		queue:       cfg.Queue,
		evals:       cfg.Evals,
		raft:        cfg.Raft,
		state:       cfg.State,
		clock:       cfg.Clock,
		logger:      cfg.Logger,
		pipeline:    cfg.Pipeline,
		parallelism: cfg.EvalParallelism,
		snapTimeout: cfg.SnapshotTimeout,
		jobRefs:     cfg.JobRefs,
		planEvals:   cfg.PlanEvals,
	}
	if a.clock == nil {
		a.clock = clock.Real{}
	}
	if a.logger == nil {
		a.logger = hclog.NewNullLogger()
	}
	a.logger = a.logger.Named("plan_apply")
	if a.pipeline == 0 {
		a.pipeline = DefaultPipeline
	}
	if a.parallelism == 0 {
		a.parallelism = max(1, runtime.NumCPU()/2)
	}
	if a.snapTimeout == 0 {
		a.snapTimeout = DefaultSnapshotTimeout
	}
	return a, nil
}

// LeadershipGained starts Run for the new term in a goroutine of its own
// (nomad.LeadershipObserver); ctx ends with the term.
func (a *Applier) LeadershipGained(ctx context.Context) {
	done := make(chan struct{})
	a.termMu.Lock()
	a.termDone = done
	a.termMu.Unlock()
	go func() {
		defer close(done)
		if err := a.Run(ctx); err != nil {
			a.logger.Error("plan applier stopped", "error", err)
		}
	}()
}

// LeadershipLost waits until the term's Run has answered every plan it
// took and returned (nomad.LeadershipObserver). The server calls it
// after the term's context ended and before it disables the plan queue,
// which then flushes the plans never taken.
func (a *Applier) LeadershipLost() {
	a.termMu.Lock()
	done := a.termDone
	a.termDone = nil
	a.termMu.Unlock()
	if done != nil {
		<-done
	}
}

// Run applies plans until ctx ends or the plan queue is disabled, and
// returns once every plan it took from the queue has been answered
// (waiting for the Raft outcome of those in flight). The server calls it
// in a goroutine of its own when it gains leadership, after enabling the
// plan queue and after a Raft barrier (so the store holds every entry of
// earlier terms), and ends it when leadership is lost, before the next
// term's Run. One Run at a time: a second concurrent call returns an
// error at once.
func (a *Applier) Run(ctx context.Context) error {
	if !a.running.CompareAndSwap(false, true) {
		return errors.New("plan applier is already running")
	}
	defer a.running.Store(false)

	done := make(chan planCompletion, a.pipeline)
	r := &applyRun{
		Applier:   a,
		pending:   planjudge.NewInFlight(),
		done:      done,
		responder: newPlanResponder(a.clock, done),
	}
	go r.responder.run()
	defer r.responder.close()
	defer metrics.SetGauge(metricPlanInflight, 0)

	for {
		p, err := a.queue.Dequeue(ctx, 0)
		if err != nil {
			if errors.Is(err, structs.ErrPlanQueueDisabled) || ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("plan applier: %w", err)
		}
		if p != nil {
			r.handle(ctx, p)
		}
	}
}

// applyRun is the state of one Run; only its goroutine touches it.
type applyRun struct {
	*Applier

	// pending holds what the results in Raft add to the state the next
	// plan is judged against.
	pending   *planjudge.InFlight
	responder *planResponder
	// done receives, in dispatch order, the outcome of every result sent
	// to Raft. Its capacity is the pipeline depth, which bounds what is
	// in flight, so the responder never blocks on it.
	done chan planCompletion
	// seq numbers the results sent to Raft; completed is the newest one
	// whose outcome was absorbed, inflight how many are still out.
	seq       uint64
	completed uint64
	inflight  int
}

// planCompletion is the Raft outcome of the result dispatched as seq.
type planCompletion struct {
	seq uint64
	err error
}

// handle judges one plan and either answers it or sends its result to
// Raft, leaving the answer to the responder.
func (r *applyRun) handle(ctx context.Context, p *QueuedPlan) {
	plan := p.Plan
	if err := r.checkToken(plan); err != nil {
		p.Respond(nil, err)
		return
	}

	r.absorbCompleted()
	view, verdict, err := r.judge(ctx, plan)
	if err != nil {
		p.Respond(nil, err)
		return
	}
	// A plan that a pending stop might make fit waits for that commit
	// and is judged again; nothing is dispatched meanwhile, so the second
	// verdict cannot wait on anything newer.
	for verdict.WaitFor != 0 {
		if r.waitHook != nil {
			r.waitHook(verdict.WaitFor)
		}
		if !r.awaitSeq(ctx, verdict.WaitFor) {
			p.Respond(nil, ErrQueueFlushed)
			return
		}
		if view, verdict, err = r.judge(ctx, plan); err != nil {
			p.Respond(nil, err)
			return
		}
	}
	r.logRejections(plan, verdict)
	if err := checkPlanEval(view, plan); err != nil {
		p.Respond(nil, err)
		return
	}

	if verdict.Result.IsNoOp() {
		// Answered behind the plans in flight: a rejection may rest on
		// their allocs, so the RefreshIndex must cover their commits.
		r.responder.push(&judgedPlan{queued: p, result: verdict.Result})
		return
	}

	req := planjudge.BuildRequest(view, plan, verdict.Result, r.clock.Now())
	if req.Job != nil && r.jobRefs != nil && r.jobRefs() {
		if err := planjudge.ReferJob(view, req); err != nil {
			p.Respond(nil, fmt.Errorf("plan for eval %q: %w", plan.EvalID, err))
			return
		}
	}
	r.foldEval(plan, verdict.Result, req)
	for r.inflight >= r.pipeline {
		if !r.awaitOne(ctx) {
			p.Respond(nil, ErrQueueFlushed)
			return
		}
	}
	r.seq++
	future := r.raft.ApplyPlanResults(req)
	r.pending.Add(r.seq, view, verdict.Result, req)
	r.inflight++
	metrics.SetGauge(metricPlanInflight, float32(r.inflight))
	r.responder.push(&judgedPlan{
		queued:     p,
		result:     verdict.Result,
		future:     future,
		seq:        r.seq,
		dispatched: r.clock.Now(),
	})
}

// checkToken refuses plans whose eval is no longer outstanding under the
// token the worker got: another worker may already be scheduling it.
func (r *applyRun) checkToken(plan *structs.Plan) error {
	token, ok := r.evals.Outstanding(plan.EvalID)
	switch {
	case !ok:
		return fmt.Errorf("plan for eval %q: %w", plan.EvalID, structs.ErrNotOutstanding)
	case token != plan.EvalToken:
		return fmt.Errorf("plan for eval %q: %w", plan.EvalID, structs.ErrTokenMismatch)
	}
	return nil
}

// judge takes a snapshot at least as new as the plan's and judges the
// plan against it and the results in flight. The snapshot's view is
// returned too: the Raft entry is built against the state it was judged
// against.
func (r *applyRun) judge(ctx context.Context, plan *structs.Plan) (*state.SchedulerView, *planjudge.Verdict, error) {
	snap, err := r.snapshot(ctx, plan)
	if err != nil {
		return nil, nil, err
	}
	view := snap.SchedulerView()
	start := r.clock.Now()
	verdict, err := planjudge.Judge(planjudge.View{State: view, InFlight: r.pending}, plan, r.parallelism)
	clock.EmitDuration(metricPlanEvaluate, r.clock.Now().Sub(start), nil)
	return view, verdict, err
}

// snapshot waits for the state store to reach the index the plan was made
// at: judging it against older state would reject placements on nodes
// the scheduler already saw.
func (r *applyRun) snapshot(ctx context.Context, plan *structs.Plan) (*state.StateSnapshot, error) {
	start := r.clock.Now()
	defer func() { clock.EmitDuration(metricPlanWaitForIndex, r.clock.Now().Sub(start), nil) }()
	for {
		store := r.state()
		wctx, cancel := clock.WithTimeout(ctx, r.clock, r.snapTimeout)
		snap, err := store.SnapshotMinIndex(wctx, plan.SnapshotIndex)
		timedOut := clock.TimedOut(wctx)
		cancel()
		switch {
		case err == nil:
			return snap, nil
		case errors.Is(err, state.ErrStoreAbandoned):
			continue // a restore replaced the store; wait on the new one
		case timedOut:
			return nil, fmt.Errorf("plan for eval %q: timed out after %v waiting for index=%d", plan.EvalID, r.snapTimeout, plan.SnapshotIndex)
		default:
			return nil, fmt.Errorf("plan for eval %q: %w", plan.EvalID, err)
		}
	}
}

// absorbCompleted takes in every outcome already reported.
func (r *applyRun) absorbCompleted() {
	for {
		select {
		case c := <-r.done:
			r.absorb(c)
		default:
			return
		}
	}
}

// awaitOne blocks for the next outcome; false when ctx ended first.
func (r *applyRun) awaitOne(ctx context.Context) bool {
	select {
	case c := <-r.done:
		r.absorb(c)
		return true
	case <-ctx.Done():
		return false
	}
}

// awaitSeq blocks until the outcome of seq is absorbed.
func (r *applyRun) awaitSeq(ctx context.Context, seq uint64) bool {
	for r.completed < seq {
		if !r.awaitOne(ctx) {
			return false
		}
	}
	return true
}

// absorb forgets a result whose outcome is known: committed, it is in the
// state store, which the next snapshot will show; failed, it never
// happened. Either way it no longer belongs on top of the snapshot.
func (r *applyRun) absorb(c planCompletion) {
	r.pending.Remove(c.seq)
	r.completed = c.seq
	r.inflight--
	metrics.SetGauge(metricPlanInflight, float32(r.inflight))
}

func (r *applyRun) logRejections(plan *structs.Plan, verdict *planjudge.Verdict) {
	for i, node := range verdict.Result.RejectedNodes {
		r.logger.Debug("plan for node rejected", "eval_id", plan.EvalID, "node_id", node, "reason", verdict.Reasons[i])
		metrics.IncrCounterWithLabels(metricPlanNodeRejected, 1, []metrics.Label{{Name: "node_id", Value: node}})
	}
}
