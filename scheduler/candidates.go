package scheduler

import (
	"strings"

	"github.com/opennomad/nomad/structs"
)

// candidateSet is the nodes a job may be placed on at all in this pass:
// ready (status ready, not draining, eligible), in the job's node pool,
// and in one of its datacenters. Everything per node that the ranking
// needs is kept in slices indexed like nodes, so the hot path does no map
// lookups and no allocations.
type candidateSet struct {
	nodes []*structs.Node
	// usage is paged: a pass over a large cluster touches few nodes, and
	// a flat slice would be allocated and zeroed for all of them.
	usage [][]nodeUsage
	// classOf interns each node's computed class; feasibility is cached
	// per class id. Nodes without a computed class get an id of their own.
	classOf []int32
	classes []string
	// classNode is a node of each class, to name the class's NodeClass.
	classNode []int32

	// byDC is AllocMetric.NodesAvailable: candidates per datacenter. It
	// is shared by every metric of the pass and must not be modified.
	byDC map[string]int
	// inPool counts ready nodes of the job's pool in any datacenter.
	inPool int
	pool   string

	byID map[string]int32 // built on first use
}

// newCandidateSet filters the snapshot's nodes for the job. With shuffle
// the order is a seeded permutation, so that concurrent schedulers rarely
// pick the same nodes; without, nodes are in ID order (system jobs).
func newCandidateSet(ctx *evalContext, job *structs.Job, shuffle bool) (*candidateSet, error) {
	all, err := ctx.state.Nodes()
	if err != nil {
		return nil, err
	}
	pool := job.NodePool
	if pool == "" {
		pool = structs.NodePoolDefault
	}
	cs := &candidateSet{byDC: map[string]int{}, pool: pool}
	// Clusters have few datacenters: a short list beats hashing the name
	// of every node.
	type dcVerdict struct {
		name  string
		ok    bool
		count int
	}
	var dcs []dcVerdict
	nodes := make([]*structs.Node, 0, len(all))
	for _, n := range all {
		if !n.Ready() {
			continue
		}
		if pool != structs.NodePoolAll && nodePool(n) != pool {
			continue
		}
		cs.inPool++
		k := 0
		for k < len(dcs) && dcs[k].name != n.Datacenter {
			k++
		}
		if k == len(dcs) {
			dcs = append(dcs, dcVerdict{name: n.Datacenter, ok: matchesAnyDatacenter(job.Datacenters, n.Datacenter)})
		}
		if !dcs[k].ok {
			continue
		}
		dcs[k].count++
		nodes = append(nodes, n)
	}
	for _, d := range dcs {
		if d.ok {
			cs.byDC[d.name] = d.count
		}
	}
	// A datacenter the job names literally but where no ready node of the
	// pool is counts as 0, so the explanation can say that nothing is
	// available there (usually a misspelt name). Patterns name no
	// datacenter of their own.
	for _, dc := range job.Datacenters {
		if _, seen := cs.byDC[dc]; !seen && !strings.Contains(dc, "*") {
			cs.byDC[dc] = 0
		}
	}
	sortNodesByID(nodes)
	if shuffle {
		ctx.rng.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	}
	cs.nodes = nodes
	cs.usage = make([][]nodeUsage, (len(nodes)+usagePage-1)/usagePage)
	cs.classOf = make([]int32, len(nodes))
	classID := map[string]int32{}
	for i, n := range nodes {
		c := n.ComputedClass
		id, ok := classID[c]
		if !ok || c == "" {
			id = int32(len(cs.classes))
			if c != "" {
				classID[c] = id
			}
			cs.classes = append(cs.classes, c)
			cs.classNode = append(cs.classNode, int32(i))
		}
		cs.classOf[i] = id
	}
	return cs, nil
}

const usagePage = 256

// usageOf returns node i's usage slot, loaded or not. The last page
// holds only the nodes left, so a cluster smaller than a page (most, and
// every pass of a small job's eval) does not allocate and zero a full one.
func (cs *candidateSet) usageOf(i int32) *nodeUsage {
	p := cs.usage[i/usagePage]
	if p == nil {
		start := int(i) / usagePage * usagePage
		p = make([]nodeUsage, min(usagePage, len(cs.nodes)-start))
		cs.usage[i/usagePage] = p
	}
	return &p[i%usagePage]
}

