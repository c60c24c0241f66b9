package broker

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

// errNoSchedulers is returned by Dequeue when called without scheduler types.
var errNoSchedulers = errors.New("eval broker: dequeue needs at least one scheduler type")

// dequeueWaiter is one blocked Dequeue call. It is registered in the
// waiter list of each scheduler type it asked for; an enqueue into one of
// those queues unregisters it everywhere and signals it, so exactly one
// waiter wakes per ready eval instead of every idle worker.
type dequeueWaiter struct {
	schedulers []string
	ch         chan struct{} // capacity 1; a value means "rescan"
	registered bool
}

func (w *dequeueWaiter) wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// Dequeue hands out the highest-priority ready eval among the given
// scheduler types, with a fresh delivery token. Ties in priority across
// types are broken at random so no type starves another; within a type
// the order is CreateIndex. The delivery's nack timer starts now.
//
// When nothing is ready Dequeue blocks until an eval becomes ready, the
// timeout passes (timeout <= 0 waits without limit) or ctx ends. It
// returns (nil, "", nil) on timeout, ctx.Err() when ctx ends, and
// structs.ErrBrokerDisabled when the broker is or becomes disabled. Workers
// (through the Eval.Dequeue endpoint) and the leader's failed-eval reaper
// call it, from any number of goroutines.
func (b *Broker) Dequeue(ctx context.Context, schedulers []string, timeout time.Duration) (*structs.Evaluation, string, error) {
	if len(schedulers) == 0 {
		return nil, "", errNoSchedulers
	}
	var (
		w         *dequeueWaiter
		timedOut  chan struct{}
		timeoutCh <-chan struct{} // nil, so never ready, without a timeout
	)
	for {
		b.mu.Lock()
		if w != nil {
			b.removeWaiterLocked(w)
		}
		if !b.enabled {
			b.mu.Unlock()
			return nil, "", structs.ErrBrokerDisabled
		}
		now := b.clock.Now()
		if eval, token, waited, ok := b.scanLocked(schedulers, now); ok {
			b.rewakeLocked(schedulers)
			b.mu.Unlock()
			clock.EmitDuration(metricBrokerWaitTime, waited, evalMetricLabels(eval))
			return eval, token, nil
		}
		if w == nil {
			w = &dequeueWaiter{schedulers: schedulers, ch: make(chan struct{}, 1)}
		}
		b.addWaiterLocked(w)
		b.mu.Unlock()

		if timeout > 0 && timedOut == nil {
			timedOut = make(chan struct{})
			timeoutCh = timedOut
			t := b.clock.AfterFunc(timeout, func() { close(timedOut) })
			defer t.Stop()
		}

		select {
		case <-w.ch:
		case <-timeoutCh:
			b.abandonWait(w)
			return nil, "", nil
		case <-ctx.Done():
			b.abandonWait(w)
			return nil, "", ctx.Err()
		}
	}
}

// abandonWait unregisters a waiter that gives up. If it was woken in the
// meantime, the wake-up it will not act on is passed to another waiter.
func (b *Broker) abandonWait(w *dequeueWaiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeWaiterLocked(w)
	b.rewakeLocked(w.schedulers)
}

// scanLocked dequeues the best ready eval among schedulers, if any, and
// returns how long it waited in its ready queue.
func (b *Broker) scanLocked(schedulers []string, now time.Time) (*structs.Evaluation, string, time.Duration, bool) {
	var (
		best     string
		bestPrio int
		ties     int
	)
	for _, sched := range schedulers {
		q := b.ready[sched]
		if q == nil {
			continue
		}
		head, ok := q.Peek()
		if !ok {
			continue
		}
		switch p := head.priority; {
		case ties == 0 || p > bestPrio:
			best, bestPrio, ties = sched, p, 1
		case p == bestPrio:
			// Reservoir sampling: each tied queue is kept with
			// probability 1/ties, so all are equally likely.
			ties++
			if rand.IntN(ties) == 0 {
				best = sched
			}
		}
	}
	if ties == 0 {
		return nil, "", 0, false
	}
	eval, token, waited := b.dequeueLocked(best, now)
	return eval, token, waited, true
}

// dequeueLocked pops queue's head and records the delivery.
func (b *Broker) dequeueLocked(queue string, now time.Time) (*structs.Evaluation, string, time.Duration) {
	item, _ := b.ready[queue].Pop()
	eval := item.eval
	token := structs.GenerateUUID()
	u := &unackEval{eval: eval, token: token, queue: queue, dequeuedAt: now}
	u.timer = b.clock.AfterFunc(b.nackTimeout, func() { b.nackExpired(eval.ID, token) })
	b.unack[eval.ID] = u
	b.evals[eval.ID]++

	b.stats.TotalReady--
	b.stats.TotalUnacked++
	s := b.schedStatsLocked(queue)
	s.Ready--
	s.Unacked++
	return eval, token, now.Sub(item.readyAt)
}

func (b *Broker) addWaiterLocked(w *dequeueWaiter) {
	if w.registered {
		return
	}
	for _, sched := range w.schedulers {
		b.waiters[sched] = append(b.waiters[sched], w)
	}
	w.registered = true
	b.nWaiters++
}

func (b *Broker) removeWaiterLocked(w *dequeueWaiter) {
	if !w.registered {
		return
	}
	for _, sched := range w.schedulers {
		ws := b.waiters[sched]
		if i := slices.Index(ws, w); i >= 0 {
			ws = slices.Delete(ws, i, i+1)
		}
		if len(ws) == 0 {
			delete(b.waiters, sched)
		} else {
			b.waiters[sched] = ws
		}
	}
	w.registered = false
	b.nWaiters--
}

// wakeOneLocked wakes the longest-waiting Dequeue listening on sched.
func (b *Broker) wakeOneLocked(sched string) {
	ws := b.waiters[sched]
	if len(ws) == 0 {
		return
	}
	w := ws[0]
	b.removeWaiterLocked(w)
	w.wake()
}

// rewakeLocked keeps the wake-one scheme from losing work: a woken waiter
// may take an eval from another of its queues than the one that woke it,
// or give up, leaving ready evals behind with other waiters asleep. After
// each such step, every non-empty queue in schedulers wakes one waiter.
func (b *Broker) rewakeLocked(schedulers []string) {
	if b.nWaiters == 0 {
		return
	}
	for _, sched := range schedulers {
		if q := b.ready[sched]; q != nil && q.Len() > 0 {
			b.wakeOneLocked(sched)
		}
	}
}
