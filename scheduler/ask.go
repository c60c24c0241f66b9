package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/opennomad/nomad/structs"
)

// groupAsk is what one alloc of a group needs, computed once per pass.
// Most groups need only CPU, memory and disk: those are checked with
// three comparisons. Reserved cores and host ports depend on what the
// node already gives out and take the slow path.
type groupAsk struct {
	// template is the AllocatedResources of a placement before cores and
	// ports are assigned; every placement gets its own copy.
	template *structs.AllocatedResources
	// cpu, mem and disk are the template's flattened vector, the same
	// arithmetic the plan applier uses (ephemeral prestart tasks count
	// only as much as the largest of them, not on top of the main tasks).
	cpu, mem, disk int64

	coreTasks []coreAsk
	ports     structs.Networks
}

type coreAsk struct {
	task  string
	cores int
}

func newGroupAsk(tg *structs.TaskGroup, memoryOversubscription bool) *groupAsk {
	ar := &structs.AllocatedResources{
		Tasks: make(map[string]*structs.AllocatedTaskResources, len(tg.Tasks)),
	}
	if tg.EphemeralDisk != nil {
		ar.Shared.DiskMB = int64(tg.EphemeralDisk.SizeMB)
	}
	ask := &groupAsk{template: ar}
	for _, n := range tg.Networks {
		if len(n.ReservedPorts) > 0 || len(n.DynamicPorts) > 0 {
			ask.ports = append(ask.ports, n)
		}
	}
	for _, t := range tg.Tasks {
		tr := &structs.AllocatedTaskResources{}
		if r := t.Resources; r != nil {
			tr.Cpu.CpuShares = int64(r.CPU)
			tr.Memory.MemoryMB = int64(r.MemoryMB)
			if memoryOversubscription && r.MemoryMaxMB > r.MemoryMB {
				tr.Memory.MemoryMaxMB = int64(r.MemoryMaxMB)
			}
			if r.Cores > 0 {
				// The CPU of reserved cores depends on the node's MHz per
				// core; it is filled in per node.
				tr.Cpu.CpuShares = 0
				ask.coreTasks = append(ask.coreTasks, coreAsk{task: t.Name, cores: r.Cores})
			}
			for _, n := range r.Networks {
				if len(n.ReservedPorts) > 0 || len(n.DynamicPorts) > 0 {
					ask.ports = append(ask.ports, n)
				}
			}
		}
		ar.Tasks[t.Name] = tr
		// Only tasks with a lifecycle get an entry: a missing entry and a
		// nil one mean the same (a main task), and most groups have none.
		if t.Lifecycle != nil {
			if ar.TaskLifecycles == nil {
				ar.TaskLifecycles = map[string]*structs.TaskLifecycleConfig{}
			}
			lc := *t.Lifecycle
			ar.TaskLifecycles[t.Name] = &lc
		}
	}
	c := ar.Comparable()
	ask.cpu, ask.mem, ask.disk = c.Flattened.Cpu.CpuShares, c.Flattened.Memory.MemoryMB, c.Shared.DiskMB
	return ask
}

// simple reports whether the ask needs neither cores nor ports.
func (a *groupAsk) simple() bool { return len(a.coreTasks) == 0 && len(a.ports) == 0 }

// nodeGrant is the node-specific part of a placement: the CPU once cores
// are priced, and the cores and ports handed out.
type nodeGrant struct {
	cpu   int64
	cores map[string][]uint16
	ports structs.AllocatedPorts
}

// grant works out cores and ports for the ask on a node whose proposed
// allocs are given. It returns the exhausted dimension when they cannot
// be had.
func (a *groupAsk) grant(node *structs.Node, proposed []*structs.Allocation, rng *rand.Rand) (*nodeGrant, string) {
	g := &nodeGrant{cpu: a.cpu}
	if len(a.coreTasks) > 0 {
		free := freeCores(node, proposed)
		perCore := int64(0)
		if nr := node.NodeResources; nr != nil && nr.Cpu.TotalCpuCores > 0 {
			perCore = nr.Cpu.CpuShares / int64(nr.Cpu.TotalCpuCores)
		}
		g.cores = map[string][]uint16{}
		res := a.template.Copy()
		for _, ct := range a.coreTasks {
			if len(free) < ct.cores {
				return nil, structs.DimensionCores
			}
			g.cores[ct.task] = slices.Clone(free[:ct.cores])
			free = free[ct.cores:]
			res.Tasks[ct.task].Cpu.CpuShares = int64(ct.cores) * perCore
		}
		g.cpu = res.Comparable().Flattened.Cpu.CpuShares
	}
	if len(a.ports) > 0 {
		idx, err := structs.NewNetworkIndex(node)
		if err != nil {
			return nil, structs.DimensionNetwork + ": " + err.Error()
		}
		if collide, reason := idx.AddAllocs(proposed); collide {
			return nil, structs.DimensionNetwork + ": " + reason
		}
		ports, err := idx.AssignPorts(a.ports, rng)
		if err != nil {
			return nil, err.Error()
		}
		g.ports = ports
	}
	return g, ""
}

