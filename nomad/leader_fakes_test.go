package nomad

import (
	"context"
	"sync"
	"time"

	"github.com/opennomad/nomad/nomad/broker"
	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/structs"
)

// Small stand-ins for the leader's broker, blocked-evals tracker and plan
// queue, recording what the server asks of them. They implement just the
// semantics the server relies on: enabled state, per-scheduler FIFO
// queues, delivery tokens and a cancelable list.

type fakeEvalBroker struct {
	mu         sync.Mutex
	enabled    bool
	enabledLog []bool
	enqueued   []*structs.Evaluation
	restored   []*structs.Evaluation
	ready      map[string][]*structs.Evaluation
	unack      map[string]string // eval ID -> token
	acked      []string
	nacked     []string
	resets     []string
	paused     map[string]bool
	cancelable []*structs.Evaluation
	cancelCh   chan struct{}
	wake       chan struct{}
}

func newFakeEvalBroker() *fakeEvalBroker {
	return &fakeEvalBroker{
		ready:    make(map[string][]*structs.Evaluation),
		unack:    make(map[string]string),
		paused:   make(map[string]bool),
		cancelCh: make(chan struct{}, 1),
		wake:     make(chan struct{}),
	}
}

func (b *fakeEvalBroker) Enabled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enabled
}

func (b *fakeEvalBroker) SetEnabled(enabled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enabled = enabled
	b.enabledLog = append(b.enabledLog, enabled)
	if !enabled {
		b.ready = make(map[string][]*structs.Evaluation)
		b.unack = make(map[string]string)
	}
	b.broadcastLocked()
}

// EnabledNotify is closed at once while enabled, else at the next change.
func (b *fakeEvalBroker) EnabledNotify() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.enabled {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	return b.wake
}

func (b *fakeEvalBroker) broadcastLocked() {
	close(b.wake)
	b.wake = make(chan struct{})
}

func (b *fakeEvalBroker) add(e *structs.Evaluation, restore bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled {
		return
	}
	if restore {
		b.restored = append(b.restored, e)
	} else {
		b.enqueued = append(b.enqueued, e)
	}
	b.ready[e.Type] = append(b.ready[e.Type], e)
	b.broadcastLocked()
}

// TotalReady counts the evals not yet dequeued, failed ones included.
func (b *fakeEvalBroker) TotalReady() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, q := range b.ready {
		n += len(q)
	}
	return n
}

func (b *fakeEvalBroker) Enqueue(e *structs.Evaluation) { b.add(e, false) }
func (b *fakeEvalBroker) Restore(e *structs.Evaluation) { b.add(e, true) }

// fail puts an eval in the failed queue as if its deliveries ran out.
func (b *fakeEvalBroker) fail(e *structs.Evaluation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ready[broker.FailedQueue] = append(b.ready[broker.FailedQueue], e)
	b.broadcastLocked()
}

func (b *fakeEvalBroker) Dequeue(ctx context.Context, schedulers []string, timeout time.Duration) (*structs.Evaluation, string, error) {
	deadline := time.After(timeout)
	for {
		b.mu.Lock()
		if !b.enabled {
			b.mu.Unlock()
			return nil, "", structs.ErrBrokerDisabled
		}
		for _, s := range schedulers {
			if q := b.ready[s]; len(q) > 0 {
				e := q[0]
				b.ready[s] = q[1:]
				token := structs.GenerateUUID()
				b.unack[e.ID] = token
				b.mu.Unlock()
				return e, token, nil
			}
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-deadline:
			return nil, "", nil
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
	}
}

func (b *fakeEvalBroker) checkLocked(evalID, token string) error {
	t, ok := b.unack[evalID]
	switch {
	case !ok:
		return structs.ErrNotOutstanding
	case t != token:
		return structs.ErrTokenMismatch
	}
	return nil
}

func (b *fakeEvalBroker) Ack(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkLocked(evalID, token); err != nil {
		return err
	}
	delete(b.unack, evalID)
	b.acked = append(b.acked, evalID)
	return nil
}

func (b *fakeEvalBroker) Nack(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkLocked(evalID, token); err != nil {
		return err
	}
	delete(b.unack, evalID)
	b.nacked = append(b.nacked, evalID)
	return nil
}

func (b *fakeEvalBroker) OutstandingReset(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkLocked(evalID, token); err != nil {
		return err
	}
	b.resets = append(b.resets, evalID)
	return nil
}

func (b *fakeEvalBroker) PauseNackTimeout(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkLocked(evalID, token); err != nil {
		return err
	}
	b.paused[evalID] = true
	return nil
}

func (b *fakeEvalBroker) ResumeNackTimeout(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkLocked(evalID, token); err != nil {
		return err
	}
	b.paused[evalID] = false
	return nil
}

// supersede adds evals to the cancelable list and signals it.
func (b *fakeEvalBroker) supersede(evals ...*structs.Evaluation) {
	b.mu.Lock()
	b.cancelable = append(b.cancelable, evals...)
	b.mu.Unlock()
	select {
	case b.cancelCh <- struct{}{}:
	default:
	}
}

func (b *fakeEvalBroker) Cancelable(batchSize int) []*structs.Evaluation {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.cancelable)
	if batchSize > 0 && batchSize < n {
		n = batchSize
	}
	out := b.cancelable[:n:n]
	b.cancelable = b.cancelable[n:]
	return out
}

