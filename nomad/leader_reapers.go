package nomad

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/opennomad/nomad/nomad/broker"
	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

// The leader's reapers write back what the broker and the blocked-evals
// tracker decided in memory: evals that exhausted their deliveries become
// failed (with a delayed follow-up), superseded pending evals and
// duplicate blocked evals become canceled. Each runs on its own goroutine
// while the server leads.

// cancelableBatchSize is how many canceled evals go in one Raft entry:
// about 256 KiB of eval IDs, as in Nomad.
const cancelableBatchSize = 728

// failedDequeueTimeout bounds one wait of the failed-eval reaper, so that
// it notices leadership loss promptly.
const failedDequeueTimeout = time.Second

// startLeaderLoops starts the reapers, the garbage collection timers and,
// in a region that is not authoritative, ACL replication.
// The timers are armed before it returns, so that time advanced after
// leadership is established counts for them.
func (s *Server) startLeaderLoops(ctx context.Context) {
	if s.evalBroker != nil {
		s.goLeaderLoop(ctx, s.reapFailedEvaluations)
		cancelTicks := clockTicks(ctx, s.clock, s.config.EvalReapCancelableInterval)
		s.goLeaderLoop(ctx, func(ctx context.Context) { s.reapCancelableEvaluations(ctx, cancelTicks) })
		gcTicks := s.coreJobTicks(ctx)
		s.goLeaderLoop(ctx, func(ctx context.Context) { s.scheduleCoreJobs(ctx, gcTicks) })
	}
	if s.blockedEvals != nil {
		s.goLeaderLoop(ctx, s.reapDupBlockedEvaluations)
	}
	backlogTicks := clockTicks(ctx, s.clock, backlogInterval)
	s.goLeaderLoop(ctx, func(ctx context.Context) { s.emitBacklog(ctx, backlogTicks) })
	memoryTicks := clockTicks(ctx, s.clock, s.config.MemoryCheckInterval)
	s.goLeaderLoop(ctx, func(ctx context.Context) { s.watchMemory(ctx, memoryTicks) })
	healthTicks := clockTicks(ctx, s.clock, autopilotInterval)
	s.goLeaderLoop(ctx, func(ctx context.Context) { s.watchServerHealth(ctx, healthTicks) })
	keyringTicks := clockTicks(ctx, s.clock, s.config.KeyringCheckInterval)
	s.goLeaderLoop(ctx, func(ctx context.Context) { s.tendKeyringLoop(ctx, keyringTicks) })
	if s.replicatesACLs() {
		s.goLeaderLoop(ctx, s.replicateACLs)
	}
	for _, c := range []interface{}{s.evalBroker, s.blockedEvals, s.planQueue} {
		if e, ok := c.(statsEmitter); ok {
			s.goLeaderLoop(ctx, func(ctx context.Context) { e.EmitStats(ctx, leaderStatsInterval) })
		}
	}
}

// leaderStatsInterval is how often the leader's components publish their
// gauges (queue depths, blocked evals).
const leaderStatsInterval = time.Second

// reapFailedEvaluations takes evals off the failed queue and writes each
// back as failed, with a follow-up eval that retries it after a random
// delay (spreading the retries of a burst of failures). Core evals are
// only acked: the leader schedules new ones on its own.
func (s *Server) reapFailedEvaluations(ctx context.Context) {
	for {
		eval, token, err := s.evalBroker.Dequeue(ctx, []string{broker.FailedQueue}, failedDequeueTimeout)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, structs.ErrBrokerDisabled):
			// Paused by the scheduler configuration: wait, don't spin.
			if !sleepCtx(ctx, s.clock, failedDequeueTimeout) {
				return
			}
			continue
		case err != nil:
			s.logger.Error("failed to dequeue failed evaluation", "error", err)
			if !sleepCtx(ctx, s.clock, failedDequeueTimeout) {
				return
			}
			continue
		case eval == nil:
			continue
		}
		if err := s.writeFailedEval(eval, token); err != nil {
			s.logger.Error("failed to mark evaluation as failed", "eval_id", eval.ID, "error", err)
			// Left unacked, the eval comes back to this queue after its nack
			// timeout and is tried again.
			continue
		}
		if err := s.evalBroker.Ack(eval.ID, token); err != nil {
			s.logger.Warn("failed to ack failed evaluation", "eval_id", eval.ID, "error", err)
		}
	}
}

