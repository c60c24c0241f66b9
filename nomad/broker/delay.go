package broker

import (
	"time"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

// Evals that must not run yet wait in the broker in one of two ways:
//
//   - a relative delay (the eval's legacy Wait, or the redelivery delay
//     after a Nack): one clock timer per eval;
//   - an absolute WaitUntil (delayed rescheduling, failed follow-ups): a
//     heap ordered by WaitUntil with a single clock timer armed for the
//     earliest, so thousands of delayed evals cost one timer.
//
// Both count in TotalWaiting and become ready through enqueueLocked, so a
// released eval still queues behind its job's in-flight eval.

// waitingEval is an eval waiting out a relative delay.
type waitingEval struct {
	eval  *structs.Evaluation
	timer clock.Timer
}

// waitLocked holds eval back for d.
func (b *Broker) waitLocked(eval *structs.Evaluation, d time.Duration) {
	w := &waitingEval{eval: eval}
	w.timer = b.clock.AfterFunc(d, func() { b.waitExpired(w) })
	b.timeWait[eval.ID] = w
	b.stats.TotalWaiting++
}

// waitExpired is a relative delay's callback; it is a no-op when the
// broker was flushed since (the entry is gone or replaced).
func (b *Broker) waitExpired(w *waitingEval) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timeWait[w.eval.ID] != w {
		return
	}
	delete(b.timeWait, w.eval.ID)
	b.stats.TotalWaiting--
	b.enqueueLocked(w.eval, w.eval.Type, b.clock.Now())
}

// delayedEval is an eval waiting for its WaitUntil.
type delayedEval struct {
	eval *structs.Evaluation
	seq  uint64
}

// delayedBefore orders the delay heap by WaitUntil, then arrival.
func delayedBefore(a, b *delayedEval) bool {
	if !a.eval.WaitUntil.Equal(b.eval.WaitUntil) {
		return a.eval.WaitUntil.Before(b.eval.WaitUntil)
	}
	return a.seq < b.seq
}

// delayLocked holds eval back until its WaitUntil.
func (b *Broker) delayLocked(eval *structs.Evaluation, now time.Time) {
	b.delaySeq++
	b.delayed.Push(&delayedEval{eval: eval, seq: b.delaySeq})
	b.delayedByID[eval.ID] = eval
	b.stats.TotalWaiting++
	b.armDelayTimerLocked(now)
}

// armDelayTimerLocked points the delay timer at the earliest WaitUntil.
// Each re-arm bumps delayGen so a superseded timer's callback, should it
// already be running, does nothing.
func (b *Broker) armDelayTimerLocked(now time.Time) {
	head, ok := b.delayed.Peek()
	if b.delayTimer != nil {
		if ok && b.delayTimerAt.Equal(head.eval.WaitUntil) {
			return
		}
		b.delayTimer.Stop()
		b.delayTimer = nil
	}
	if !ok {
		return
	}
	b.delayGen++
	gen := b.delayGen
	b.delayTimerAt = head.eval.WaitUntil
	b.delayTimer = b.clock.AfterFunc(head.eval.WaitUntil.Sub(now), func() { b.releaseDelayed(gen) })
}

// releaseDelayed is the delay timer's callback: every eval whose WaitUntil
// has passed becomes ready, then the timer is armed for the next one.
func (b *Broker) releaseDelayed(gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if gen != b.delayGen {
		return
	}
	b.delayTimer = nil
	now := b.clock.Now()
	for {
		head, ok := b.delayed.Peek()
		if !ok || head.eval.WaitUntil.After(now) {
			break
		}
		b.delayed.Pop()
		delete(b.delayedByID, head.eval.ID)
		b.stats.TotalWaiting--
		b.enqueueLocked(head.eval, head.eval.Type, now)
	}
	b.armDelayTimerLocked(now)
}
