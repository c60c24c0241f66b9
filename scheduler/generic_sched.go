package scheduler

import (
	"errors"
	"fmt"
	"math/rand"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/structs"
)

// serviceFactory is the Factory of service jobs.
func serviceFactory(cfg *Config, state State, planner Planner) Scheduler {
	return newGenericScheduler(cfg, state, planner, false)
}

// batchFactory is the Factory of batch jobs.
func batchFactory(cfg *Config, state State, planner Planner) Scheduler {
	return newGenericScheduler(cfg, state, planner, true)
}

// genericTriggers are the reasons a service or batch eval may carry.
var genericTriggers = map[string]bool{
	structs.EvalTriggerJobRegister:          true,
	structs.EvalTriggerJobDeregister:        true,
	structs.EvalTriggerPeriodicJob:          true,
	structs.EvalTriggerNodeDrain:            true,
	structs.EvalTriggerNodeUpdate:           true,
	structs.EvalTriggerAllocStop:            true,
	structs.EvalTriggerRollingUpdate:        true,
	structs.EvalTriggerDeploymentWatcher:    true,
	structs.EvalTriggerFailedFollowUp:       true,
	structs.EvalTriggerMaxPlans:             true,
	structs.EvalTriggerRetryFailedAlloc:     true,
	structs.EvalTriggerQueuedAllocs:         true,
	structs.EvalTriggerPreemption:           true,
	structs.EvalTriggerScaling:              true,
	structs.EvalTriggerMaxDisconnectTimeout: true,
	structs.EvalTriggerReconnect:            true,
	structs.EvalTriggerAllocReschedule:      true,
}

// genericScheduler places service and batch jobs: it reconciles the job
// against its allocs, turns the decisions into a plan, and retries on
// stale state.
type genericScheduler struct {
	cfg     *Config
	logger  hclog.Logger
	state   State
	planner Planner
	batch   bool

	eval *structs.Evaluation
	rng  *rand.Rand

	// Per pass.
	job            *structs.Job
	plan           *structs.Plan
	ctx            *evalContext
	deployment     *structs.Deployment
	planResult     *structs.PlanResult
	failedTGAllocs map[string]*structs.AllocMetric
	queuedAllocs   map[string]int
	followUpEvals  []*structs.Evaluation
	placedIDs      map[string]string // new alloc ID -> group
	annotations    *structs.PlanAnnotations
	// continueDeferred: the pass left new allocs of a group that placed
	// everything it tried for a continuation eval.
	continueDeferred bool
	nextEval         string
	// evalWritten: the leader wrote the eval's final form (the plan's
	// Eval) with the pass's plan, so finish has nothing left to write.
	evalWritten bool

	// blocked survives passes: at most one blocked eval per Process.
	blocked *structs.Evaluation
}

func newGenericScheduler(cfg *Config, state State, planner Planner, batch bool) *genericScheduler {
	return &genericScheduler{cfg: cfg, logger: cfg.logger(), state: state, planner: planner, batch: batch}
}

// Process schedules one evaluation to completion.
func (s *genericScheduler) Process(eval *structs.Evaluation) error {
	defer s.cfg.releaseScratch()
	s.eval = eval
	s.rng = seededRand(s.cfg, eval.ID)
	s.logger = s.cfg.logger().With("eval_id", eval.ID, "job_id", eval.JobID, "namespace", eval.Namespace)

	if !genericTriggers[eval.TriggeredBy] {
		return s.finish(structs.EvalStatusFailed,
			fmt.Sprintf("scheduler cannot handle '%s' evaluation reason", eval.TriggeredBy))
	}
	limit := maxServiceScheduleAttempts
	if s.batch {
		limit = maxBatchScheduleAttempts
	}
	err := retryMax(limit, s.pass, func() bool { return progressMade(s.planResult) })
	if errors.Is(err, errMaxAttempts) {
		if err := s.createBlockedEval(true); err != nil {
			return err
		}
		return s.finish(structs.EvalStatusFailed, err.Error())
	}
	if err != nil {
		return fmt.Errorf("eval %q: %w", eval.ID, err)
	}
	if s.continueDeferred && !s.job.Stopped() {
		next := s.eval.CreateContinuationEval(s.cfg.now())
		if err := s.planner.CreateEval(next); err != nil {
			return fmt.Errorf("eval %q: creating continuation eval: %w", eval.ID, err)
		}
		s.nextEval = next.ID
	}
	// A blocked eval that still cannot place everything goes back to the
	// blocked set as it is, instead of spawning another.
	if eval.Status == structs.EvalStatusBlocked && len(s.failedTGAllocs) > 0 {
		n := eval.Copy()
		n.ClassEligibility, n.EscapedComputedClass = s.eligibility()
		n.FailedTGAllocs = s.failedTGAllocs
		n.SnapshotIndex = s.plan.SnapshotIndex
		return s.planner.ReblockEval(n)
	}
	return s.finish(structs.EvalStatusComplete, "")
}

