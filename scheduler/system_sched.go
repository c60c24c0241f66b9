package scheduler

import (
	"errors"
	"fmt"
	"math/rand"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/structs"
)

// systemFactory is the Factory of system jobs.
func systemFactory(cfg *Config, state State, planner Planner) Scheduler {
	return newSystemScheduler(cfg, state, planner, false)
}

// sysBatchFactory is the Factory of sysbatch jobs.
func sysBatchFactory(cfg *Config, state State, planner Planner) Scheduler {
	return newSystemScheduler(cfg, state, planner, true)
}

// systemTriggers are the reasons a system or sysbatch eval may carry.
var systemTriggers = map[string]bool{
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
	structs.EvalTriggerQueuedAllocs:         true,
	structs.EvalTriggerPreemption:           true,
	structs.EvalTriggerScaling:              true,
	structs.EvalTriggerMaxDisconnectTimeout: true,
	structs.EvalTriggerReconnect:            true,
}

// systemScheduler keeps one alloc of each group on every eligible node.
// A sysbatch job runs to completion once per node: a node whose alloc of
// the current version finished is done.
type systemScheduler struct {
	cfg      *Config
	logger   hclog.Logger
	state    State
	planner  Planner
	sysbatch bool

	eval *structs.Evaluation
	rng  *rand.Rand

	job            *structs.Job
	plan           *structs.Plan
	ctx            *evalContext
	planResult     *structs.PlanResult
	failedTGAllocs map[string]*structs.AllocMetric
	failedNodes    []string
	queuedAllocs   map[string]int
	placedIDs      map[string]string
	annotations    *structs.PlanAnnotations
	nextEval       *structs.Evaluation
	// evalWritten: the leader wrote the eval's final form (the plan's
	// Eval) with the pass's plan, so finish has nothing left to write.
	evalWritten bool
}

func newSystemScheduler(cfg *Config, state State, planner Planner, sysbatch bool) *systemScheduler {
	return &systemScheduler{cfg: cfg, logger: cfg.logger(), state: state, planner: planner, sysbatch: sysbatch}
}

// Process schedules one evaluation to completion.
func (s *systemScheduler) Process(eval *structs.Evaluation) error {
	defer s.cfg.releaseScratch()
	s.eval = eval
	s.rng = seededRand(s.cfg, eval.ID)
	if !systemTriggers[eval.TriggeredBy] {
		return s.finish(structs.EvalStatusFailed, nil,
			fmt.Sprintf("scheduler cannot handle '%s' evaluation reason", eval.TriggeredBy))
	}
	limit := maxSystemScheduleAttempts
	if s.sysbatch {
		limit = maxSysBatchScheduleAttempts
	}
	err := retryMax(limit, s.pass, func() bool { return progressMade(s.planResult) })
	if errors.Is(err, errMaxAttempts) {
		b := s.blockedEval("")
		b.TriggeredBy, b.StatusDescription = structs.EvalTriggerMaxPlans, structs.EvalDescMaxPlans
		if err := s.planner.CreateEval(b); err != nil {
			return fmt.Errorf("creating blocked eval: %w", err)
		}
		return s.finish(structs.EvalStatusFailed, b, err.Error())
	}
	if err != nil {
		return fmt.Errorf("eval %q: %w", eval.ID, err)
	}
	if eval.Status == structs.EvalStatusBlocked && len(s.failedTGAllocs) > 0 {
		n := eval.Copy()
		n.ClassEligibility, n.EscapedComputedClass = s.eligibility()
		n.FailedTGAllocs = s.failedTGAllocs
		return s.planner.ReblockEval(n)
	}
	// A node short of room gets a blocked eval of its own, released when
	// capacity on that node changes.
	var blocked *structs.Evaluation
	for _, nodeID := range s.failedNodes {
		b := s.blockedEval(nodeID)
		if err := s.planner.CreateEval(b); err != nil {
			return fmt.Errorf("creating blocked eval: %w", err)
		}
		if blocked == nil {
			blocked = b
		}
	}
	return s.finish(structs.EvalStatusComplete, blocked, "")
}

func (s *systemScheduler) blockedEval(nodeID string) *structs.Evaluation {
	classes, escaped := s.eligibility()
	b := s.eval.CreateBlockedEval(classes, escaped, s.failedTGAllocs, s.cfg.now())
	b.NodeID = nodeID
	if s.plan != nil {
		b.SnapshotIndex = s.plan.SnapshotIndex
	}
	return b
}

func (s *systemScheduler) eligibility() (map[string]bool, bool) {
	if s.ctx == nil || s.ctx.cands == nil || s.ctx.jobFeas == nil {
		return nil, jobEscapes(s.job)
	}
	return classEligibility(s.ctx.cands, s.ctx.jobFeas, s.ctx.groupFeas), jobEscapes(s.job)
}