// index returns the position of the node in the set.
func (cs *candidateSet) index(nodeID string) (int32, bool) {
	if cs.byID == nil {
		cs.byID = make(map[string]int32, len(cs.nodes))
		for i, n := range cs.nodes {
			cs.byID[n.ID] = int32(i)
		}
	}
	i, ok := cs.byID[nodeID]
	return i, ok
}

// matchesAnyDatacenter reports whether dc matches one of the job's
// datacenter patterns; "*" matches any run of characters.
func matchesAnyDatacenter(patterns []string, dc string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if globMatch(p, dc) {
			return true
		}
	}
	return false
}

// globMatch matches s against a pattern where '*' stands for any run of
// characters, including none.
func globMatch(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return strings.HasSuffix(s, last)
}

// nodeUsage is what the proposed allocs of one node use: the snapshot's
// non-terminal allocs minus the plan's stops plus its placements. It is
// loaded on first touch and then kept current by the eval context.
type nodeUsage struct {
	loaded                  bool
	capCPU, capMem, capDisk int64
	cpu, mem, disk          int64
	// withPorts and withCores count proposed allocs holding host ports or
	// reserved cores; when non-zero a fit check must look at them.
	withPorts, withCores int
}

// load computes the usage from state and plan.
func (cs *candidateSet) load(ctx *evalContext, i int32) *nodeUsage {
	u := cs.usageOf(i)
	if u.loaded {
		return u
	}
	n := cs.nodes[i]
	capacity := n.Comparable()
	u.capCPU = capacity.Flattened.Cpu.CpuShares
	u.capMem = capacity.Flattened.Memory.MemoryMB
	u.capDisk = capacity.Shared.DiskMB
	u.loaded = true
	for _, a := range ctx.nodeProposedAllocs(n.ID) {
		u.add(a, 1)
	}
	return u
}

// add adds (sign 1) or removes (sign -1) an alloc's resources. An
// unloaded usage is left alone: loading reads the plan anyway.
func (u *nodeUsage) add(a *structs.Allocation, sign int64) {
	if u.loaded {
		u.addVector(allocVector(a), sign)
	}
}

func (u *nodeUsage) addVector(v vector, sign int64) {
	if !u.loaded {
		return
	}
	u.cpu += sign * v.cpu
	u.mem += sign * v.mem
	u.disk += sign * v.disk
	if v.ports {
		u.withPorts += int(sign)
	}
	if v.cores {
		u.withCores += int(sign)
	}
}

// vector is an alloc's footprint in the dimensions a fit check compares.
type vector struct {
	cpu, mem, disk int64
	ports, cores   bool
}

// allocVector flattens an alloc's resources exactly as
// AllocatedResources.Comparable does (the plan applier's arithmetic),
// without allocating: ephemeral prestart tasks count as the largest of
// them, not on top of the main tasks.
func allocVector(a *structs.Allocation) vector {
	ar := a.AllocatedResources
	if ar == nil {
		return vector{}
	}
	v := vector{disk: ar.Shared.DiskMB, ports: len(ar.Shared.Ports) > 0}
	var preCPU, preMem, mainCPU, mainMem int64
	for name, t := range ar.Tasks {
		if lc := ar.TaskLifecycles[name]; lc != nil && lc.Hook == structs.TaskLifecycleHookPrestart && !lc.Sidecar {
			preCPU, preMem = max(preCPU, t.Cpu.CpuShares), max(preMem, t.Memory.MemoryMB)
			continue
		}
		mainCPU += t.Cpu.CpuShares
		mainMem += t.Memory.MemoryMB
		if len(t.Cpu.ReservedCores) > 0 {
			v.cores = true
		}
	}
	v.cpu, v.mem = max(mainCPU, preCPU), max(mainMem, preMem)
	return v
}
