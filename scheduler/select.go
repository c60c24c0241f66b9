package scheduler

import (
	"math"

	"github.com/opennomad/nomad/structs"
)

// maxSkippedLowScores is how many candidates scoring <= 0 a pass may set
// aside in favour of later ones before it must count them.
const maxSkippedLowScores = 3

// nodeStatus is a candidate node's standing for one group in this pass.
type nodeStatus uint8

const (
	// statusLive nodes are in the visiting order.
	statusLive nodeStatus = iota
	// statusFiltered nodes fail a static check; they never come back.
	statusFiltered
	// statusDistinct nodes fail distinct_hosts or distinct_property; a
	// stop of one of the job's allocs brings them back.
	statusDistinct
	// statusExhausted nodes lack room; a stop on the node brings it back.
	// Within a pass room only shrinks otherwise, so a node found full is
	// never looked at again: that keeps each placement O(limit).
	statusExhausted
)

// tally counts excluded nodes by reason and node class, to explain a
// failed placement without visiting the nodes again.
type tally struct {
	count    int
	byReason map[string]int
	byClass  map[string]int
}

func (t *tally) add(n *structs.Node, reason string, delta int) {
	if t.byReason == nil {
		t.byReason, t.byClass = map[string]int{}, map[string]int{}
	}
	t.count += delta
	addCount(t.byReason, reason, delta)
	if n.NodeClass != "" {
		addCount(t.byClass, n.NodeClass, delta)
	}
}

func addCount(m map[string]int, k string, delta int) {
	if v := m[k] + delta; v != 0 {
		m[k] = v
	} else {
		delete(m, k)
	}
}

// mergedCounts returns a fresh map with the counts of all ms.
func mergedCounts(ms ...map[string]int) map[string]int {
	var out map[string]int
	for _, m := range ms {
		for k, v := range m {
			if out == nil {
				out = map[string]int{}
			}
			out[k] += v
		}
	}
	return out
}

// selectOptions tune one placement.
type selectOptions struct {
	// penaltyNodes are nodes a rescheduled alloc already failed on.
	penaltyNodes map[string]bool
	// preferred is a candidate index tried before any other (the node of
	// a sticky disk), or -1.
	preferred int32
	// allocIndex is the index of the alloc being placed, which names its
	// per_alloc host volumes.
	allocIndex uint
}

// selection is the outcome of one successful placement.
type selection struct {
	node      *structs.Node
	index     int32
	resources *structs.AllocatedResources
	final     float64
}

// groupSelector places the allocs of one task group during one pass. It
// holds the group's static feasibility per node, a visiting order over the
// feasible nodes, and the counts the scores need, all kept current as the
// plan grows.
//
// Visiting order: nodes are grouped into buckets by their spread values
// (one bucket when the group has no spread) and, within a bucket, sorted
// by node affinity; otherwise they keep the pass's seeded shuffle. A
// placement walks buckets best spread score first, takes the first `limit`
// nodes that pass and fit, and picks the best final score among them. So
// affinities and spreads never need a larger limit: the nodes they favour
// are the ones looked at.
type groupSelector struct {
	ctx *evalContext
	cs  *candidateSet
	job *structs.Job
	tg  *structs.TaskGroup
	ask *groupAsk
	fea *feasibility

	limit    int
	feasible int

	status []nodeStatus
	// why is the reason a node is excluded (an index into reasons), kept
	// to undo its tally when the node comes back.
	why      []uint16
	reasons  []string
	reasonID map[string]uint16

	// The visiting order (see order.go).
	next, prev   []int32
	bucketOf     []int32 // nil: one bucket
	heads, sizes []int32

	affinity []float64 // per candidate node; nil without affinities

	collisions []int32 // the group's proposed allocs per node
	jobCount   []int32 // the job's proposed allocs per node

	distinctHostsJob   bool
	distinctHostsGroup bool
	props              []*distinctProperty

	spread *spreadScorer

	// perAllocVolumes are the group's per_alloc host volumes: each
	// placement asks for its own, so a node lacking one is skipped for
	// that placement only and counted in volumeMisses.
	perAllocVolumes []*structs.VolumeRequest
	volumeMisses    tally

	// Nodes excluded for good: most by a class-level check, counted per
	// computed class (the reason is the class's cached one), the rest by
	// a per-node check.
	staticByClass []int32
	static        tally
	// Nodes excluded for now.
	distinct, exhausted tally

	// failed is set once a placement found no node; the remaining
	// placements of the group are coalesced into that failure.
	failed bool

	util structs.ComparableResources
	top  []scoreCard
	heap []orderEntry
}

