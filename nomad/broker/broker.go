package broker

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/priorityheap"
	"github.com/opennomad/nomad/structs"
)

// FailedQueue is the scheduler queue an evaluation is moved to once it has
// been delivered DeliveryLimit times without an Ack. The leader dequeues
// from it to mark such evals failed and create their follow-ups.
const FailedQueue = "_failed"

// Config tunes an Broker. DefaultConfig returns
// Nomad's defaults.
type Config struct {
	// NackTimeout is how long a delivery may stay outstanding without an
	// Ack, Nack or OutstandingReset before it is nacked automatically.
	NackTimeout time.Duration
	// DeliveryLimit is how many deliveries an eval gets before it moves
	// to FailedQueue.
	DeliveryLimit int
	// InitialNackDelay is how long an eval nacked after its first delivery
	// waits before it is ready again.
	InitialNackDelay time.Duration
	// SubsequentNackDelay, multiplied by (deliveries-1), is the wait after
	// later deliveries are nacked.
	SubsequentNackDelay time.Duration

	// Clock arms every timer of the broker; clock.Real{} when nil.
	Clock clock.Clock
	// Logger; a null logger when nil.
	Logger hclog.Logger
}

// DefaultConfig returns a 60 s nack timeout, a delivery limit of
// 3 and redelivery delays of 1 s and 20 s, on the real clock.
func DefaultConfig() Config {
	return Config{
		NackTimeout:         60 * time.Second,
		DeliveryLimit:       3,
		InitialNackDelay:    1 * time.Second,
		SubsequentNackDelay: 20 * time.Second,
		Clock:               clock.Real{},
	}
}

func (c Config) validate() error {
	var errs []error
	if c.NackTimeout <= 0 {
		errs = append(errs, fmt.Errorf("NackTimeout must be positive, got %v", c.NackTimeout))
	}
	if c.DeliveryLimit < 1 {
		errs = append(errs, fmt.Errorf("DeliveryLimit must be >= 1, got %d", c.DeliveryLimit))
	}
	if c.InitialNackDelay < 0 {
		errs = append(errs, fmt.Errorf("InitialNackDelay must be >= 0, got %v", c.InitialNackDelay))
	}
	if c.SubsequentNackDelay < 0 {
		errs = append(errs, fmt.Errorf("SubsequentNackDelay must be >= 0, got %v", c.SubsequentNackDelay))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("eval broker config: %w", err)
	}
	return nil
}

// Broker hands evaluations to scheduler workers. It lives on the leader
// only, is entirely in memory, and is rebuilt from the state store on every
// leadership change (SetEnabled(true), then Restore for each pending eval).
//
// Guarantees:
//   - Priority: Dequeue returns the highest-priority ready eval among the
//     requested scheduler types; within a type, equal priorities come out
//     in CreateIndex order.
//   - At most one eval per (namespace, job) is ready or outstanding at a
//     time. Later evals of the job wait in a pending set; when the one in
//     flight is acked, only the best pending eval (highest priority, then
//     highest ModifyIndex) goes on and the others are moved to a cancelable
//     list that the leader drains with Cancelable and marks canceled.
//   - At-least-once delivery: each Dequeue hands out a fresh token and arms
//     a nack timer; an eval not acked in time is nacked automatically and
//     redelivered after a delay, and after DeliveryLimit deliveries moves to
//     FailedQueue.
//
// Every method is safe for concurrent use. No method blocks except Dequeue,
// so the FSM may call Enqueue from its apply goroutine. The broker holds no
// lock while it calls out, and calls nothing but its Clock.
//
// Evaluations passed in are shared, not copied: the broker never modifies
// them, and callers (the FSM, the leader) must not modify an eval after
// handing it over; Copy first.
type Broker struct {
	nackTimeout         time.Duration
	deliveryLimit       int
	initialNackDelay    time.Duration
	subsequentNackDelay time.Duration
	clock               clock.Clock
	logger              hclog.Logger

	mu      sync.Mutex
	enabled bool
	// enabledCh is closed when the broker becomes enabled; while it is
	// disabled a fresh, open one waits for that (EnabledNotify).
	enabledCh chan struct{}

	// evals holds every eval the broker knows (ready, pending, waiting,
	// delayed or outstanding) and how many times it was delivered; it
	// makes Enqueue idempotent.
	evals map[string]int
	// enqueuedAt records when an eval was first enqueued, for the
	// response_time metric; restored evals have no entry.
	enqueuedAt map[string]time.Time

	// jobEvals is the one eval per job that is ready or outstanding.
	jobEvals map[structs.NamespacedID]string
	// pending holds the job's other evals until that one is acked.
	pending map[structs.NamespacedID]*priorityheap.Heap[*structs.Evaluation]
	// ready is one queue per scheduler type, FailedQueue included.
	ready map[string]*priorityheap.Heap[readyEval]
	// readySeq breaks ties in ready queues in arrival order.
	readySeq uint64

	// unack holds the outstanding deliveries by eval ID.
	unack map[string]*unackEval
	// requeue holds evals to enqueue once the outstanding delivery with
	// this token is acked (dropped if it is nacked): a worker reblocked
	// the eval it is still holding, and it was released meanwhile.
	requeue map[string]*structs.Evaluation

	// timeWait holds evals waiting out a relative delay: their own Wait
	// or a redelivery delay after a Nack.
	timeWait map[string]*waitingEval
	// delayed holds evals whose WaitUntil lies in the future; one timer,
	// armed for the earliest, releases them.
	delayed      *priorityheap.Heap[*delayedEval]
	delayedByID  map[string]*structs.Evaluation
	delayTimer   clock.Timer
	delayTimerAt time.Time
	delayGen     uint64
	delaySeq     uint64

	// cancelable holds pending evals superseded by a newer one of their
	// job; the leader writes them back as canceled.
	cancelable   []*structs.Evaluation
	cancelableCh chan struct{}

	// waiters are blocked Dequeue calls, per scheduler type, oldest first.
	waiters  map[string][]*dequeueWaiter
	nWaiters int

	stats Stats
}