// finish writes the eval's final status, unless the leader already
// wrote it with the last plan.
func (s *systemScheduler) finish(status string, blocked *structs.Evaluation, desc string) error {
	if status == structs.EvalStatusComplete && s.evalWritten {
		return nil
	}
	return setStatus(s.planner, s.eval, s.outcome(status, blocked, desc, s.queuedAllocs), s.cfg.now())
}

// outcome is what finish writes with the given status and queued counts.
func (s *systemScheduler) outcome(status string, blocked *structs.Evaluation, desc string, queued map[string]int) evalOutcome {
	o := evalOutcome{status: status, desc: desc, blocked: blocked, failed: s.failedTGAllocs,
		queued: queued, annotations: s.annotations}
	if s.nextEval != nil {
		o.nextEval = s.nextEval.ID
	}
	return o
}

// evalIfCommitted is the eval finish writes if the pass's plan commits
// whole: Process then completes the eval with nothing else to do, and the
// leader may write it with the plan. Nil when Process has more to do
// after the plan (blocked evals to create for nodes short of room, a
// blocked eval to put back): that eval is written on its own, after.
func (s *systemScheduler) evalIfCommitted() *structs.Evaluation {
	if len(s.failedNodes) > 0 {
		return nil
	}
	if s.eval.Status == structs.EvalStatusBlocked && len(s.failedTGAllocs) > 0 {
		return nil
	}
	queued := queuedIfCommitted(s.queuedAllocs, s.placedIDs, s.plan)
	return finalEval(s.eval, s.outcome(structs.EvalStatusComplete, nil, "", queued), s.cfg.now())
}