// selector returns the group's selector, building it on first use.
func (ctx *evalContext) selector(tg *structs.TaskGroup) *groupSelector {
	if s, ok := ctx.selectors[tg.Name]; ok {
		return s
	}
	s := newGroupSelector(ctx, tg)
	ctx.selectors[tg.Name] = s
	return s
}

// jobFeasibility returns the per-class cache of the job's constraints.
func (ctx *evalContext) jobFeasibility() *feasibility {
	if ctx.jobFeas == nil {
		ctx.jobFeas = newFeasibility(jobChecks(ctx.job), len(ctx.cands.classes))
	}
	return ctx.jobFeas
}

// newGroupSelector builds the selector of tg for the pass. Its per-node
// arrays are the pass's scratch memory.
func newGroupSelector(ctx *evalContext, tg *structs.TaskGroup) *groupSelector {
	cs := ctx.cands
	n := len(cs.nodes)
	g := ctx.scratch.group()
	s := &groupSelector{
		ctx:        ctx,
		cs:         cs,
		job:        ctx.job,
		tg:         tg,
		ask:        newGroupAsk(tg, ctx.schedConfig.MemoryOversubscriptionEnabled),
		fea:        newFeasibility(groupChecks(tg), len(cs.classes)),
		status:     cleared(&g.status, n),
		why:        cleared(&g.why, n),
		reasons:    []string{""},
		reasonID:   map[string]uint16{"": 0},
		next:       cleared(&g.next, n),
		prev:       cleared(&g.prev, n),
		collisions: cleared(&g.collisions, n),
		jobCount:   cleared(&g.jobCount, n),
	}
	ctx.groupFeas = append(ctx.groupFeas, s.fea)
	s.readPlacementConstraints()
	_, s.perAllocVolumes = splitHostVolumes(tg)

	order := s.filter(cleared(&g.order, n)[:0])
	s.feasible = len(order)
	s.limit = selectLimit(ctx.job.Type, s.feasible)

	if as := compileAffinities(ctx.job, tg); len(as) > 0 {
		s.affinity = cleared(&g.affinity, n)
		cached := make(map[int32]float64)
		perNode := affinitiesEscape(as)
		for _, i := range order {
			if perNode {
				s.affinity[i] = affinityScore(as, cs.nodes[i])
				continue
			}
			v, ok := cached[cs.classOf[i]]
			if !ok {
				v = affinityScore(as, cs.nodes[i])
				cached[cs.classOf[i]] = v
			}
			s.affinity[i] = v
		}
		// Highest affinity first; the shuffle decides among equals.
		sortStableBy(order, func(a, b int32) bool { return s.affinity[a] > s.affinity[b] })
	}

	s.spread = newSpreadScorer(ctx.job, tg, &g.bucketOf, n)
	if s.spread != nil {
		s.bucketOf = s.spread.bucketOf
		for _, i := range order {
			s.spread.addNode(i, cs.nodes[i], cs.classOf[i])
		}
	}
	buckets := 1
	if s.spread != nil {
		buckets = len(s.spread.bucketVals)
	}
	s.link(order, buckets)

	for _, a := range ctx.proposedJobAllocs() {
		i, n := ctx.nodeOf(a)
		s.count(i, n, a, 1)
	}
	return s
}