// finish writes the eval's final status, unless the leader already
// wrote it with the last plan.
func (s *genericScheduler) finish(status, desc string) error {
	if status == structs.EvalStatusComplete && s.evalWritten {
		return nil
	}
	return setStatus(s.planner, s.eval, s.outcome(status, desc, s.queuedAllocs), s.cfg.now())
}

// outcome is what finish writes with the given status and queued counts.
func (s *genericScheduler) outcome(status, desc string, queued map[string]int) evalOutcome {
	o := evalOutcome{status: status, desc: desc, blocked: s.blocked, failed: s.failedTGAllocs,
		queued: queued, annotations: s.annotations, nextEval: s.nextEval}
	if s.deployment != nil {
		o.deploymentID = s.deployment.ID
	}
	return o
}

// evalIfCommitted is the eval finish writes if the pass's plan commits
// whole: Process then completes the eval with nothing else to do, and the
// leader may write it with the plan. Nil when Process has more to do
// after the plan (a continuation eval to create, a blocked eval to put
// back): that eval is written on its own, after.
func (s *genericScheduler) evalIfCommitted() *structs.Evaluation {
	if s.continueDeferred && !s.job.Stopped() {
		return nil
	}
	if s.eval.Status == structs.EvalStatusBlocked && len(s.failedTGAllocs) > 0 {
		return nil
	}
	queued := queuedIfCommitted(s.queuedAllocs, s.placedIDs, s.plan)
	return finalEval(s.eval, s.outcome(structs.EvalStatusComplete, "", queued), s.cfg.now())
}

// pass runs one scheduling attempt on the current snapshot. It reports
// done when the plan was fully committed (or there was nothing to do).
func (s *genericScheduler) pass() (bool, error) {
	ev := s.eval
	job, err := s.state.JobByID(ev.Namespace, ev.JobID)
	if err != nil {
		return false, fmt.Errorf("job %q: looking up: %w", ev.JobID, err)
	}
	s.job = job
	s.queuedAllocs = map[string]int{}
	if !job.Stopped() {
		for _, tg := range job.TaskGroups {
			s.queuedAllocs[tg.Name] = 0
		}
	}
	s.failedTGAllocs = nil
	s.followUpEvals = nil
	s.placedIDs = map[string]string{}
	s.annotations = nil
	s.planResult = nil
	s.evalWritten = false
	s.plan = ev.MakePlan(job)
	if s.plan.SnapshotIndex, err = s.state.LatestIndex(); err != nil {
		return false, err
	}
	s.deployment = nil
	var latest *structs.Deployment
	if !s.batch {
		if latest, err = s.state.LatestDeploymentByJobID(ev.Namespace, ev.JobID); err != nil {
			return false, fmt.Errorf("job %q: looking up deployment: %w", ev.JobID, err)
		}
	}
	if s.ctx, err = newEvalContext(s.state, s.plan, ev, job, s.cfg, s.rng); err != nil {
		return false, err
	}
	if err := s.computeJobAllocs(latest); err != nil {
		return false, err
	}
	if s.ctx.err != nil {
		return false, s.ctx.err
	}

	if ev.Status != structs.EvalStatusBlocked && len(s.failedTGAllocs) > 0 && s.blocked == nil {
		if err := s.createBlockedEval(false); err != nil {
			return false, err
		}
	}
	if s.plan.IsNoOp() && !ev.AnnotatePlan {
		return true, nil
	}
	for _, f := range s.followUpEvals {
		if err := s.planner.CreateEval(f); err != nil {
			return false, fmt.Errorf("creating follow-up eval: %w", err)
		}
	}
	s.plan.Eval = s.evalIfCommitted()
	result, newState, err := s.planner.SubmitPlan(s.plan)
	s.planResult = result
	if err != nil {
		return false, fmt.Errorf("submitting plan: %w", err)
	}
	if result != nil {
		countPlaced(s.queuedAllocs, s.placedIDs, result.NodeAllocation)
	}
	if newState != nil {
		s.logger.Debug("refreshing state after a partial commit", "refresh_index", result.RefreshIndex)
		s.state = newState
		return false, nil
	}
	if full, expected, actual := result.FullCommit(s.plan); !full {
		return false, fmt.Errorf("missing state refresh after partial commit (placed %d of %d)", actual, expected)
	}
	s.evalWritten = result.EvalWritten
	return true, nil
}

