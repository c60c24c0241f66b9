package scheduler

import (
	"cmp"
	"math"
	"slices"

	"github.com/opennomad/nomad/structs"
)

// minPreemptionPriorityGap: an alloc may only be preempted by a job at
// least this much more important.
const minPreemptionPriorityGap = 10

// demand is a resource vector in the dimensions preemption frees.
type demand struct{ cpu, mem, disk int64 }

func (d demand) covered() bool { return d.cpu <= 0 && d.mem <= 0 && d.disk <= 0 }

func allocDemand(a *structs.Allocation) demand {
	c := a.ComparableResources()
	return demand{c.Flattened.Cpu.CpuShares, c.Flattened.Memory.MemoryMB, c.Shared.DiskMB}
}

func (d demand) minus(o demand) demand { return demand{d.cpu - o.cpu, d.mem - o.mem, d.disk - o.disk} }

func (d demand) plus(o demand) demand { return demand{d.cpu + o.cpu, d.mem + o.mem, d.disk + o.disk} }

// resourceDistance is how far an alloc's resources are from the need
// still to cover, as in Nomad: per dimension still needed, the shortfall
// left after evicting it relative to the need,
//
//	(need - give) / need
//
// and the distance is the Euclidean length of those coordinates (0 is a
// perfect fit). An alloc far bigger than the need is as far as one far
// smaller. Nomad measures against the whole ask; here the need is what
// is missing on the node, so victims are matched to the actual shortfall.
func resourceDistance(need, give demand) float64 {
	sum := 0.0
	for _, p := range [][2]int64{{need.cpu, give.cpu}, {need.mem, give.mem}, {need.disk, give.disk}} {
		if p[0] <= 0 {
			continue
		}
		c := float64(p[0]-p[1]) / float64(p[0])
		sum += c * c
	}
	return math.Sqrt(sum)
}

// maxParallelPenalty is added to a victim's distance for every alloc of
// its group beyond the group's migrate max_parallel that would be
// evicted with it, so that preemption spreads over groups rather than
// taking down many allocs of one (Nomad's value).
const maxParallelPenalty = 50.0

// parallelPenalty is the penalty for evicting one more alloc of a group
// whose migrate max_parallel is maxParallel when evicted allocs of that
// group already number evicted:
//
//	(evicted + 1 - maxParallel) * maxParallelPenalty   once evicted >= maxParallel
//
// and nothing before, or without a max_parallel.
func parallelPenalty(maxParallel, evicted int) float64 {
	if maxParallel <= 0 || evicted < maxParallel {
		return 0
	}
	return float64(evicted+1-maxParallel) * maxParallelPenalty
}

// groupKey names a task group of a job.
type groupKey struct {
	namespace, job, group string
}

func allocGroup(a *structs.Allocation) groupKey {
	return groupKey{a.Namespace, a.JobID, a.TaskGroup}
}

// migrateMaxParallel is the migrate max_parallel of an alloc's group, 0
// when it has none.
func migrateMaxParallel(a *structs.Allocation) int {
	if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil && tg.Migrate != nil {
		return tg.Migrate.MaxParallel
	}
	return 0
}

// allocPriority is the priority of the job an alloc belongs to.
func allocPriority(a *structs.Allocation) int {
	if a.Job == nil {
		return structs.JobDefaultPriority
	}
	return a.Job.Priority
}

// chooseVictims picks allocs to evict so that need is covered: only allocs
// of jobs at least minPreemptionPriorityGap below priority, lowest
// priority first. Within a priority it takes, one at a time, the alloc
// with the lowest resourceDistance to what is still needed plus its
// parallelPenalty, counting the allocs of its group that the plan already
// evicts (evicted) and those chosen so far here. Victims that turn out
// unnecessary are then given back, highest priority first. It returns
// nil when the need cannot be covered.
func chooseVictims(need demand, priority int, jobID structs.NamespacedID, allocs []*structs.Allocation,
	evicted func(groupKey) int) []*structs.Allocation {
	var pool []*structs.Allocation
	for _, a := range allocs {
		if a.JobID == jobID.ID && a.Namespace == jobID.Namespace {
			continue
		}
		if priority-allocPriority(a) >= minPreemptionPriorityGap {
			pool = append(pool, a)
		}
	}
	slices.SortStableFunc(pool, func(a, b *structs.Allocation) int { return cmp.Compare(allocPriority(a), allocPriority(b)) })
	var chosen []*structs.Allocation
	chosenOf := map[groupKey]int{}
	remaining := need
	for len(pool) > 0 && !remaining.covered() {
		level := allocPriority(pool[0])
		best, bestScore := -1, math.Inf(1)
		for i, a := range pool {
			if allocPriority(a) != level {
				break
			}
			k := allocGroup(a)
			n := chosenOf[k]
			if evicted != nil {
				n += evicted(k)
			}
			if score := resourceDistance(remaining, allocDemand(a)) + parallelPenalty(migrateMaxParallel(a), n); score < bestScore {
				best, bestScore = i, score
			}
		}
		v := pool[best]
		chosen = append(chosen, v)
		chosenOf[allocGroup(v)]++
		remaining = remaining.minus(allocDemand(v))
		pool = slices.Delete(pool, best, best+1)
	}
	if !remaining.covered() {
		return nil
	}
	// Give back victims not needed after all, most important first.
	for i := len(chosen) - 1; i >= 0; i-- {
		if back := remaining.plus(allocDemand(chosen[i])); back.covered() {
			remaining = back
			chosen = slices.Delete(chosen, i, i+1)
		}
	}
	return chosen
}