// filter marks the nodes that fail a static check and appends the others
// to order, in candidate order.
func (s *groupSelector) filter(order []int32) []int32 {
	cs := s.cs
	jobFeas := s.ctx.jobFeasibility()
	s.staticByClass = make([]int32, len(cs.classes))
	if !jobFeas.checks.escapes() && !s.fea.checks.escapes() {
		// Every verdict is a class's: answer each class once, for its
		// first node (the node the loop below would ask for first), and
		// leave the nodes themselves unread.
		failed := make([]bool, len(cs.classes))
		for id, first := range cs.classNode {
			n := cs.nodes[first]
			reason := jobFeas.classFailure(int32(id), n)
			if reason == "" {
				reason = s.fea.classFailure(int32(id), n)
			}
			failed[id] = reason != ""
		}
		for i, id := range cs.classOf {
			if !failed[id] {
				order = append(order, int32(i))
				continue
			}
			s.status[i] = statusFiltered
			s.staticByClass[id]++
		}
		return order
	}
	for i := range int32(len(cs.nodes)) {
		reason, perClass := jobFeas.failure(cs, i)
		if reason == "" {
			reason, perClass = s.fea.failure(cs, i)
		}
		if reason == "" {
			order = append(order, i)
			continue
		}
		s.status[i] = statusFiltered
		if perClass {
			s.staticByClass[cs.classOf[i]]++
		} else {
			s.static.add(cs.nodes[i], reason, 1)
		}
	}
	return order
}

// selectLimit is how many nodes that fit a placement scores before it
// picks the best: two for batch work ("power of two choices"), log2 of the
// feasible nodes for services, which keeps placement quality high without
// scoring the whole cluster.
func selectLimit(jobType string, feasible int) int {
	limit := 2
	if jobType != structs.JobTypeBatch && feasible > 0 {
		if l := int(math.Ceil(math.Log2(float64(feasible)))); l > limit {
			limit = l
		}
	}
	return limit
}

// readPlacementConstraints picks out distinct_hosts and distinct_property
// from the job and the group.
func (s *groupSelector) readPlacementConstraints() {
	for _, c := range s.job.Constraints {
		switch c.Operand {
		case structs.ConstraintDistinctHosts:
			s.distinctHostsJob = distinctHostsEnabled(c)
		case structs.ConstraintDistinctProperty:
			s.props = append(s.props, newDistinctProperty(c, ""))
		}
	}
	for _, c := range s.tg.Constraints {
		switch c.Operand {
		case structs.ConstraintDistinctHosts:
			s.distinctHostsGroup = distinctHostsEnabled(c)
		case structs.ConstraintDistinctProperty:
			s.props = append(s.props, newDistinctProperty(c, s.tg.Name))
		}
	}
}

// distinctHostsEnabled reads `distinct_hosts = false` as off.
func distinctHostsEnabled(c *structs.Constraint) bool {
	return c.RTarget != "false" && c.LTarget != "false"
}

func (s *groupSelector) bucket(i int32) int32 {
	if s.bucketOf == nil {
		return 0
	}
	return s.bucketOf[i]
}

// count keeps the per-node and per-value counts of the job's allocs.
func (s *groupSelector) count(i int32, n *structs.Node, a *structs.Allocation, delta int) {
	if a.JobID != s.job.ID || a.Namespace != s.job.Namespace {
		return
	}
	sameGroup := a.TaskGroup == s.tg.Name
	if i >= 0 {
		s.jobCount[i] += int32(delta)
		if sameGroup {
			s.collisions[i] += int32(delta)
		}
	}
	for _, p := range s.props {
		p.note(n, a, delta)
	}
	if sameGroup && s.spread != nil {
		s.spread.note(i, n, delta)
	}
}

// allocAdded is told about every alloc the plan adds on node i (-1 when
// the node is not a candidate).
func (s *groupSelector) allocAdded(i int32, n *structs.Node, a *structs.Allocation) {
	s.count(i, n, a, 1)
}