// pass runs one attempt on the current snapshot.
func (s *systemScheduler) pass() (bool, error) {
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
	s.failedTGAllocs, s.failedNodes = nil, nil
	s.placedIDs = map[string]string{}
	s.annotations = nil
	s.planResult = nil
	s.nextEval = nil
	s.evalWritten = false
	s.plan = ev.MakePlan(job)
	if s.plan.SnapshotIndex, err = s.state.LatestIndex(); err != nil {
		return false, err
	}
	if s.ctx, err = newEvalContext(s.state, s.plan, ev, job, s.cfg, s.rng); err != nil {
		return false, err
	}
	if err := s.computeJobAllocs(); err != nil {
		return false, err
	}
	if s.ctx.err != nil {
		return false, s.ctx.err
	}
	if s.plan.IsNoOp() && !ev.AnnotatePlan {
		return true, nil
	}
	if s.nextEval != nil {
		if err := s.planner.CreateEval(s.nextEval); err != nil {
			return false, fmt.Errorf("creating rolling update eval: %w", err)
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
		s.state = newState
		return false, nil
	}
	if full, expected, actual := result.FullCommit(s.plan); !full {
		return false, fmt.Errorf("missing state refresh after partial commit (placed %d of %d)", actual, expected)
	}
	s.evalWritten = result.EvalWritten
	return true, nil
}

// nodePlacement is one group to place on one candidate node, possibly
// replacing an alloc of an older version there.
type nodePlacement struct {
	tg       *structs.TaskGroup
	node     int32
	previous *structs.Allocation
}

// computeJobAllocs diffs the job's allocs against the eligible nodes and
// fills the plan.
func (s *systemScheduler) computeJobAllocs() error {
	ev, job := s.eval, s.job
	allocs, err := s.state.AllocsByJob(ev.Namespace, ev.JobID, true)
	if err != nil {
		return fmt.Errorf("job %q: listing allocs: %w", ev.JobID, err)
	}
	tainted, err := taintedNodes(s.state, allocs)
	if err != nil {
		return err
	}
	desired := map[string]*structs.DesiredUpdates{}
	du := func(group string) *structs.DesiredUpdates {
		d, ok := desired[group]
		if !ok {
			d = &structs.DesiredUpdates{}
			desired[group] = d
		}
		return d
	}
	if ev.AnnotatePlan {
		s.annotations = &structs.PlanAnnotations{DesiredTGUpdates: desired}
		s.plan.Annotations = s.annotations
	}

	// A stopped job has nothing to run; a periodic or parameterized
	// template never runs itself, only its children do.
	if job.Stopped() || !job.RequiresEval() {
		for _, a := range allocs {
			if !a.TerminalStatus() {
				s.stopAlloc(a, tainted, structs.AllocNotNeeded)
				du(a.TaskGroup).Stop++
			}
		}
		return nil
	}
	if s.ctx.cands, err = newCandidateSet(s.ctx, job, false); err != nil {
		return fmt.Errorf("job %q: listing nodes: %w", ev.JobID, err)
	}
	cs := s.ctx.cands
	inplace := newInplaceChecker(job)

	var places []nodePlacement
	var destructive []nodePlacement
	for _, tg := range job.TaskGroups {
		d := du(tg.Name)
		// covered marks candidate nodes that need no new alloc of tg.
		covered := cleared(&s.ctx.scratch.covered, len(cs.nodes))
		for _, a := range allocs {
			if a.TaskGroup != tg.Name || a.TerminalStatus() {
				continue
			}
			i, onCandidate := cs.index(a.NodeID)
			node, bad := tainted[a.NodeID]
			switch {
			case bad && (node == nil || node.Status == structs.NodeStatusDown || node.Status == structs.NodeStatusDisconnected):
				s.stopAlloc(a, tainted, structs.AllocNotNeeded)
				d.Stop++
				continue
			case a.DesiredTransition.ShouldMigrate():
				// Marked by the drainer or by an operator's alloc stop.
				// The node stays uncovered: if it still takes the group
				// (an operator stopped the alloc on a ready node), a fresh
				// alloc is placed there; a draining node takes nothing.
				s.ctx.stop(a, structs.AllocMigrating, "", "")
				d.Migrate++
				continue
			case bad:
				d.Ignore++ // draining, not marked yet
				continue
			}
			if !onCandidate {
				if s.nodeOutsideJob(a.NodeID) {
					s.ctx.stop(a, structs.AllocNotNeeded, "", "")
					d.Stop++
				} else {
					d.Ignore++ // not ready or ineligible: left running
				}
				continue
			}
			if covered[i] {
				// A second alloc of the group on one node is one too many.
				s.ctx.stop(a, structs.AllocNotNeeded, "", "")
				d.Stop++
				continue
			}
			covered[i] = true
			ignore, destroy, updated := inplace.decide(s.state, ev, a, job, tg)
			switch {
			case ignore:
				d.Ignore++
			case destroy:
				destructive = append(destructive, nodePlacement{tg: tg, node: i, previous: a})
			default:
				d.InPlaceUpdate++
				s.ctx.updateInPlace(updated, a)
			}
		}
		if s.sysbatch {
			// Work that finished on a node is not run there again.
			for _, a := range allocs {
				if a.TaskGroup == tg.Name && a.TerminalStatus() && s.ranToCompletion(a) {
					if i, ok := cs.index(a.NodeID); ok {
						covered[i] = true
					}
				}
			}
		}
		for i := range cs.nodes {
			if !covered[i] {
				places = append(places, nodePlacement{tg: tg, node: int32(i)})
			}
		}
	}

	// Rolling updates of system jobs: at most max_parallel replacements
	// per eval; a follow-up eval continues after the stagger.
	if len(destructive) > 0 {
		limited := map[string]int{}
		kept := destructive[:0]
		for _, p := range destructive {
			if u := p.tg.Update; !u.IsEmpty() && limited[p.tg.Name] >= u.MaxParallel {
				du(p.tg.Name).Ignore++
				if s.nextEval == nil {
					s.nextEval = ev.NextRollingEval(u.Stagger, s.cfg.now())
				}
				continue
			}
			limited[p.tg.Name]++
			du(p.tg.Name).DestructiveUpdate++
			kept = append(kept, p)
		}
		destructive = kept
	}
	for _, p := range destructive {
		s.queuedAllocs[p.tg.Name]++
		s.placeOn(p, du(p.tg.Name))
	}
	for _, p := range places {
		s.queuedAllocs[p.tg.Name]++
		s.placeOn(p, du(p.tg.Name))
	}
	return nil
}

// ranToCompletion reports whether a terminal sysbatch alloc of the
// current job version means its node is done.
func (s *systemScheduler) ranToCompletion(a *structs.Allocation) bool {
	if a.Job == nil || a.Job.Version != s.job.Version || a.Job.CreateIndex != s.job.CreateIndex {
		return false
	}
	return a.ClientTerminalStatus() && a.ClientStatus != structs.AllocClientStatusLost
}

// nodeOutsideJob reports whether an existing node no longer belongs to
// the job's datacenters or pool, so its allocs are not needed.
func (s *systemScheduler) nodeOutsideJob(nodeID string) bool {
	n, err := s.state.NodeByID(nodeID)
	if err != nil || n == nil {
		return true
	}
	pool := s.job.NodePool
	if pool != "" && pool != structs.NodePoolAll && nodePool(n) != pool {
		return true
	}
	return !matchesAnyDatacenter(s.job.Datacenters, n.Datacenter)
}

// stopAlloc stops an alloc; one on a node that is gone, down or
// disconnected is marked lost, whatever the reason for stopping it.
func (s *systemScheduler) stopAlloc(a *structs.Allocation, tainted map[string]*structs.Node, desc string) {
	if node, bad := tainted[a.NodeID]; bad && (node == nil || node.Status == structs.NodeStatusDown ||
		node.Status == structs.NodeStatusDisconnected) {
		s.ctx.stop(a, structs.AllocLost, structs.AllocClientStatusLost, "")
		return
	}
	s.ctx.stop(a, desc, "", "")
}

// placeOn places one group on one node, stopping the alloc it replaces.
// A node that fails the group's constraints is simply not one of its
// nodes; a node without room is a failure, unless preemption helps.
func (s *systemScheduler) placeOn(p nodePlacement, d *structs.DesiredUpdates) {
	ctx := s.ctx
	sel := ctx.selector(p.tg)
	if p.previous != nil {
		ctx.stop(p.previous, structs.AllocUpdating, "", "")
	}
	choice, metric, filtered := sel.selectOn(p.node, selectOptions{preferred: -1})
	var preempted []*structs.Allocation
	if choice == nil && !filtered && ctx.schedConfig.PreemptionEnabled(s.job.Type) {
		if c, victims, ok := sel.evaluatePreempting(p.node, s.job.Priority, &selectOptions{preferred: -1}); ok {
			n := sel.cs.nodes[p.node]
			metric.ScoreMetaData = []*structs.NodeScoreMeta{c.meta(n)}
			choice = &selection{node: n, index: p.node, resources: sel.ask.resources(n, c.grant), final: c.final}
			preempted = victims
		}
	}
	if choice == nil {
		if filtered {
			// Not one of the group's nodes (any more): nothing is queued
			// for it, and an alloc of an older version there goes.
			s.queuedAllocs[p.tg.Name]--
			if p.previous != nil {
				d.DestructiveUpdate--
				d.Stop++
				ctx.unstop(p.previous)
				ctx.stop(p.previous, structs.AllocNotNeeded, "", "")
			}
			return
		}
		if p.previous != nil {
			ctx.unstop(p.previous)
		}
		s.recordFailure(p.tg.Name, metric)
		s.failedNodes = append(s.failedNodes, sel.cs.nodes[p.node].ID)
		return
	}
	if p.previous == nil {
		d.Place++
	}
	alloc := &structs.Allocation{
		ID:                 ctx.ids.next(),
		Namespace:          s.job.Namespace,
		EvalID:             s.eval.ID,
		Name:               structs.AllocName(s.job.ID, p.tg.Name, 0),
		JobID:              s.job.ID,
		Job:                s.job,
		TaskGroup:          p.tg.Name,
		Metrics:            metric,
		NodeID:             choice.node.ID,
		NodeName:           choice.node.Name,
		AllocatedResources: choice.resources,
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
	}
	if p.previous != nil {
		alloc.PreviousAllocation = p.previous.ID
	}
	for _, v := range preempted {
		ctx.preempt(v, alloc.ID)
		alloc.PreemptedAllocations = append(alloc.PreemptedAllocations, v.ID)
		d.Preemptions++
		if s.annotations != nil {
			s.annotations.PreemptedAllocs = append(s.annotations.PreemptedAllocs, v.Stub())
		}
	}
	ctx.place(alloc, choice.index)
	s.placedIDs[alloc.ID] = p.tg.Name
}

// recordFailure folds one node's failure into the group's explanation,
// so that it accounts for every node that could not take the group.
func (s *systemScheduler) recordFailure(group string, m *structs.AllocMetric) {
	if s.failedTGAllocs == nil {
		s.failedTGAllocs = map[string]*structs.AllocMetric{}
	}
	prev, ok := s.failedTGAllocs[group]
	if !ok {
		s.failedTGAllocs[group] = m
		return
	}
	prev.CoalescedFailures++
	prev.NodesEvaluated += m.NodesEvaluated
	prev.NodesFiltered += m.NodesFiltered
	prev.NodesExhausted += m.NodesExhausted
	prev.AllocationTime += m.AllocationTime
	prev.ConstraintFiltered = mergedCounts(prev.ConstraintFiltered, m.ConstraintFiltered)
	prev.ClassFiltered = mergedCounts(prev.ClassFiltered, m.ClassFiltered)
	prev.ClassExhausted = mergedCounts(prev.ClassExhausted, m.ClassExhausted)
	prev.DimensionExhausted = mergedCounts(prev.DimensionExhausted, m.DimensionExhausted)
}
