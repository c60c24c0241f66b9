package broker

import (
	"errors"
	"time"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/priorityheap"
	"github.com/opennomad/nomad/structs"
)

// Errors of Ack and Nack. Their text is Nomad's and crosses the RPC
// boundary unchanged, so it must never change.
var (
	// ErrEvalNotFound is returned when the eval is not outstanding: never
	// dequeued, already acked or nacked, or the broker was flushed.
	ErrEvalNotFound = errors.New("Evaluation ID not found")
	// ErrTokenMismatch is returned when the eval is outstanding under
	// another delivery's token.
	ErrTokenMismatch = errors.New("Token does not match for Evaluation ID")
	// ErrAckAfterNackTimeout is returned when the nack timer fired before
	// the Ack arrived; the eval is being redelivered.
	ErrAckAfterNackTimeout = errors.New("Evaluation ID Ack'd after Nack timer expiration")
)

// A delivery is one Dequeue of an eval, identified by its token. This file
// holds how a delivery ends (Ack, Nack, or its nack timer firing), how a
// worker keeps it alive meanwhile, and what an Ack releases: the job's
// next eval, and the superseded ones for the leader to cancel.

// Outstanding returns the token of the eval's current delivery, if any.
func (b *Broker) Outstanding(evalID string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, ok := b.unack[evalID]
	if !ok {
		return "", false
	}
	return u.token, true
}

// OutstandingReset restarts the delivery's nack timer; endpoints call it on
// every write a worker makes for the eval (Eval.Update, Create, Reblock).
// A paused timer stays paused. Errors: structs.ErrNotOutstanding,
// structs.ErrTokenMismatch, structs.ErrNackTimeoutReached (the timer
// already fired; the eval is being redelivered).
func (b *Broker) OutstandingReset(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.outstandingLocked(evalID, token)
	if err != nil {
		return err
	}
	if u.paused {
		return nil
	}
	return b.restartNackTimerLocked(u)
}

// PauseNackTimeout stops the delivery's nack timer while the worker's plan
// waits in the plan queue, whose wait is unbounded; Plan.Submit calls it
// before enqueueing the plan. It is also the split-brain guard: a plan
// whose eval is not outstanding under its token is refused. Errors as
// for OutstandingReset. Pausing a paused timer is a no-op.
func (b *Broker) PauseNackTimeout(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.outstandingLocked(evalID, token)
	if err != nil {
		return err
	}
	if u.paused {
		return nil
	}
	if !u.timer.Stop() {
		return structs.ErrNackTimeoutReached
	}
	u.paused = true
	return nil
}

// ResumeNackTimeout re-arms the full nack timeout after PauseNackTimeout;
// Plan.Submit calls it once the plan's result is back. On a running timer
// it acts as OutstandingReset.
func (b *Broker) ResumeNackTimeout(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.outstandingLocked(evalID, token)
	if err != nil {
		return err
	}
	if !u.paused {
		return b.restartNackTimerLocked(u)
	}
	u.paused = false
	u.timer.Reset(b.nackTimeout)
	return nil
}

func (b *Broker) outstandingLocked(evalID, token string) (*unackEval, error) {
	u, ok := b.unack[evalID]
	if !ok {
		return nil, structs.ErrNotOutstanding
	}
	if u.token != token {
		return nil, structs.ErrTokenMismatch
	}
	return u, nil
}

// restartNackTimerLocked re-arms a running nack timer. A timer that already
// fired is left alone: its callback is about to nack this delivery, and
// re-arming would make it fire twice.
func (b *Broker) restartNackTimerLocked(u *unackEval) error {
	if !u.timer.Stop() {
		return structs.ErrNackTimeoutReached
	}
	u.timer.Reset(b.nackTimeout)
	return nil
}

// Ack completes a delivery: the eval leaves the broker, the best pending
// eval of its job (if any) becomes ready and the job's other pending evals
// become cancelable, and an eval parked for this token by EnqueueAll is
// enqueued. Errors: ErrEvalNotFound, ErrTokenMismatch,
// ErrAckAfterNackTimeout.
func (b *Broker) Ack(evalID, token string) error {
	b.mu.Lock()
	now := b.clock.Now()

	// The parked eval goes with this token either way: enqueued on
	// success, dropped on failure (the redelivery covers it).
	requeued, hasRequeue := b.requeue[token]
	delete(b.requeue, token)

	u, ok := b.unack[evalID]
	if !ok {
		b.mu.Unlock()
		return ErrEvalNotFound
	}
	if u.token != token {
		b.mu.Unlock()
		return ErrTokenMismatch
	}
	if !u.paused && !u.timer.Stop() {
		b.mu.Unlock()
		return ErrAckAfterNackTimeout
	}

	b.removeUnackLocked(u)
	enqueuedAt, measured := b.enqueuedAt[evalID]
	delete(b.evals, evalID)
	delete(b.enqueuedAt, evalID)

	job := u.eval.NamespacedJobID()
	delete(b.jobEvals, job)
	if p := b.pending[job]; p != nil {
		delete(b.pending, job)
		b.promotePendingLocked(p, now)
	}
	if hasRequeue {
		b.processEnqueueLocked(requeued, "", now, true)
	}
	b.mu.Unlock()

	labels := evalMetricLabels(u.eval)
	clock.EmitDuration(metricBrokerProcessTime, now.Sub(u.dequeuedAt), labels)
	if measured {
		clock.EmitDuration(metricBrokerResponseTime, now.Sub(enqueuedAt), labels)
	}
	return nil
}