// allocRemoved is told about every alloc the plan stops or evicts: room
// on its node comes back, and so may nodes a distinct constraint excluded.
func (s *groupSelector) allocRemoved(i int32, n *structs.Node, a *structs.Allocation) {
	s.count(i, n, a, -1)
	if i >= 0 && s.status[i] == statusExhausted {
		s.revive(i)
	}
	if a.JobID != s.job.ID || a.Namespace != s.job.Namespace {
		return
	}
	if len(s.props) > 0 {
		// A freed property value may admit any node that has it.
		for j := range s.status {
			if s.status[j] == statusDistinct {
				s.revive(int32(j))
			}
		}
	} else if i >= 0 && s.status[i] == statusDistinct {
		s.revive(i)
	}
}

// kill takes node i out of the visiting order.
func (s *groupSelector) kill(i int32, st nodeStatus, reason string) {
	s.unlink(i)
	id, ok := s.reasonID[reason]
	if !ok {
		id = uint16(len(s.reasons))
		s.reasons = append(s.reasons, reason)
		s.reasonID[reason] = id
	}
	s.status[i], s.why[i] = st, id
	s.tallyOf(st).add(s.cs.nodes[i], reason, 1)
}

// revive puts node i back into the visiting order.
func (s *groupSelector) revive(i int32) {
	s.tallyOf(s.status[i]).add(s.cs.nodes[i], s.reasons[s.why[i]], -1)
	s.status[i], s.why[i] = statusLive, 0
	s.relink(i)
}

func (s *groupSelector) tallyOf(st nodeStatus) *tally {
	switch st {
	case statusDistinct:
		return &s.distinct
	case statusExhausted:
		return &s.exhausted
	}
	return &s.static
}

// metric starts the explanation of one placement.
func (s *groupSelector) metric() *structs.AllocMetric {
	return &structs.AllocMetric{
		NodesInPool:    s.cs.inPool,
		NodePool:       s.cs.pool,
		NodesAvailable: s.cs.byDC,
	}
}

// explainFailure fills m for a placement that found no node. Every
// candidate is then excluded for a reason recorded in a tally, so the
// metric accounts for each node exactly once: evaluated = filtered +
// exhausted.
func (s *groupSelector) explainFailure(m *structs.AllocMetric) {
	var byClass tally
	jobFeas := s.ctx.jobFeasibility()
	for id, count := range s.staticByClass {
		if count == 0 {
			continue
		}
		reason := jobFeas.classReason(int32(id))
		if reason == "" {
			reason = s.fea.classReason(int32(id))
		}
		byClass.add(s.cs.nodes[s.cs.classNode[id]], reason, int(count))
	}
	m.NodesEvaluated = len(s.cs.nodes)
	m.NodesFiltered = byClass.count + s.static.count + s.distinct.count + s.volumeMisses.count
	m.ConstraintFiltered = mergedCounts(byClass.byReason, s.static.byReason, s.distinct.byReason, s.volumeMisses.byReason)
	m.ClassFiltered = mergedCounts(byClass.byClass, s.static.byClass, s.distinct.byClass, s.volumeMisses.byClass)
	m.NodesExhausted = s.exhausted.count
	m.ClassExhausted = mergedCounts(s.exhausted.byClass)
	m.DimensionExhausted = mergedCounts(s.exhausted.byReason)
	m.ScoreMetaData = nil
}