// computeJobAllocs reconciles and fills the plan.
func (s *genericScheduler) computeJobAllocs(latest *structs.Deployment) error {
	ev, job := s.eval, s.job
	allocs, err := s.state.AllocsByJob(ev.Namespace, ev.JobID, true)
	if err != nil {
		return fmt.Errorf("job %q: listing allocs: %w", ev.JobID, err)
	}
	tainted, err := taintedNodes(s.state, allocs)
	if err != nil {
		return err
	}
	jobForReconcile := job
	switch {
	case job == nil:
		jobForReconcile = &structs.Job{ID: ev.JobID, Namespace: ev.Namespace, Type: ev.Type, Stop: true}
	case !job.RequiresEval():
		// A periodic or parameterized template never runs itself: its
		// children do. Whatever it has is stopped, nothing is placed.
		jobForReconcile = job.Copy()
		jobForReconcile.Stop = true
	}
	inplace := newInplaceChecker(jobForReconcile)
	r := reconcile(reconcileInput{
		job:          jobForReconcile,
		jobID:        ev.JobID,
		namespace:    ev.Namespace,
		batch:        s.batch,
		evalID:       ev.ID,
		evalPriority: ev.Priority,
		now:          s.cfg.now(),
		allocs:       allocs,
		tainted:      tainted,
		deployment:   latest,
		maxFresh:     s.cfg.maxPlacementsPerPass(),
		update: func(a *structs.Allocation, j *structs.Job, tg *structs.TaskGroup) (bool, bool, *structs.Allocation) {
			return inplace.decide(s.state, ev, a, j, tg)
		},
	})
	if ev.AnnotatePlan {
		s.annotations = &structs.PlanAnnotations{DesiredTGUpdates: r.desiredTGUpdates}
		s.plan.Annotations = s.annotations
	}
	s.plan.Deployment = r.deployment
	s.plan.DeploymentUpdates = r.deploymentUpdates
	s.deployment = r.currentDeployment
	s.followUpEvals = r.followupEvals

	for _, st := range r.stop {
		s.ctx.stop(st.alloc, st.desc, st.clientStatus, st.followupEvalID)
	}
	if len(r.attributeUpdates)+len(r.inplace) > 0 {
		byID := make(map[string]*structs.Allocation, len(allocs))
		for _, a := range allocs {
			byID[a.ID] = a
		}
		for _, u := range r.attributeUpdates {
			s.ctx.updateInPlace(u, byID[u.ID])
		}
		for _, u := range r.inplace {
			if s.inDeployment(u.TaskGroup) {
				u.DeploymentID = s.deployment.ID
			}
			s.ctx.updateInPlace(u, byID[u.ID])
		}
	}
	if jobForReconcile.Stopped() || len(r.destructive)+len(r.place) == 0 {
		return nil
	}
	if s.ctx.cands, err = newCandidateSet(s.ctx, job, true); err != nil {
		return fmt.Errorf("job %q: listing nodes: %w", ev.JobID, err)
	}
	s.placedIDs = make(map[string]string, len(r.destructive)+len(r.place))
	for _, d := range r.destructive {
		s.queuedAllocs[d.group.Name]++
	}
	for _, p := range r.place {
		s.queuedAllocs[p.group.Name]++
	}
	for _, d := range r.destructive {
		s.placeOne(placeRequest{name: d.name, group: d.group, previous: d.alloc, stopPrevious: structs.AllocUpdating})
	}
	for _, p := range r.place {
		s.placeOne(p)
	}
	s.deferPlacements(r.deferred)
	return nil
}

