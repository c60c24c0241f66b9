package scheduler

import (
	"hash/fnv"
	"math/rand"
	randv2 "math/rand/v2"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/structs"
)

// evalContext is everything one pass of one evaluation shares: the
// snapshot, the plan being built, the candidate nodes and what the plan
// has done to them so far. It is built per pass and never shared between
// goroutines.
//
// Every change to the plan goes through its methods (stop, unstop, place,
// updateInPlace, preempt) so that the per-node usage the ranking reads
// always equals "state + plan", which is what the plan applier will check.
type evalContext struct {
	state  State
	plan   *structs.Plan
	eval   *structs.Evaluation
	job    *structs.Job
	logger hclog.Logger
	now    func() time.Time
	rng    *rand.Rand
	// portRng draws dynamic ports; derived from rng so runs repeat.
	portRng *randv2.Rand

	schedConfig *structs.SchedulerConfiguration
	// fitScore is ScoreFitBinPack or ScoreFitSpread, by cluster setting.
	fitScore func(*structs.Node, *structs.ComparableResources) float64
	fits     fitScores
	ids      idSource

	cands *candidateSet
	// scratch is the memory the pass's per-node arrays are taken from.
	scratch *Scratch

	// jobAllocs are the job's allocs in the snapshot, loaded once.
	jobAllocs       []*structs.Allocation
	jobAllocsLoaded bool
	// stopped holds IDs of allocs the plan stops or preempts.
	stopped map[string]bool
	// evicted counts the plan's preempted allocs per task group, on every
	// node: preemption is penalised for taking many of one group.
	evicted map[groupKey]int
	// placed are the allocs the plan adds or updates in place, in order.
	placed []*structs.Allocation

	// selectors are the per task group rankers built so far; they are told
	// about every stop and placement so their counts stay current.
	selectors map[string]*groupSelector
	jobFeas   *feasibility
	groupFeas []*feasibility
	// otherNodes caches nodes outside the candidate set that hold allocs
	// of the job.
	otherNodes map[string]*structs.Node

	err error
}

// newEvalContext starts a pass. rng must be seeded by the caller.
func newEvalContext(state State, plan *structs.Plan, eval *structs.Evaluation, job *structs.Job,
	cfg *Config, rng *rand.Rand) (*evalContext, error) {
	sc, err := state.SchedulerConfig()
	if err != nil {
		return nil, err
	}
	if sc == nil {
		sc = structs.DefaultSchedulerConfiguration()
	}
	ctx := &evalContext{
		state:       state,
		plan:        plan,
		eval:        eval,
		job:         job,
		logger:      cfg.logger(),
		now:         cfg.now,
		rng:         rng,
		portRng:     randv2.New(randv2.NewPCG(rng.Uint64(), rng.Uint64())),
		schedConfig: sc,
		fitScore:    structs.ScoreFitBinPack,
		stopped:     map[string]bool{},
		selectors:   map[string]*groupSelector{},
		scratch:     cfg.scratch(),
	}
	ctx.scratch.startPass()
	if sc.EffectiveSchedulerAlgorithm() == structs.SchedulerAlgorithmSpread {
		ctx.fitScore = structs.ScoreFitSpread
	}
	ctx.fits.fit = ctx.fitScore
	return ctx, nil
}

// seededRand returns cfg.Rand or a source seeded from the eval ID, so the
// same eval always shuffles nodes the same way. A configured Scratch
// lends the source's memory (several kilobytes), reseeded.
func seededRand(cfg *Config, evalID string) *rand.Rand {
	if cfg != nil && cfg.Rand != nil {
		return cfg.Rand
	}
	h := fnv.New64a()
	h.Write([]byte(evalID))
	seed := int64(h.Sum64())
	if cfg == nil || cfg.Scratch == nil {
		return rand.New(rand.NewSource(seed))
	}
	sc := cfg.Scratch
	if sc.rngSource == nil {
		sc.rngSource = rand.NewSource(seed)
	} else {
		sc.rngSource.Seed(seed)
	}
	return rand.New(sc.rngSource)
}

// loadJobAllocs returns the job's allocs in the snapshot.
func (ctx *evalContext) loadJobAllocs() []*structs.Allocation {
	if !ctx.jobAllocsLoaded && ctx.job != nil {
		allocs, err := ctx.state.AllocsByJob(ctx.job.Namespace, ctx.job.ID, false)
		if err != nil {
			ctx.setErr(err)
		}
		ctx.jobAllocs = allocs
		ctx.jobAllocsLoaded = true
	}
	return ctx.jobAllocs
}

// setErr records the first state error; the pass fails with it.
func (ctx *evalContext) setErr(err error) {
	if ctx.err == nil {
		ctx.err = err
	}
}

// stop appends a stop of alloc to the plan.
func (ctx *evalContext) stop(alloc *structs.Allocation, desc, clientStatus, followupEvalID string) {
	ctx.plan.AppendStoppedAlloc(alloc, desc, clientStatus, followupEvalID)
	if alloc.TerminalStatus() || ctx.stopped[alloc.ID] {
		// A terminal alloc uses nothing; stopping it again (to record a
		// client status) frees nothing either.
		ctx.stopped[alloc.ID] = true
		return
	}
	ctx.stopped[alloc.ID] = true
	ctx.noteRemoved(alloc)
}

// unstop withdraws the stop of alloc added last for its node, used when
// the replacement of a destructive update could not be placed.
func (ctx *evalContext) unstop(alloc *structs.Allocation) {
	updates := ctx.plan.NodeUpdate[alloc.NodeID]
	i := slices.IndexFunc(updates, func(s *structs.AllocStop) bool { return s.ID == alloc.ID })
	if i < 0 {
		return
	}
	updates = slices.Delete(updates, i, i+1)
	if len(updates) == 0 {
		delete(ctx.plan.NodeUpdate, alloc.NodeID)
	} else {
		ctx.plan.NodeUpdate[alloc.NodeID] = updates
	}
	delete(ctx.stopped, alloc.ID)
	if !alloc.TerminalStatus() {
		ctx.noteAdded(alloc)
	}
}