// readyEval is an eval in a ready queue. It is stored by value with its
// sort keys copied in, so ordering a deep queue never chases a pointer.
type readyEval struct {
	priority    int
	createIndex uint64
	seq         uint64
	eval        *structs.Evaluation
	readyAt     time.Time
}

// unackEval is one outstanding delivery.
type unackEval struct {
	eval       *structs.Evaluation
	token      string
	queue      string
	dequeuedAt time.Time
	timer      clock.Timer
	// paused is set while the worker's plan waits in the plan queue; the
	// nack timer is stopped then.
	paused bool
}

// New returns a disabled broker; the leader enables it.
func New(cfg Config) (*Broker, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	b := &Broker{
		nackTimeout:         cfg.NackTimeout,
		deliveryLimit:       cfg.DeliveryLimit,
		initialNackDelay:    cfg.InitialNackDelay,
		subsequentNackDelay: cfg.SubsequentNackDelay,
		clock:               cfg.Clock,
		logger:              cfg.Logger.Named("eval_broker"),
		cancelableCh:        make(chan struct{}, 1),
		enabledCh:           make(chan struct{}),
	}
	b.resetLocked()
	return b, nil
}

// resetLocked empties every structure. Timers must be stopped first.
func (b *Broker) resetLocked() {
	b.evals = make(map[string]int)
	b.enqueuedAt = make(map[string]time.Time)
	b.jobEvals = make(map[structs.NamespacedID]string)
	b.pending = make(map[structs.NamespacedID]*priorityheap.Heap[*structs.Evaluation])
	b.ready = make(map[string]*priorityheap.Heap[readyEval])
	b.unack = make(map[string]*unackEval)
	b.requeue = make(map[string]*structs.Evaluation)
	b.timeWait = make(map[string]*waitingEval)
	b.delayed = priorityheap.New(delayedBefore)
	b.delayedByID = make(map[string]*structs.Evaluation)
	b.delayTimer = nil
	b.delayTimerAt = time.Time{}
	b.delayGen++
	b.cancelable = nil
	b.waiters = make(map[string][]*dequeueWaiter)
	b.nWaiters = 0
	b.stats = Stats{ByScheduler: make(map[string]*SchedulerStats)}
}

// Enabled reports whether the broker accepts and hands out work.
func (b *Broker) Enabled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enabled
}

// SetEnabled turns the broker on (leader, broker not paused) or off.
// Turning it off flushes everything: timers stop, every blocked Dequeue
// returns structs.ErrBrokerDisabled, and all evals, deliveries and the
// cancelable list are forgotten; the state store still has them and the
// next leader restores them.
func (b *Broker) SetEnabled(enabled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	was := b.enabled
	b.enabled = enabled
	switch {
	case enabled && !was:
		close(b.enabledCh)
	case !enabled && was:
		b.enabledCh = make(chan struct{})
	}
	if !enabled {
		b.flushLocked()
	}
}

// EnabledNotify returns a channel that is closed once the broker is
// enabled: already closed when it is. Eval.Dequeue waits on it while an
// operator pauses the broker, so a resume hands out work at once.
func (b *Broker) EnabledNotify() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enabledCh
}