func (b *fakeEvalBroker) CancelableNotify() <-chan struct{} { return b.cancelCh }

func (b *fakeEvalBroker) snapshot() (enqueued, restored []*structs.Evaluation, acked []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*structs.Evaluation(nil), b.enqueued...), append([]*structs.Evaluation(nil), b.restored...),
		append([]string(nil), b.acked...)
}

type fakeBlockedEvals struct {
	mu        sync.Mutex
	enabled   bool
	blocked   []string // eval IDs blocked while enabled
	reblocked []string
	dups      chan []*structs.Evaluation
}

func newFakeBlockedEvals() *fakeBlockedEvals {
	return &fakeBlockedEvals{dups: make(chan []*structs.Evaluation, 4)}
}

func (b *fakeBlockedEvals) SetEnabled(enabled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enabled = enabled
}

func (b *fakeBlockedEvals) Enabled() bool { return b.isEnabled() }

func (b *fakeBlockedEvals) isEnabled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enabled
}

// Block records the eval only while enabled, as the real tracker ignores
// calls then (the FSM calls it on every server, leader or not).
func (b *fakeBlockedEvals) Block(e *structs.Evaluation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.enabled {
		b.blocked = append(b.blocked, e.ID)
	}
}

// The releases are not recorded: no test of the server reads them (the
// FSM's own tests do).
func (b *fakeBlockedEvals) Untrack(jobID, namespace string)                        {}
func (b *fakeBlockedEvals) Unblock(class string, index uint64)                     {}
func (b *fakeBlockedEvals) UnblockClassAndQuota(class, quota string, index uint64) {}
func (b *fakeBlockedEvals) UnblockNode(nodeID string, index uint64)                {}

func (b *fakeBlockedEvals) TotalBlocked() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.blocked)
}

func (b *fakeBlockedEvals) Reblock(e *structs.Evaluation, token string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reblocked = append(b.reblocked, e.ID)
}

func (b *fakeBlockedEvals) GetDuplicates(ctx context.Context, timeout time.Duration) []*structs.Evaluation {
	select {
	case d := <-b.dups:
		return d
	case <-ctx.Done():
		return nil
	}
}

type fakePlanQueue struct {
	mu      sync.Mutex
	enabled bool
	plans   []*structs.Plan
	result  *structs.PlanResult
}

func (q *fakePlanQueue) SetEnabled(enabled bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.enabled = enabled
}

func (q *fakePlanQueue) Enqueue(plan *structs.Plan) (planapply.Future, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.enabled {
		return nil, structs.ErrPlanQueueDisabled
	}
	q.plans = append(q.plans, plan)
	return answeredPlan{q.result}, nil
}

// answeredPlan is a future answered at once.
type answeredPlan struct{ result *structs.PlanResult }

func (a answeredPlan) Wait() (*structs.PlanResult, error) { return a.result, nil }

func (a answeredPlan) Done() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

// fakePipeline returns a pipeline of fakes, as newServer takes it.
func fakePipeline() (func(*Config) (pipeline, error), *fakeEvalBroker, *fakeBlockedEvals, *fakePlanQueue) {
	b, bl, q := newFakeEvalBroker(), newFakeBlockedEvals(), &fakePlanQueue{}
	return func(*Config) (pipeline, error) { return pipeline{broker: b, blocked: bl, plans: q}, nil }, b, bl, q
}