// place appends a new alloc to the plan; i is the node's candidate index
// when the caller knows it, else -1.
func (ctx *evalContext) place(alloc *structs.Allocation, i int32) {
	ctx.plan.AppendAlloc(alloc)
	ctx.placed = append(ctx.placed, alloc)
	if i >= 0 && ctx.cands != nil {
		ctx.cands.adjust(i, alloc, 1)
		for _, s := range ctx.selectors {
			s.allocAdded(i, ctx.cands.nodes[i], alloc)
		}
		return
	}
	ctx.noteAdded(alloc)
}

// updateInPlace appends the updated version of an existing alloc: a new
// job version, or server-owned fields such as a follow-up eval ID.
func (ctx *evalContext) updateInPlace(updated, existing *structs.Allocation) {
	ctx.plan.AppendAlloc(updated)
	ctx.placed = append(ctx.placed, updated)
	if !existing.TerminalStatus() {
		ctx.noteRemoved(existing)
	}
	if !updated.TerminalStatus() {
		ctx.noteAdded(updated)
	}
}

// preempt appends the eviction of alloc in favour of the alloc preemptor.
func (ctx *evalContext) preempt(alloc *structs.Allocation, preemptor string) {
	ctx.plan.AppendPreemptedAlloc(alloc, preemptor)
	if ctx.evicted == nil {
		ctx.evicted = map[groupKey]int{}
	}
	ctx.evicted[allocGroup(alloc)]++
	if !ctx.stopped[alloc.ID] {
		ctx.stopped[alloc.ID] = true
		ctx.noteRemoved(alloc)
	}
}

// evictedOf is how many allocs of the group the plan preempts so far.
func (ctx *evalContext) evictedOf(k groupKey) int { return ctx.evicted[k] }

// noteAdded and noteRemoved keep usage and selector counts equal to
// state + plan.
func (ctx *evalContext) noteAdded(a *structs.Allocation) {
	if ctx.cands == nil {
		return
	}
	i, n := ctx.nodeOf(a)
	if i >= 0 {
		ctx.cands.adjust(i, a, 1)
	}
	for _, s := range ctx.selectors {
		s.allocAdded(i, n, a)
	}
}

func (ctx *evalContext) noteRemoved(a *structs.Allocation) {
	if ctx.cands == nil {
		return
	}
	i, n := ctx.nodeOf(a)
	if i >= 0 {
		ctx.cands.adjust(i, a, -1)
	}
	for _, s := range ctx.selectors {
		s.allocRemoved(i, n, a)
	}
}

// nodeOf returns the candidate index (-1 if none) and the node of an
// alloc; the node is nil when it no longer exists.
func (ctx *evalContext) nodeOf(a *structs.Allocation) (int32, *structs.Node) {
	if i, ok := ctx.cands.index(a.NodeID); ok {
		return i, ctx.cands.nodes[i]
	}
	n, ok := ctx.otherNodes[a.NodeID]
	if !ok {
		var err error
		n, err = ctx.state.NodeByID(a.NodeID)
		if err != nil {
			ctx.setErr(err)
		}
		if ctx.otherNodes == nil {
			ctx.otherNodes = map[string]*structs.Node{}
		}
		ctx.otherNodes[a.NodeID] = n
	}
	return -1, n
}

// proposedJobAllocs returns the job's allocs as they will be once the
// plan is applied: non-terminal allocs of the snapshot not stopped by the
// plan, plus the plan's placements and in-place updates.
func (ctx *evalContext) proposedJobAllocs() []*structs.Allocation {
	var out []*structs.Allocation
	updated := make(map[string]bool, len(ctx.placed))
	for _, a := range ctx.placed {
		updated[a.ID] = true
	}
	for _, a := range ctx.loadJobAllocs() {
		if a.TerminalStatus() || ctx.stopped[a.ID] || updated[a.ID] {
			continue
		}
		out = append(out, a)
	}
	for _, a := range ctx.placed {
		if !a.TerminalStatus() {
			out = append(out, a)
		}
	}
	return out
}

// nodeProposedAllocs returns the non-terminal allocs on the node once the
// plan is applied, from any job. It reads only the node's non-terminal
// allocs from state, so terminal ones waiting for garbage collection cost
// nothing. When the plan has nothing on the node the slice is the
// store's, shared with every reader: callers only read it.
func (ctx *evalContext) nodeProposedAllocs(nodeID string) []*structs.Allocation {
	existing, err := ctx.state.AllocsByNodeTerminal(nodeID, false)
	if err != nil {
		ctx.setErr(err)
		return nil
	}
	planned := ctx.plan.NodeAllocation[nodeID]
	updates, preempted := ctx.plan.NodeUpdate[nodeID], ctx.plan.NodePreemptions[nodeID]
	if len(planned) == 0 && len(updates) == 0 && len(preempted) == 0 {
		return existing
	}
	removed := make(map[string]bool, len(planned)+len(updates)+len(preempted))
	for _, a := range planned {
		removed[a.ID] = true
	}
	for _, a := range updates {
		removed[a.ID] = true
	}
	for _, a := range preempted {
		removed[a.ID] = true
	}
	out := make([]*structs.Allocation, 0, len(existing)+len(planned))
	for _, a := range existing {
		if !removed[a.ID] {
			out = append(out, a)
		}
	}
	return append(out, planned...)
}