// writeFailedEval marks eval failed and, if its job still exists, links a
// delayed follow-up, both in one Raft entry.
func (s *Server) writeFailedEval(eval *structs.Evaluation, token string) error {
	if eval.Type == structs.JobTypeCore {
		return nil
	}
	now := s.now()
	failed := eval.Copy()
	failed.Status = structs.EvalStatusFailed
	failed.StatusDescription = fmt.Sprintf(structs.EvalDescDeliveryLimit, s.config.EvalDeliveryLimit)
	failed.UpdateModifyTime(now)
	evals := []*structs.Evaluation{failed}

	job, err := s.State().JobByID(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return err
	}
	if job != nil {
		wait := s.config.EvalFailedFollowupBaselineDelay
		if r := s.config.EvalFailedFollowupDelayRange; r > 0 {
			wait += rand.N(r)
		}
		followUp := eval.CreateFailedFollowUpEval(wait, now)
		failed.NextEval = followUp.ID
		evals = append(evals, followUp)
	}
	_, _, err = s.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals, EvalToken: token})
	if err == nil {
		s.logger.Warn("evaluation reached its delivery limit", "eval_id", eval.ID, "job_id", eval.JobID,
			"namespace", eval.Namespace, "follow_up", failed.NextEval)
	}
	return err
}

// reapCancelableEvaluations writes back, as canceled, the pending evals
// the broker found superseded by a newer eval of their job. It runs when
// the broker signals new ones, when Eval.Ack pokes it (scheduler progress
// paces it), and every EvalReapCancelableInterval.
func (s *Server) reapCancelableEvaluations(ctx context.Context, ticks <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.evalBroker.CancelableNotify():
		case <-s.reapCancelableCh():
		case <-ticks:
		}
		s.cancelSupersededEvals()
	}
}

// cancelSupersededEvals drains the broker's cancelable list in batches.
func (s *Server) cancelSupersededEvals() {
	for {
		batch := s.evalBroker.Cancelable(cancelableBatchSize)
		if len(batch) == 0 {
			return
		}
		now := s.now()
		evals := make([]*structs.Evaluation, len(batch))
		for i, e := range batch {
			c := e.Copy()
			c.Status = structs.EvalStatusCanceled
			c.StatusDescription = structs.EvalDescCanceledNewer
			c.UpdateModifyTime(now)
			evals[i] = c
		}
		if _, _, err := s.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals}); err != nil {
			// They stay pending in state; the next leader restores and
			// collapses them again.
			s.logger.Error("failed to cancel superseded evaluations", "count", len(evals), "error", err)
			return
		}
	}
}

// reapDupBlockedEvaluations writes back, as canceled, blocked evals that
// lost the one-blocked-eval-per-job rule.
func (s *Server) reapDupBlockedEvaluations(ctx context.Context) {
	for {
		dups := s.blockedEvals.GetDuplicates(ctx, 0)
		if ctx.Err() != nil {
			return
		}
		if len(dups) == 0 {
			continue
		}
		now := s.now()
		evals := make([]*structs.Evaluation, len(dups))
		for i, e := range dups {
			c := e.Copy()
			c.Status = structs.EvalStatusCanceled
			c.StatusDescription = fmt.Sprintf(structs.EvalDescDuplicateBlock, e.JobID)
			c.UpdateModifyTime(now)
			evals[i] = c
		}
		if _, _, err := s.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals}); err != nil {
			s.logger.Error("failed to cancel duplicate blocked evaluations", "count", len(evals), "error", err)
		}
	}
}

// reapCancelableCh returns the channel Eval.Ack pokes.
func (s *Server) reapCancelableCh() <-chan struct{} { return s.reapKick }

// kickCancelableReaper wakes the cancelable reaper without blocking.
func (s *Server) kickCancelableReaper() {
	select {
	case s.reapKick <- struct{}{}:
	default:
	}
}

// clockTicks returns a channel that receives a value every interval on c
// until ctx ends. Ticks do not queue up: a busy reader sees one.
func clockTicks(ctx context.Context, c clock.Clock, interval time.Duration) <-chan struct{} {
	ch := make(chan struct{}, 1)
	var (
		mu    sync.Mutex
		timer clock.Timer
	)
	var arm func()
	arm = func() {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		timer = c.AfterFunc(interval, func() {
			select {
			case ch <- struct{}{}:
			default:
			}
			arm()
		})
	}
	arm()
	go func() {
		<-ctx.Done()
		mu.Lock()
		defer mu.Unlock()
		if timer != nil {
			timer.Stop()
		}
	}()
	return ch
}

// sleepCtx waits d on c; false when ctx ended first.
func sleepCtx(ctx context.Context, c clock.Clock, d time.Duration) bool {
	done := make(chan struct{})
	t := c.AfterFunc(d, func() { close(done) })
	select {
	case <-ctx.Done():
		t.Stop()
		return false
	case <-done:
		return true
	}
}