// promotePendingLocked makes the best of a job's pending evals ready and
// moves the rest to the cancelable list: the best one has seen at least as
// much state as any of them, so running the others would only repeat it.
func (b *Broker) promotePendingLocked(p *priorityheap.Heap[*structs.Evaluation], now time.Time) {
	best, ok := p.Pop()
	if !ok {
		return
	}
	rest := p.Drain()
	b.stats.TotalPending -= 1 + len(rest)
	for _, e := range rest {
		// Superseded evals leave the broker; they come back only if the
		// leader rewrites them as pending, which it does not.
		delete(b.evals, e.ID)
		delete(b.enqueuedAt, e.ID)
	}
	if len(rest) > 0 {
		b.cancelable = append(b.cancelable, rest...)
		select {
		case b.cancelableCh <- struct{}{}:
		default:
		}
	}
	b.enqueueLocked(best, best.Type, now)
}

// Nack fails a delivery: the eval stays in flight for its job and is
// delivered again after a delay (0 after no delivery, InitialNackDelay
// after the first, (n-1)*SubsequentNackDelay after the n-th), or moves to
// FailedQueue once it has been delivered DeliveryLimit times. Any eval
// parked for this token is dropped. Errors: ErrEvalNotFound,
// ErrTokenMismatch.
func (b *Broker) Nack(evalID, token string) error {
	b.mu.Lock()
	now := b.clock.Now()
	delete(b.requeue, token)
	u, ok := b.unack[evalID]
	if !ok {
		b.mu.Unlock()
		return ErrEvalNotFound
	}
	if u.token != token {
		b.mu.Unlock()
		return ErrTokenMismatch
	}
	if !u.paused {
		// A timer that already fired calls back into nackExpired, which
		// finds the delivery gone.
		u.timer.Stop()
	}
	b.nackLocked(u, now)
	b.mu.Unlock()

	clock.EmitDuration(metricBrokerProcessTime, now.Sub(u.dequeuedAt), evalMetricLabels(u.eval))
	return nil
}

func (b *Broker) nackLocked(u *unackEval, now time.Time) {
	b.removeUnackLocked(u)
	deliveries := b.evals[u.eval.ID]
	if deliveries >= b.deliveryLimit {
		b.enqueueLocked(u.eval, FailedQueue, now)
		return
	}
	if d := b.nackDelay(deliveries); d > 0 {
		b.waitLocked(u.eval, d)
		return
	}
	b.enqueueLocked(u.eval, u.eval.Type, now)
}

// nackDelay is the wait before redelivering an eval nacked after the given
// number of deliveries.
func (b *Broker) nackDelay(deliveries int) time.Duration {
	switch {
	case deliveries <= 0:
		return 0
	case deliveries == 1:
		return b.initialNackDelay
	default:
		return time.Duration(deliveries-1) * b.subsequentNackDelay
	}
}

// nackExpired is the nack timer's callback. The token identifies the
// delivery the timer was armed for; a later delivery of the same eval, or
// a flush, makes the callback a no-op.
func (b *Broker) nackExpired(evalID, token string) {
	b.mu.Lock()
	now := b.clock.Now()
	u, ok := b.unack[evalID]
	if !ok || u.token != token || u.paused {
		b.mu.Unlock()
		return
	}
	delete(b.requeue, token)
	b.nackLocked(u, now)
	b.mu.Unlock()

	b.logger.Debug("nack timeout reached, eval will be redelivered",
		"eval_id", evalID, "job_id", u.eval.JobID, "namespace", u.eval.Namespace)
	clock.EmitDuration(metricBrokerProcessTime, now.Sub(u.dequeuedAt), evalMetricLabels(u.eval))
}

func (b *Broker) removeUnackLocked(u *unackEval) {
	delete(b.unack, u.eval.ID)
	b.stats.TotalUnacked--
	b.schedStatsLocked(u.queue).Unacked--
}

// Cancelable removes and returns up to batchSize evals superseded by a
// newer eval of their job (all of them when batchSize <= 0), oldest
// first. The leader copies each, sets Status structs.EvalStatusCanceled
// and StatusDescription structs.EvalDescCanceledNewer, and writes them
// through Raft in batches (Nomad uses 728 per entry).
func (b *Broker) Cancelable(batchSize int) []*structs.Evaluation {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.cancelable)
	if batchSize > 0 && batchSize < n {
		n = batchSize
	}
	if n == 0 {
		return nil
	}
	out := make([]*structs.Evaluation, n)
	copy(out, b.cancelable)
	rest := copy(b.cancelable, b.cancelable[n:])
	clear(b.cancelable[rest:])
	b.cancelable = b.cancelable[:rest]
	return out
}

// CancelableNotify returns a channel that receives a value whenever evals
// are added to the cancelable list (one value may stand for several
// additions). The leader's reaper selects on it next to its interval timer.
// The channel survives SetEnabled.
func (b *Broker) CancelableNotify() <-chan struct{} {
	return b.cancelableCh
}
