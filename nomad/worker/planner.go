package worker

import (
	"context"
	"fmt"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// workerPlanner is the worker as seen by the scheduler of one eval: every
// plan and eval write carries the delivery's token and the index of the
// state the scheduler is looking at.
type workerPlanner struct {
	w     *Worker
	eval  *structs.Evaluation
	token string
	// snap and snapshotIndex are the state the scheduler plans against;
	// a refresh after a partial commit moves them forward.
	snap          *state.StateSnapshot
	snapshotIndex uint64
}

var _ scheduler.Planner = (*workerPlanner)(nil)

// SubmitPlan sends the plan to the leader's applier, retrying while there
// is no leader. When part of the plan was rejected because the scheduler's
// state was stale, it waits for the local store to reach the result's
// RefreshIndex and returns a fresh state to plan again with.
func (p *workerPlanner) SubmitPlan(plan *structs.Plan) (*structs.PlanResult, scheduler.State, error) {
	plan.EvalToken = p.token
	plan.SnapshotIndex = p.snapshotIndex
	if plan.Eval != nil {
		// The leader may write it with the plan (result.EvalWritten)
		// instead of the scheduler writing it after through UpdateEval,
		// so it is stamped alike.
		p.stampUpdate(plan.Eval)
	}

	p.w.setWorkload(WorkloadSubmitting)
	start := p.w.clock.Now()
	var resp *structs.PlanResponse
	err := p.w.callWithRetry(func() (err error) {
		resp, err = p.w.endpoints.SubmitPlan(&structs.PlanRequest{Plan: plan})
		return err
	})
	clock.EmitDuration([]string{"nomad", "worker", "submit_plan"}, p.w.clock.Now().Sub(start), nil)
	p.w.setWorkload(WorkloadScheduling)
	if err != nil {
		return nil, nil, fmt.Errorf("submitting plan for eval %q: %w", p.eval.ID, err)
	}
	if resp == nil || resp.Result == nil {
		return nil, nil, fmt.Errorf("submitting plan for eval %q: the leader returned no result", p.eval.ID)
	}
	result := resp.Result
	if result.RefreshIndex == 0 {
		return result, nil, nil
	}

	p.w.setWorkload(WorkloadWaitingForRaft)
	defer p.w.setWorkload(WorkloadScheduling)
	snap, err := p.w.snapshotMinIndex(p.w.ctx, result.RefreshIndex)
	if err != nil {
		return result, nil, fmt.Errorf("eval %q: refreshing state after a partial commit: %w", p.eval.ID, err)
	}
	index, err := snap.LatestIndex()
	if err != nil {
		return result, nil, err
	}
	p.snap, p.snapshotIndex = snap, index
	return result, snap.SchedulerView(), nil
}

// UpdateEval writes the eval being processed.
func (p *workerPlanner) UpdateEval(eval *structs.Evaluation) error {
	p.stampUpdate(eval)
	start := p.w.clock.Now()
	err := p.w.callWithRetry(func() error {
		return p.w.endpoints.UpdateEval(&structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}, EvalToken: p.token})
	})
	clock.EmitDuration([]string{"nomad", "worker", "update_eval"}, p.w.clock.Now().Sub(start), nil)
	if err != nil {
		return fmt.Errorf("updating eval %q: %w", eval.ID, err)
	}
	return nil
}

// stampUpdate marks an eval written back by the scheduler: the snapshot
// it was decided on and the time of the update.
func (p *workerPlanner) stampUpdate(eval *structs.Evaluation) {
	eval.SnapshotIndex = p.snapshotIndex
	eval.UpdateModifyTime(p.w.clock.Now())
}

// CreateEval writes a new eval (blocked, follow-up) made by the scheduler.
func (p *workerPlanner) CreateEval(eval *structs.Evaluation) error {
	eval.SnapshotIndex = p.snapshotIndex
	now := p.w.clock.Now().UnixNano()
	eval.CreateTime, eval.ModifyTime = now, now
	start := p.w.clock.Now()
	err := p.w.callWithRetry(func() error {
		return p.w.endpoints.CreateEval(&structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}, EvalToken: p.token})
	})
	clock.EmitDuration([]string{"nomad", "worker", "create_eval"}, p.w.clock.Now().Sub(start), nil)
	if err != nil {
		return fmt.Errorf("creating eval %q: %w", eval.ID, err)
	}
	return nil
}

// ReblockEval returns a blocked eval that still cannot place everything
// to the leader's blocked set. When its queued counts no longer match the
// job summary it is written first, so the summary tells the truth.
func (p *workerPlanner) ReblockEval(eval *structs.Evaluation) error {
	summary, err := p.snap.JobSummaryByID(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return fmt.Errorf("reblocking eval %q: %w", eval.ID, err)
	}
	if summary != nil && queuedChanged(eval, summary) {
		if err := p.UpdateEval(eval); err != nil {
			return err
		}
	}
	eval.SnapshotIndex = p.snapshotIndex
	start := p.w.clock.Now()
	err = p.w.callWithRetry(func() error {
		return p.w.endpoints.ReblockEval(&structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}, EvalToken: p.token})
	})
	clock.EmitDuration([]string{"nomad", "worker", "reblock_eval"}, p.w.clock.Now().Sub(start), nil)
	if err != nil {
		return fmt.Errorf("reblocking eval %q: %w", eval.ID, err)
	}
	return nil
}

// queuedChanged reports whether the eval's queued counts differ from the
// summary's.
func queuedChanged(eval *structs.Evaluation, summary *structs.JobSummary) bool {
	for tg, s := range summary.Summary {
		if eval.QueuedAllocations[tg] != s.Queued {
			return true
		}
	}
	return false
}

// callWithRetry makes a leader call, retrying with backoff (500 ms
// doubling to 10 s) for as long as the cluster has no leader or the plan
// queue is disabled (a leader election in progress), until the worker is
// stopped or the server ends.
func (w *Worker) callWithRetry(call func() error) error {
	for failures := 0; ; failures++ {
		err := call()
		if err == nil || !retryableLeaderError(err) {
			return err
		}
		ctx, cancel := w.stopContext()
		ok := w.backoff(ctx, backoffDelay(backoffBaselineSlow, backoffLimitSlow, failures))
		cancel()
		if !ok {
			return err
		}
	}
}

// retryableLeaderError matches the errors, in process or from across the
// network, that mean "try again once a leader is in office".
func retryableLeaderError(err error) bool {
	return structs.IsKind(err, structs.ErrNoLeader) || structs.IsKind(err, structs.ErrPlanQueueDisabled)
}

// stopContext returns a context that ends when the worker is stopped or
// the server ends (not on pause: the eval in hand is finished first).
func (w *Worker) stopContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(w.ctx)
	go func() {
		select {
		case <-w.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