// preemptionScore prefers evicting few, unimportant allocs:
//
//	net   = max priority + sum of priorities / max priority
//	score = 1 / (1 + e^(0.0048 * (net - 2048)))
//
// which is close to 1 for small nets and falls off slowly as they grow.
func preemptionScore(victims []*structs.Allocation) float64 {
	maxP, sum := 0, 0
	for _, v := range victims {
		p := allocPriority(v)
		sum += p
		maxP = max(maxP, p)
	}
	net := 0.0
	if maxP > 0 {
		net = float64(maxP) + float64(sum)/float64(maxP)
	}
	return 1 / (1 + math.Exp(0.0048*(net-2048)))
}

// selectWithPreemption retries a placement that found no room, this time
// allowing evictions on the nodes that were full: it scores every such
// node on which evicting lower-priority allocs makes room and picks the
// best by fit and preemption score. It returns the victims with the node.
func (s *groupSelector) selectWithPreemption(priority int, opts selectOptions) (*selection, []*structs.Allocation, *structs.AllocMetric) {
	start := s.ctx.now()
	m := s.metric()
	var best scoreCard
	var bestVictims []*structs.Allocation
	found := false
	for i := range int32(len(s.cs.nodes)) {
		if s.status[i] != statusExhausted {
			continue
		}
		m.NodesEvaluated++
		c, victims, ok := s.evaluatePreempting(i, priority, &opts)
		if !ok {
			continue
		}
		if !found || c.final > best.final {
			best, bestVictims, found = c, victims, true
		}
	}
	m.AllocationTime = s.ctx.now().Sub(start)
	if !found {
		return nil, nil, nil
	}
	n := s.cs.nodes[best.node]
	m.ScoreMetaData = []*structs.NodeScoreMeta{best.meta(n)}
	return &selection{node: n, index: best.node, resources: s.ask.resources(n, best.grant), final: best.final}, bestVictims, m
}

// evaluatePreempting works out the victims on node i and scores the node
// as if they were gone.
func (s *groupSelector) evaluatePreempting(i int32, priority int, opts *selectOptions) (scoreCard, []*structs.Allocation, bool) {
	n := s.cs.nodes[i]
	if s.distinctFailure(i, n) != "" || !s.perAllocVolumesFit(n, opts.allocIndex) {
		return scoreCard{}, nil, false
	}
	u := s.cs.load(s.ctx, i)
	proposed := s.ctx.nodeProposedAllocs(n.ID)
	need := demand{u.cpu + s.ask.cpu - u.capCPU, u.mem + s.ask.mem - u.capMem, u.disk + s.ask.disk - u.capDisk}
	victims := chooseVictims(need, priority, s.job.NamespacedID(), proposed, s.ctx.evictedOf)
	if victims == nil {
		return scoreCard{}, nil, false
	}
	var grant *nodeGrant
	if !s.ask.simple() {
		gone := map[string]bool{}
		for _, v := range victims {
			gone[v.ID] = true
		}
		rest := slices.DeleteFunc(slices.Clone(proposed), func(a *structs.Allocation) bool { return gone[a.ID] })
		var dim string
		if grant, dim = s.ask.grant(n, rest, s.ctx.portRng); dim != "" {
			return scoreCard{}, nil, false
		}
	}
	freed := demand{}
	for _, v := range victims {
		freed = freed.plus(allocDemand(v))
	}
	s.util.Flattened.Cpu.CpuShares = u.cpu - freed.cpu + s.ask.cpu
	s.util.Flattened.Memory.MemoryMB = u.mem - freed.mem + s.ask.mem
	s.util.Shared.DiskMB = u.disk - freed.disk + s.ask.disk
	c := scoreCard{node: i, grant: grant}
	c.binPack = binPackScore(s.ctx.fitScore, n, &s.util)
	c.antiAffinity, c.hasAnti = antiAffinityScore(int(s.collisions[i]), s.tg.Count)
	c.penalized = len(opts.penaltyNodes) > 0 && opts.penaltyNodes[n.ID]
	if s.affinity != nil {
		c.affinity, c.hasAffinity = s.affinity[i], true
	}
	if s.spread != nil {
		c.spread, c.hasSpread = s.spread.nodeScore(i), true
	}
	c.preemption, c.hasPreempt = preemptionScore(victims), true
	c.finish()
	return c, victims, true
}