// selectNode places one alloc of the group. It returns nil and an
// explained metric when no node can take it.
func (s *groupSelector) selectNode(opts selectOptions) (*selection, *structs.AllocMetric) {
	start := s.ctx.now()
	m := s.metric()
	if s.spread != nil {
		s.spread.prepare()
	}
	s.top = s.top[:0]
	s.volumeMisses = tally{}

	var best scoreCard
	found := false
	consider := func(c scoreCard) {
		s.keepTop(c)
		if !found || c.final > best.final {
			best, found = c, true
		}
	}

	if p := opts.preferred; p >= 0 && s.status[p] == statusLive {
		m.NodesEvaluated++
		if c, ok := s.evaluate(p, &opts, m); ok {
			consider(c)
		}
	}
	if !found {
		var skipped [maxSkippedLowScores]scoreCard
		nskip, scored := 0, 0
		it := s.iterate()
		for i := it.next(); i >= 0; i = it.next() {
			m.NodesEvaluated++
			c, ok := s.evaluate(i, &opts, m)
			if !ok {
				continue
			}
			if c.final <= 0 && nskip < len(skipped) {
				skipped[nskip] = c
				nskip++
				continue
			}
			consider(c)
			if scored++; scored >= s.limit {
				break
			}
		}
		it.rotate()
		for k := 0; k < nskip && scored < s.limit; k++ {
			consider(skipped[k])
			scored++
		}
	}
	m.AllocationTime = s.ctx.now().Sub(start)
	if !found {
		s.explainFailure(m)
		return nil, m
	}
	m.ScoreMetaData = make([]*structs.NodeScoreMeta, len(s.top))
	metas := make([]structs.NodeScoreMeta, len(s.top))
	for k := range s.top {
		s.top[k].fill(&metas[k], s.cs.nodes[s.top[k].node])
		m.ScoreMetaData[k] = &metas[k]
	}
	n := s.cs.nodes[best.node]
	return &selection{
		node:      n,
		index:     best.node,
		resources: s.ask.resources(n, best.grant),
		final:     best.final,
	}, m
}

// keepTop retains the best few cards, best first, for ScoreMetaData.
func (s *groupSelector) keepTop(c scoreCard) {
	k := len(s.top)
	for k > 0 && s.top[k-1].final < c.final {
		k--
	}
	if k >= structs.MaxRetainedNodeScores {
		return
	}
	if len(s.top) < structs.MaxRetainedNodeScores {
		s.top = append(s.top, scoreCard{})
	}
	copy(s.top[k+1:], s.top[k:])
	s.top[k] = c
}

// evaluate checks a live node against the placement-dependent
// constraints and the resources, and scores it. A node that fails is
// taken out of the order and its reason recorded in m.
func (s *groupSelector) evaluate(i int32, opts *selectOptions, m *structs.AllocMetric) (scoreCard, bool) {
	n := s.cs.nodes[i]
	if reason := s.distinctFailure(i, n); reason != "" {
		s.kill(i, statusDistinct, reason)
		m.FilterNode(n, reason)
		return scoreCard{}, false
	}
	if !s.perAllocVolumesFit(n, opts.allocIndex) {
		s.volumeMisses.add(n, reasonMissingHostVolumes, 1)
		m.FilterNode(n, reasonMissingHostVolumes)
		return scoreCard{}, false
	}
	u := s.cs.load(s.ctx, i)
	cpu := s.ask.cpu
	var grant *nodeGrant
	dim := ""
	if !s.ask.simple() {
		grant, dim = s.ask.grant(n, s.ctx.nodeProposedAllocs(n.ID), s.ctx.portRng)
		if grant != nil {
			cpu = grant.cpu
		}
	}
	if dim == "" {
		dim = exhaustedDimension(u, cpu, s.ask.mem, s.ask.disk)
	}
	if dim != "" {
		s.kill(i, statusExhausted, dim)
		m.ExhaustedNode(n, dim)
		s.nearMiss(m, n, u, cpu)
		return scoreCard{}, false
	}
	s.util.Flattened.Cpu.CpuShares = u.cpu + cpu
	s.util.Flattened.Memory.MemoryMB = u.mem + s.ask.mem
	s.util.Shared.DiskMB = u.disk + s.ask.disk
	c := scoreCard{node: i, grant: grant}
	c.binPack = s.ctx.fits.score(n, u, &s.util)
	c.antiAffinity, c.hasAnti = antiAffinityScore(int(s.collisions[i]), s.tg.Count)
	c.penalized = len(opts.penaltyNodes) > 0 && opts.penaltyNodes[n.ID]
	if s.affinity != nil {
		c.affinity, c.hasAffinity = s.affinity[i], true
	}
	if s.spread != nil {
		c.spread, c.hasSpread = s.spread.nodeScore(i), true
	}
	c.finish()
	return c, true
}