// deferPlacements accounts for the new allocs of each group beyond this
// pass's bound. They are queued either way. A group that failed to place
// counts them as coalesced failures, so its blocked eval explains them
// and waits for capacity; a group that placed everything it tried needs
// another pass, which a continuation eval runs once this plan is in.
func (s *genericScheduler) deferPlacements(deferred map[string]int) {
	s.continueDeferred = false
	for group, n := range deferred {
		s.queuedAllocs[group] += n
		if m, failed := s.failedTGAllocs[group]; failed {
			m.CoalescedFailures += n
			continue
		}
		s.continueDeferred = true
	}
}

// inDeployment reports whether placements of the group belong to the
// current deployment.
func (s *genericScheduler) inDeployment(group string) bool {
	if s.deployment == nil || !s.deployment.Active() {
		return false
	}
	_, ok := s.deployment.TaskGroups[group]
	return ok
}

// placeOne finds a node for one placement request and adds it to the
// plan, or records why it could not.
func (s *genericScheduler) placeOne(p placeRequest) {
	tg := p.group
	if m, failed := s.failedTGAllocs[tg.Name]; failed {
		// The group already failed in this pass: room only shrinks, so
		// the rest would fail the same way.
		m.CoalescedFailures++
		return
	}
	ctx := s.ctx
	sel := ctx.selector(tg)
	opts := selectOptions{preferred: -1, allocIndex: allocIndex(p.name)}
	prev := p.previous
	if prev != nil {
		if p.reschedule {
			opts.penaltyNodes = penaltyNodes(prev)
		}
		if tg.EphemeralDisk != nil && tg.EphemeralDisk.Sticky {
			if i, ok := ctx.cands.index(prev.NodeID); ok {
				opts.preferred = i
			}
		}
		if p.stopPrevious != "" {
			ctx.stop(prev, p.stopPrevious, "", "")
		}
	}
	choice, metric := sel.selectNode(opts)
	var preempted []*structs.Allocation
	if choice == nil && ctx.schedConfig.PreemptionEnabled(s.job.Type) {
		if c, victims, m := sel.selectWithPreemption(s.job.Priority, opts); c != nil {
			choice, preempted, metric = c, victims, m
		}
	}
	if choice == nil {
		if s.failedTGAllocs == nil {
			s.failedTGAllocs = map[string]*structs.AllocMetric{}
		}
		metric.PopulateClosestNodes()
		s.failedTGAllocs[tg.Name] = metric
		if prev != nil && p.stopPrevious != "" {
			ctx.unstop(prev)
		}
		return
	}
	alloc := &structs.Allocation{
		ID:                 ctx.ids.next(),
		Namespace:          s.job.Namespace,
		EvalID:             s.eval.ID,
		Name:               p.name,
		JobID:              s.job.ID,
		Job:                s.job,
		TaskGroup:          tg.Name,
		Metrics:            metric,
		NodeID:             choice.node.ID,
		NodeName:           choice.node.Name,
		AllocatedResources: choice.resources,
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
	}
	if prev != nil {
		alloc.PreviousAllocation = prev.ID
		if p.reschedule {
			alloc.RescheduleTracker = structs.NewRescheduleTracker(prev, s.cfg.now(), prev.NextDelay())
		}
	}
	if s.inDeployment(tg.Name) {
		alloc.DeploymentID = s.deployment.ID
		if p.canary {
			alloc.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
			s.recordCanary(tg.Name, alloc.ID)
		}
	}
	for _, v := range preempted {
		ctx.preempt(v, alloc.ID)
		alloc.PreemptedAllocations = append(alloc.PreemptedAllocations, v.ID)
	}
	if len(preempted) > 0 && s.annotations != nil {
		s.annotations.DesiredTGUpdates[tg.Name].Preemptions += uint64(len(preempted))
		for _, v := range preempted {
			s.annotations.PreemptedAllocs = append(s.annotations.PreemptedAllocs, v.Stub())
		}
	}
	ctx.place(alloc, choice.index)
	s.placedIDs[alloc.ID] = tg.Name
}

