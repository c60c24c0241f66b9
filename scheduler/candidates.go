package scheduler

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/opennomad/nomad/structs"
)

// candidateSet is the nodes a job may be placed on at all in this pass:
// ready (status ready, not draining, eligible), in the job's node pool,
// and in one of its datacenters. Everything per node that the ranking
// needs is kept in slices indexed like nodes, so the hot path does no map
// lookups and no allocations.
type candidateSet struct {
	nodes []*structs.Node
	// usage is the usage slot of each node; a slot is loaded in this pass
	// when it carries gen (see Scratch).
	usage []nodeUsage
	gen   uint32
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

	// all is the state's node list, sorted by ID; index finds nodes in it.
	all []*structs.Node
	// byID indexes the candidates by node ID once a pass has asked for
	// more than indexScanLookups of them.
	byID      map[string]int32
	byIDBuilt bool
	lookups   int
}

// newCandidateSet filters the snapshot's nodes for the job. With shuffle
// the order is a seeded permutation of the nodes in ID order (so it
// depends on the set of nodes alone), so that concurrent schedulers
// rarely pick the same nodes; without, nodes are in ID order (system
// jobs).
// Its arrays are the pass's scratch memory.
func newCandidateSet(ctx *evalContext, job *structs.Job, shuffle bool) (*candidateSet, error) {
	all, err := ctx.state.Nodes()
	if err != nil {
		return nil, err
	}
	pool := job.NodePool
	if pool == "" {
		pool = structs.NodePoolDefault
	}
	cs := &candidateSet{byDC: map[string]int{}, pool: pool, all: all}
	// Clusters have few datacenters: a short list beats hashing the name
	// of every node.
	type dcVerdict struct {
		name  string
		ok    bool
		count int
	}
	var dcs []dcVerdict
	sc := ctx.scratch
	clear(sc.nodes) // an earlier pass's candidates
	nodes := sc.nodes[:0]
	if cap(nodes) < len(all) {
		nodes = make([]*structs.Node, 0, len(all))
	}
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
	if shuffle {
		ctx.rng.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	}
	cs.nodes, sc.nodes = nodes, nodes
	if cap(sc.usage) < len(nodes) {
		sc.usage = make([]nodeUsage, len(nodes))
	}
	cs.usage, cs.gen = sc.usage[:len(nodes)], sc.usageGen
	cs.classOf = cleared(&sc.classOf, len(nodes))
	cs.byID = sc.byID
	cs.classes, cs.classNode = sc.classes[:0], sc.classNode[:0]
	classID := sc.classID
	var recent classCache
	for i, n := range nodes {
		c := n.ComputedClass
		if id, ok := recent.get(c); ok {
			cs.classOf[i] = id
			continue
		}
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
		recent.put(c, id)
	}
	sc.classes, sc.classNode = cs.classes, cs.classNode
	return cs, nil
}

// classCache remembers class ids by the address of the class string's
// bytes. The store interns computed classes, so the nodes of a class
// share one instance and a node's class is found by comparing a pointer
// instead of hashing the string; a string held apart from its class's
// instance just misses and is looked up in the map. It only shortcuts
// the map: an entry is put only with the id the map gave.
type classCache [64]struct {
	p  *byte
	id int32
}

func classSlot(p *byte) int { return int(uintptr(unsafe.Pointer(p))>>4) & 63 }

func (c *classCache) get(class string) (int32, bool) {
	if class == "" {
		return 0, false
	}
	p := unsafe.StringData(class)
	e := &c[classSlot(p)]
	return e.id, e.p == p
}

func (c *classCache) put(class string, id int32) {
	if class != "" {
		p := unsafe.StringData(class)
		c[classSlot(p)] = struct {
			p  *byte
			id int32
		}{p, id}
	}
}

// usageOf returns node i's usage slot when it is loaded in this pass, or
// nil: an unloaded slot is computed from state and plan when first read,
// so changes to it need not be kept.
func (cs *candidateSet) usageOf(i int32) *nodeUsage {
	if u := &cs.usage[i]; u.gen == cs.gen {
		return u
	}
	return nil
}

// indexScanLookups is how many nodes a pass finds without a map: most
// passes look up a few (the nodes of the allocs they stop or keep), and
// a map of every candidate costs as much as a few dozen scans.
const indexScanLookups = 16

// index returns the position of the node in the set. The first lookups
// of a pass find the node in the ID-sorted state list by binary search
// and its position by comparing pointers; later ones use a map.
func (cs *candidateSet) index(nodeID string) (int32, bool) {
	if !cs.byIDBuilt {
		if cs.lookups++; cs.lookups <= indexScanLookups {
			k, found := slices.BinarySearchFunc(cs.all, nodeID, func(n *structs.Node, id string) int {
				return strings.Compare(n.ID, id)
			})
			if found {
				i := slices.Index(cs.nodes, cs.all[k])
				return int32(i), i >= 0
			}
			// Not in state, or the list is not sorted after all: the
			// map answers either way.
		}
		for i, n := range cs.nodes {
			cs.byID[n.ID] = int32(i)
		}
		cs.byIDBuilt = true
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
	gen                     uint32 // the pass that loaded it
	capCPU, capMem, capDisk int64
	cpu, mem, disk          int64
	// withPorts and withCores count proposed allocs holding host ports or
	// reserved cores; when non-zero a fit check must look at them.
	withPorts, withCores int
}

// load computes the usage from state and plan.
func (cs *candidateSet) load(ctx *evalContext, i int32) *nodeUsage {
	if u := cs.usageOf(i); u != nil {
		return u
	}
	n := cs.nodes[i]
	capacity := n.Comparable()
	u := &cs.usage[i]
	*u = nodeUsage{
		gen:     cs.gen,
		capCPU:  capacity.Flattened.Cpu.CpuShares,
		capMem:  capacity.Flattened.Memory.MemoryMB,
		capDisk: capacity.Shared.DiskMB,
	}
	for _, a := range ctx.nodeProposedAllocs(n.ID) {
		u.addVector(allocVector(a), 1)
	}
	return u
}

// adjust adds (sign 1) or removes (sign -1) an alloc's footprint on node
// i. An unloaded slot is left alone: loading reads the plan anyway.
func (cs *candidateSet) adjust(i int32, a *structs.Allocation, sign int64) {
	if u := cs.usageOf(i); u != nil {
		u.addVector(allocVector(a), sign)
	}
}

func (u *nodeUsage) addVector(v vector, sign int64) {
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