func (b *Broker) flushLocked() {
	for _, u := range b.unack {
		if !u.paused {
			u.timer.Stop()
		}
	}
	for _, w := range b.timeWait {
		w.timer.Stop()
	}
	if b.delayTimer != nil {
		b.delayTimer.Stop()
	}
	// Wake every blocked Dequeue; each rescans and finds the broker off.
	for _, ws := range b.waiters {
		for _, w := range ws {
			w.registered = false
			w.wake()
		}
	}
	b.resetLocked()
}

// Enqueue adds an eval, normally a pending one just written by the FSM.
// It is a no-op while the broker is disabled, for a nil eval, and for an
// eval the broker already holds. An eval with Wait > 0 becomes ready after
// Wait; one with a future WaitUntil at that time; otherwise at once
// (behind the job's in-flight eval, if any).
func (b *Broker) Enqueue(eval *structs.Evaluation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.processEnqueueLocked(eval, "", b.clock.Now(), true)
}

// Restore is Enqueue for evals read back from the state store when the
// broker is rebuilt on a new leader. It does not start the response-time
// measurement, since the eval's real enqueue happened elsewhere.
func (b *Broker) Restore(eval *structs.Evaluation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.processEnqueueLocked(eval, "", b.clock.Now(), false)
}

// EnqueueAll enqueues a batch atomically, so a dequeuer sees all of it or
// none. The map's value is a delivery token or "". The blocked-evals
// tracker uses it to release evals: an eval that is still outstanding
// under that very token (a worker reblocked the eval it is processing) is
// held back and enqueued only when that delivery is acked, and dropped if
// it is nacked (the nack redelivers it anyway). Evals the broker already
// holds under any other condition are ignored, as in Enqueue.
func (b *Broker) EnqueueAll(evals map[*structs.Evaluation]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	for eval, token := range evals {
		b.processEnqueueLocked(eval, token, now, true)
	}
}

func (b *Broker) processEnqueueLocked(eval *structs.Evaluation, token string, now time.Time, measure bool) {
	if !b.enabled || eval == nil {
		return
	}
	if _, known := b.evals[eval.ID]; known {
		if token == "" {
			return
		}
		if u, ok := b.unack[eval.ID]; ok && u.token == token {
			b.requeue[token] = eval
		}
		return
	}
	b.evals[eval.ID] = 0
	if measure {
		b.enqueuedAt[eval.ID] = now
	}

	switch {
	case eval.Wait > 0:
		b.waitLocked(eval, eval.Wait)
	case !eval.WaitUntil.IsZero() && eval.WaitUntil.After(now):
		b.delayLocked(eval, now)
	default:
		b.enqueueLocked(eval, eval.Type, now)
	}
}

// enqueueLocked makes eval ready on queue, or pending if another eval of
// its job is in flight.
func (b *Broker) enqueueLocked(eval *structs.Evaluation, queue string, now time.Time) {
	job := eval.NamespacedJobID()
	if inFlight, ok := b.jobEvals[job]; !ok {
		b.jobEvals[job] = eval.ID
	} else if inFlight != eval.ID {
		p := b.pending[job]
		if p == nil {
			p = priorityheap.New(pendingBefore)
			b.pending[job] = p
		}
		p.Push(eval)
		b.stats.TotalPending++
		return
	}

	q := b.ready[queue]
	if q == nil {
		q = priorityheap.New(readyBefore)
		b.ready[queue] = q
	}
	b.readySeq++
	q.Push(readyEval{
		priority:    eval.Priority,
		createIndex: eval.CreateIndex,
		seq:         b.readySeq,
		eval:        eval,
		readyAt:     now,
	})
	b.stats.TotalReady++
	b.schedStatsLocked(queue).Ready++
	b.wakeOneLocked(queue)
}

// readyBefore orders a ready queue: higher priority first, then lower
// CreateIndex, then arrival. (Nomad skips the priority comparison for two
// evals of the same job ID; per-job serialisation means that only happens
// for namespaced twins, where ordering by priority is the right answer.)
func readyBefore(a, b readyEval) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if a.createIndex != b.createIndex {
		return a.createIndex < b.createIndex
	}
	return a.seq < b.seq
}

// pendingBefore orders a job's pending evals best first: higher priority,
// then the most recent (highest ModifyIndex), which has seen the most state.
func pendingBefore(a, b *structs.Evaluation) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	return a.ModifyIndex > b.ModifyIndex
}

func (b *Broker) schedStatsLocked(queue string) *SchedulerStats {
	s := b.stats.ByScheduler[queue]
	if s == nil {
		s = &SchedulerStats{}
		b.stats.ByScheduler[queue] = s
	}
	return s
}