// freeCores lists, in ascending order, the cores of the node that allocs
// may reserve (Node.Comparable's list, the one the plan applier checks
// against) and that no proposed alloc holds.
func freeCores(node *structs.Node, proposed []*structs.Allocation) []uint16 {
	taken := map[uint16]bool{}
	for _, a := range proposed {
		if a.AllocatedResources == nil {
			continue
		}
		for _, t := range a.AllocatedResources.Tasks {
			for _, c := range t.Cpu.ReservedCores {
				taken[c] = true
			}
		}
	}
	var free []uint16
	for _, c := range node.Comparable().Flattened.Cpu.ReservedCores {
		if !taken[c] {
			free = append(free, c)
		}
	}
	slices.Sort(free)
	return free
}

// resources builds the AllocatedResources of one placement: a fresh copy
// of the template (built directly, without the general deep copy, as it
// runs once per placed alloc) plus the node's grant.
func (a *groupAsk) resources(node *structs.Node, g *nodeGrant) *structs.AllocatedResources {
	t := a.template
	res := &structs.AllocatedResources{
		Tasks:  make(map[string]*structs.AllocatedTaskResources, len(t.Tasks)),
		Shared: structs.AllocatedSharedResources{DiskMB: t.Shared.DiskMB},
	}
	tasks := make([]structs.AllocatedTaskResources, 0, len(t.Tasks))
	for name, tr := range t.Tasks {
		tasks = append(tasks, *tr)
		res.Tasks[name] = &tasks[len(tasks)-1]
	}
	if t.TaskLifecycles != nil {
		res.TaskLifecycles = make(map[string]*structs.TaskLifecycleConfig, len(t.TaskLifecycles))
		for name, lc := range t.TaskLifecycles {
			c := *lc
			res.TaskLifecycles[name] = &c
		}
	}
	if g == nil {
		return res
	}
	if len(g.cores) > 0 {
		perCore := int64(0)
		if nr := node.NodeResources; nr != nil && nr.Cpu.TotalCpuCores > 0 {
			perCore = nr.Cpu.CpuShares / int64(nr.Cpu.TotalCpuCores)
		}
		for task, cores := range g.cores {
			res.Tasks[task].Cpu.ReservedCores = cores
			res.Tasks[task].Cpu.CpuShares = int64(len(cores)) * perCore
		}
	}
	if len(g.ports) > 0 {
		res.Shared.Ports = g.ports
		res.Shared.Networks = portNetworks(a.ports, g.ports)
	}
	return res
}

// portNetworks describes the granted ports in the legacy network form
// older clients read.
func portNetworks(asks structs.Networks, ports structs.AllocatedPorts) structs.Networks {
	if len(ports) == 0 {
		return nil
	}
	n := &structs.NetworkResource{Mode: "host", IP: ports[0].HostIP}
	for _, ask := range asks {
		if ask.Mode != "" {
			n.Mode = ask.Mode
		}
		n.MBits += ask.MBits
		for _, p := range ask.ReservedPorts {
			n.ReservedPorts = append(n.ReservedPorts, p)
		}
		for _, p := range ask.DynamicPorts {
			if m, ok := ports.Get(p.Label); ok {
				n.DynamicPorts = append(n.DynamicPorts, structs.Port{Label: p.Label, Value: m.Value, To: m.To, HostNetwork: p.HostNetwork})
			}
		}
	}
	return structs.Networks{n}
}

// String renders the ask for log lines.
func (a *groupAsk) String() string {
	return fmt.Sprintf("cpu=%dMHz memory=%dMB disk=%dMB cores=%v ports=%d", a.cpu, a.mem, a.disk, a.coreTasks, len(a.ports))
}