// recordCanary notes a placed canary in the plan's deployment.
func (s *genericScheduler) recordCanary(group, allocID string) {
	if s.plan.Deployment == nil {
		s.plan.Deployment = s.deployment.Copy()
		s.deployment = s.plan.Deployment
	}
	ds := s.plan.Deployment.TaskGroups[group]
	ds.PlacedCanaries = append(ds.PlacedCanaries, allocID)
}

// penaltyNodes are the nodes a failed alloc and its predecessors ran on.
func penaltyNodes(prev *structs.Allocation) map[string]bool {
	out := map[string]bool{prev.NodeID: true}
	if prev.RescheduleTracker != nil {
		for _, e := range prev.RescheduleTracker.Events {
			out[e.PrevNodeID] = true
		}
	}
	return out
}

// createBlockedEval writes the eval that waits for capacity (or, after
// too many rejected plans, for the conflicts to clear).
func (s *genericScheduler) createBlockedEval(planFailure bool) error {
	classes, escaped := s.eligibility()
	b := s.eval.CreateBlockedEval(classes, escaped, s.failedTGAllocs, s.cfg.now())
	if s.plan != nil {
		b.SnapshotIndex = s.plan.SnapshotIndex
	}
	if planFailure {
		b.TriggeredBy = structs.EvalTriggerMaxPlans
		b.StatusDescription = structs.EvalDescMaxPlans
	}
	s.blocked = b
	if err := s.planner.CreateEval(b); err != nil {
		return fmt.Errorf("creating blocked eval: %w", err)
	}
	return nil
}

// eligibility returns the class eligibility learned in the last pass and
// whether any constraint escaped computed classes.
func (s *genericScheduler) eligibility() (map[string]bool, bool) {
	if s.ctx == nil || s.ctx.cands == nil || s.ctx.jobFeas == nil {
		return nil, s.job != nil && jobEscapes(s.job)
	}
	return classEligibility(s.ctx.cands, s.ctx.jobFeas, s.ctx.groupFeas), jobEscapes(s.job)
}

// jobEscapes reports whether any constraint of the job reads unique.*
// values, so its feasibility cannot be judged per computed class.
func jobEscapes(job *structs.Job) bool {
	if job == nil {
		return false
	}
	if l := jobChecks(job); l.escapes() {
		return true
	}
	for _, tg := range job.TaskGroups {
		if l := groupChecks(tg); l.escapes() {
			return true
		}
	}
	return false
}

// taintedNodes returns, for every node holding a non-terminal alloc that
// can no longer run it, the node (nil when it is gone).
func taintedNodes(state State, allocs []*structs.Allocation) (map[string]*structs.Node, error) {
	out := map[string]*structs.Node{}
	seen := map[string]bool{}
	for _, a := range allocs {
		if a.TerminalStatus() || seen[a.NodeID] {
			continue
		}
		seen[a.NodeID] = true
		n, err := state.NodeByID(a.NodeID)
		if err != nil {
			return nil, fmt.Errorf("node %q: %w", a.NodeID, err)
		}
		if n == nil || n.Status == structs.NodeStatusDown || n.Status == structs.NodeStatusDisconnected || n.DrainStrategy != nil {
			out[a.NodeID] = n
		}
	}
	return out, nil
}
