package planapply

import (
	"context"
	"errors"
	"sync"
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/priorityheap"
	"github.com/opennomad/nomad/structs"
)

// ErrQueueFlushed is the answer to every plan still queued when the
// queue is disabled (leadership lost); the worker's Plan.Submit fails and
// the eval is retried through the broker.
var ErrQueueFlushed = errors.New("plan queue flushed")

// Future is a submitter's handle on a queued plan.
type Future interface {
	// Wait blocks until the applier responds and returns its answer.
	Wait() (*structs.PlanResult, error)
	// Done is closed once the answer is available, for callers that also
	// select on their own cancellation.
	Done() <-chan struct{}
}

// QueuedPlan is a plan in the queue and the promise of its result. The
// Plan.Submit endpoint holds it as a Future; the plan applier gets it
// from Dequeue and must call Respond exactly once (later calls are
// ignored).
type QueuedPlan struct {
	Plan *structs.Plan
	// EnqueueTime is when the plan entered the queue, on the queue's clock.
	EnqueueTime time.Time

	seq    uint64
	done   chan struct{}
	once   sync.Once
	result *structs.PlanResult
	err    error
}

// Respond delivers the applier's answer to the submitter. Only the first
// call counts.
func (p *QueuedPlan) Respond(result *structs.PlanResult, err error) {
	p.once.Do(func() {
		p.result, p.err = result, err
		close(p.done)
	})
}

// Wait blocks until Respond and returns its arguments.
func (p *QueuedPlan) Wait() (*structs.PlanResult, error) {
	<-p.done
	return p.result, p.err
}

// Done is closed by Respond.
func (p *QueuedPlan) Done() <-chan struct{} { return p.done }

// queuedPlanBefore orders the queue: higher priority first, then first
// come first served.
func queuedPlanBefore(a, b *QueuedPlan) bool {
	if a.Plan.Priority != b.Plan.Priority {
		return a.Plan.Priority > b.Plan.Priority
	}
	return a.seq < b.seq
}

// Queue orders the plans workers submit for the single plan applier on
// the leader: higher eval priority first, then arrival. Any number of
// endpoint goroutines enqueue; the applier goroutine dequeues. It is
// enabled on the leader only. All methods are safe for concurrent use.
type Queue struct {
	clock clock.Clock

	mu      sync.Mutex
	enabled bool
	ready   *priorityheap.Heap[*QueuedPlan]
	seq     uint64
	// wake is closed, and replaced, when a plan arrives while someone
	// waits in Dequeue, or when the queue is disabled.
	wake    chan struct{}
	waiting int
}

// NewQueue returns a disabled queue whose Dequeue timeouts run on c
// (clock.Real{} when nil).
func NewQueue(c clock.Clock) *Queue {
	if c == nil {
		c = clock.Real{}
	}
	return &Queue{
		clock: c,
		ready: priorityheap.New(queuedPlanBefore),
		wake:  make(chan struct{}),
	}
}

// Enabled reports whether the queue accepts plans.
func (q *Queue) Enabled() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.enabled
}

// SetEnabled turns the queue on (leader) or off. Turning it off answers
// every queued plan with ErrQueueFlushed and makes a blocked Dequeue
// return structs.ErrPlanQueueDisabled.
func (q *Queue) SetEnabled(enabled bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.enabled = enabled
	if enabled {
		return
	}
	for _, p := range q.ready.Drain() {
		p.Respond(nil, ErrQueueFlushed)
	}
	q.broadcastLocked()
}

// Enqueue queues a plan and returns the future of its result. Errors:
// structs.ErrPlanQueueDisabled when not the leader (workers retry), and a
// nil plan.
func (q *Queue) Enqueue(plan *structs.Plan) (Future, error) {
	if plan == nil {
		return nil, errors.New("plan queue: plan must not be nil")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.enabled {
		return nil, structs.ErrPlanQueueDisabled
	}
	q.seq++
	p := &QueuedPlan{
		Plan:        plan,
		EnqueueTime: q.clock.Now(),
		seq:         q.seq,
		done:        make(chan struct{}),
	}
	q.ready.Push(p)
	if q.waiting > 0 {
		q.broadcastLocked()
	}
	return p, nil
}

func (q *Queue) broadcastLocked() {
	close(q.wake)
	q.wake = make(chan struct{})
}

// Dequeue returns the next plan, blocking until one arrives, timeout
// passes on the queue's clock (timeout <= 0 waits without limit) or ctx
// ends. It returns (nil, nil) on timeout, ctx.Err() when ctx ends, and
// structs.ErrPlanQueueDisabled when the queue is or becomes disabled. The
// plan applier calls it from its one goroutine.
func (q *Queue) Dequeue(ctx context.Context, timeout time.Duration) (*QueuedPlan, error) {
	var timeoutCh <-chan struct{}
	for {
		q.mu.Lock()
		if !q.enabled {
			q.mu.Unlock()
			return nil, structs.ErrPlanQueueDisabled
		}
		if p, ok := q.ready.Pop(); ok {
			q.mu.Unlock()
			return p, nil
		}
		wake := q.wake
		q.waiting++
		q.mu.Unlock()

		if timeout > 0 && timeoutCh == nil {
			ch := make(chan struct{})
			timeoutCh = ch
			t := q.clock.AfterFunc(timeout, func() { close(ch) })
			defer t.Stop()
		}
		var err error
		done := false
		select {
		case <-wake:
		case <-timeoutCh:
			done = true
		case <-ctx.Done():
			done, err = true, ctx.Err()
		}
		q.mu.Lock()
		q.waiting--
		q.mu.Unlock()
		if done {
			return nil, err
		}
	}
}

// QueueStats is a snapshot of the queue.
type QueueStats struct {
	// Depth counts queued plans.
	Depth int
}

// Stats returns the queue's counters.
func (q *Queue) Stats() *QueueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return &QueueStats{Depth: q.ready.Len()}
}

// EmitStats publishes nomad.plan.queue_depth every period until ctx ends
// (at once if period <= 0). The leader runs it in its own goroutine.
func (q *Queue) EmitStats(ctx context.Context, period time.Duration) {
	clock.Every(ctx, q.clock, period, q.emitStats)
}

func (q *Queue) emitStats() {
	metrics.SetGauge([]string{"nomad", "plan", "queue_depth"}, float32(q.Stats().Depth))
}