// exhaustedDimension returns the first dimension, in the order cpu,
// memory, disk (the plan applier's order), in which the node lacks room.
func exhaustedDimension(u *nodeUsage, cpu, mem, disk int64) string {
	switch {
	case u.cpu+cpu > u.capCPU:
		return structs.DimensionCPU
	case u.mem+mem > u.capMem:
		return structs.DimensionMemory
	case u.disk+disk > u.capDisk:
		return structs.DimensionDisk
	}
	return ""
}

// nearMiss records how much CPU, memory and disk node n lacked for the
// ask, so that a failed placement can name the nodes that came closest.
// A node refused for something else (ports, devices, cores) lacks none of
// them and is not one.
func (s *groupSelector) nearMiss(m *structs.AllocMetric, n *structs.Node, u *nodeUsage, cpu int64) {
	shortCPU := max(0, u.cpu+cpu-u.capCPU)
	shortMem := max(0, u.mem+s.ask.mem-u.capMem)
	shortDisk := max(0, u.disk+s.ask.disk-u.capDisk)
	if shortCPU == 0 && shortMem == 0 && shortDisk == 0 {
		return
	}
	m.NearMiss(n, shortCPU, shortMem, shortDisk, cpu, s.ask.mem, s.ask.disk)
}

// perAllocVolumesFit reports whether node n offers the per_alloc host
// volumes of the alloc with index allocIndex.
func (s *groupSelector) perAllocVolumesFit(n *structs.Node, allocIndex uint) bool {
	return len(s.perAllocVolumes) == 0 || hostVolumesFit(n, s.perAllocVolumes, allocIndex)
}

// distinctFailure returns the distinct_* constraint node i breaks, or "".
func (s *groupSelector) distinctFailure(i int32, n *structs.Node) string {
	if s.distinctHostsJob && s.jobCount[i] > 0 {
		return reasonDistinctHosts
	}
	if s.distinctHostsGroup && s.collisions[i] > 0 {
		return reasonDistinctHosts
	}
	for _, p := range s.props {
		if r := p.failure(n); r != "" {
			return r
		}
	}
	return ""
}

// selectOn evaluates the one node i for the group, as system jobs place
// one alloc per node. It returns the placement, or nil with a metric and
// whether the node was merely filtered (never a candidate for the group)
// rather than short of room.
func (s *groupSelector) selectOn(i int32, opts selectOptions) (*selection, *structs.AllocMetric, bool) {
	start := s.ctx.now()
	m := s.metric()
	m.NodesEvaluated = 1
	s.volumeMisses = tally{}
	n := s.cs.nodes[i]
	if s.status[i] == statusFiltered {
		reason, _ := s.ctx.jobFeasibility().failure(s.cs, i)
		if reason == "" {
			reason, _ = s.fea.failure(s.cs, i)
		}
		m.FilterNode(n, reason)
		m.AllocationTime = s.ctx.now().Sub(start)
		return nil, m, true
	}
	if s.status[i] != statusLive {
		s.revive(i)
	}
	c, ok := s.evaluate(i, &opts, m)
	m.AllocationTime = s.ctx.now().Sub(start)
	if !ok {
		return nil, m, m.NodesFiltered > 0
	}
	m.ScoreMetaData = []*structs.NodeScoreMeta{c.meta(n)}
	return &selection{node: n, index: i, resources: s.ask.resources(n, c.grant), final: c.final}, m, false
}
