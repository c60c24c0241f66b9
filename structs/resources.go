package structs

import (
	"fmt"
	"slices"
)

// Resource dimensions named in AllocMetric.DimensionExhausted and in plan
// rejections. The strings are the ones Nomad reports.
const (
	DimensionCPU    = "cpu"
	DimensionCores  = "cores"
	DimensionMemory = "memory"
	DimensionDisk   = "disk"
	// DimensionNetwork prefixes port problems: "network: reserved port collision".
	DimensionNetwork = "network"
)

// Defaults for a task that asks for no resources.
const (
	DefaultTaskCPU      = 100
	DefaultTaskMemoryMB = 300
)

// Resources is what a task asks for. CPU is in MHz, memory and disk in MB.
type Resources struct {
	CPU         int
	Cores       int
	MemoryMB    int
	MemoryMaxMB int
	DiskMB      int
	IOPS        int
	Networks    Networks
}

// Copy returns a deep copy.
func (r *Resources) Copy() *Resources {
	if r == nil {
		return nil
	}
	n := *r
	n.Networks = r.Networks.Copy()
	return &n
}

// Network modes. Only host networking (and none) is implemented by this
// server's clients; bridge and CNI modes are rejected by validation.
const (
	NetworkModeHost = "host"
	NetworkModeNone = "none"
)

// Port is a port request: static when Value is set, dynamic otherwise.
type Port struct {
	Label       string
	Value       int
	To          int
	HostNetwork string
}

// NetworkResource is a group's (or, historically, a task's) network ask,
// and on a node the description of an interface.
type NetworkResource struct {
	Mode          string
	Device        string
	CIDR          string
	IP            string
	Hostname      string
	MBits         int
	ReservedPorts []Port
	DynamicPorts  []Port
}

// Copy returns a deep copy.
func (n *NetworkResource) Copy() *NetworkResource {
	if n == nil {
		return nil
	}
	c := *n
	c.ReservedPorts = slices.Clone(n.ReservedPorts)
	c.DynamicPorts = slices.Clone(n.DynamicPorts)
	return &c
}

// Networks is a list of network resources.
type Networks []*NetworkResource

// Copy returns a deep copy.
func (ns Networks) Copy() Networks {
	if ns == nil {
		return nil
	}
	out := make(Networks, len(ns))
	for i, n := range ns {
		out[i] = n.Copy()
	}
	return out
}

// NodeResources is the capacity a client fingerprinted.
type NodeResources struct {
	Cpu            NodeCpuResources
	Memory         NodeMemoryResources
	Disk           NodeDiskResources
	Networks       Networks
	MinDynamicPort int
	MaxDynamicPort int
}

// NodeCpuResources is CPU capacity: total MHz across all cores.
type NodeCpuResources struct {
	CpuShares          int64
	TotalCpuCores      uint16
	ReservableCpuCores []uint16
}

// NodeMemoryResources is memory capacity in MB.
type NodeMemoryResources struct {
	MemoryMB int64
}

// NodeDiskResources is disk capacity in MB.
type NodeDiskResources struct {
	DiskMB int64
}

// Copy returns a deep copy.
func (n *NodeResources) Copy() *NodeResources {
	if n == nil {
		return nil
	}
	c := *n
	c.Cpu.ReservableCpuCores = slices.Clone(n.Cpu.ReservableCpuCores)
	c.Networks = n.Networks.Copy()
	return &c
}

// NodeReservedResources is capacity the operator holds back from scheduling.
type NodeReservedResources struct {
	Cpu      NodeReservedCpuResources
	Memory   NodeReservedMemoryResources
	Disk     NodeReservedDiskResources
	Networks NodeReservedNetworkResources
}

// NodeReservedCpuResources is reserved CPU in MHz.
type NodeReservedCpuResources struct {
	CpuShares        int64
	ReservedCpuCores []uint16
}

// NodeReservedMemoryResources is reserved memory in MB.
type NodeReservedMemoryResources struct {
	MemoryMB int64
}

// NodeReservedDiskResources is reserved disk in MB.
type NodeReservedDiskResources struct {
	DiskMB int64
}

// NodeReservedNetworkResources lists host ports no allocation may take,
// as a comma list of ports and ranges ("22,80,8000-8100").
type NodeReservedNetworkResources struct {
	ReservedHostPorts string
}

// Copy returns a deep copy.
func (n *NodeReservedResources) Copy() *NodeReservedResources {
	if n == nil {
		return nil
	}
	c := *n
	c.Cpu.ReservedCpuCores = slices.Clone(n.Cpu.ReservedCpuCores)
	return &c
}

// Comparable returns the node's schedulable capacity: total minus reserved.
// Flattened.Cpu.ReservedCores lists the cores allocations may reserve:
// the reservable ones (all of 0..TotalCpuCores-1 when the client did not
// list them) minus those the operator reserved.
func (n *Node) Comparable() *ComparableResources { return n.comparable(true) }

// comparable is Comparable, optionally without the list of cores: scoring
// runs on every candidate node and needs only the scalar dimensions.
func (n *Node) comparable(withCores bool) *ComparableResources {
	c := &ComparableResources{}
	if n.NodeResources != nil {
		c.Flattened.Cpu.CpuShares = n.NodeResources.Cpu.CpuShares
		c.Flattened.Memory.MemoryMB = n.NodeResources.Memory.MemoryMB
		c.Shared.DiskMB = n.NodeResources.Disk.DiskMB
		if withCores {
			c.Flattened.Cpu.ReservedCores = n.NodeResources.Cpu.reservableCores()
		}
	}
	if r := n.ReservedResources; r != nil {
		c.Flattened.Cpu.CpuShares -= r.Cpu.CpuShares
		c.Flattened.Memory.MemoryMB -= r.Memory.MemoryMB
		c.Shared.DiskMB -= r.Disk.DiskMB
		if withCores && len(r.Cpu.ReservedCpuCores) > 0 {
			c.Flattened.Cpu.ReservedCores = slices.DeleteFunc(c.Flattened.Cpu.ReservedCores, func(core uint16) bool {
				return slices.Contains(r.Cpu.ReservedCpuCores, core)
			})
		}
	}
	return c
}

func (c NodeCpuResources) reservableCores() []uint16 {
	if len(c.ReservableCpuCores) > 0 {
		return slices.Clone(c.ReservableCpuCores)
	}
	out := make([]uint16, c.TotalCpuCores)
	for i := range out {
		out[i] = uint16(i)
	}
	return out
}

// AllocatedResources is what the scheduler granted an allocation.
type AllocatedResources struct {
	Tasks          map[string]*AllocatedTaskResources
	TaskLifecycles map[string]*TaskLifecycleConfig
	Shared         AllocatedSharedResources
}

// AllocatedTaskResources is one task's share.
type AllocatedTaskResources struct {
	Cpu      AllocatedCpuResources
	Memory   AllocatedMemoryResources
	Networks Networks
}

// AllocatedCpuResources is granted CPU in MHz.
type AllocatedCpuResources struct {
	CpuShares     int64
	ReservedCores []uint16
}

// AllocatedMemoryResources is granted memory in MB. MemoryMaxMB is the
// oversubscription ceiling; only MemoryMB counts toward node fit.
type AllocatedMemoryResources struct {
	MemoryMB    int64
	MemoryMaxMB int64
}

// AllocatedSharedResources is granted to the group as a whole.
type AllocatedSharedResources struct {
	Networks Networks
	DiskMB   int64
	Ports    AllocatedPorts
}

// AllocatedPortMapping is one port given to an allocation.
type AllocatedPortMapping struct {
	Label  string
	Value  int
	To     int
	HostIP string
}

// AllocatedPorts is the list of ports given to an allocation.
type AllocatedPorts []AllocatedPortMapping

// Get returns the mapping with the label.
func (p AllocatedPorts) Get(label string) (AllocatedPortMapping, bool) {
	for _, m := range p {
		if m.Label == label {
			return m, true
		}
	}
	return AllocatedPortMapping{}, false
}

// Copy returns a deep copy.
func (a *AllocatedResources) Copy() *AllocatedResources {
	if a == nil {
		return nil
	}
	c := &AllocatedResources{Shared: a.Shared}
	c.Shared.Networks = a.Shared.Networks.Copy()
	c.Shared.Ports = slices.Clone(a.Shared.Ports)
	if a.Tasks != nil {
		c.Tasks = make(map[string]*AllocatedTaskResources, len(a.Tasks))
		for k, t := range a.Tasks {
			tc := *t
			tc.Cpu.ReservedCores = slices.Clone(t.Cpu.ReservedCores)
			tc.Networks = t.Networks.Copy()
			c.Tasks[k] = &tc
		}
	}
	if a.TaskLifecycles != nil {
		c.TaskLifecycles = make(map[string]*TaskLifecycleConfig, len(a.TaskLifecycles))
		for k, l := range a.TaskLifecycles {
			if l == nil {
				c.TaskLifecycles[k] = nil
				continue
			}
			lc := *l
			c.TaskLifecycles[k] = &lc
		}
	}
	return c
}

// Comparable flattens the allocation into one set of numbers that can be
// added and compared with a node's capacity. Prestart tasks that are not
// sidecars run before the main tasks and exit, so only the larger of the
// two phases counts, as in Nomad.
func (a *AllocatedResources) Comparable() *ComparableResources {
	c := &ComparableResources{}
	a.addTo(c)
	return c
}

// addTo adds the allocation's resource vector into c without building an
// intermediate vector: fit checks sum every alloc on a node per candidate.
func (a *AllocatedResources) addTo(c *ComparableResources) {
	c.Shared.DiskMB += a.Shared.DiskMB
	var prestartCPU, prestartMem, mainCPU, mainMem int64
	for name, t := range a.Tasks {
		lc := a.TaskLifecycles[name]
		ephemeralPrestart := lc != nil && lc.Hook == TaskLifecycleHookPrestart && !lc.Sidecar
		if ephemeralPrestart {
			prestartCPU = max(prestartCPU, t.Cpu.CpuShares)
			prestartMem = max(prestartMem, t.Memory.MemoryMB)
			continue
		}
		mainCPU += t.Cpu.CpuShares
		mainMem += t.Memory.MemoryMB
		c.Flattened.Cpu.ReservedCores = append(c.Flattened.Cpu.ReservedCores, t.Cpu.ReservedCores...)
	}
	c.Flattened.Cpu.CpuShares += max(mainCPU, prestartCPU)
	c.Flattened.Memory.MemoryMB += max(mainMem, prestartMem)
}

// ComparableResources is a flattened resource vector used for fit checks.
type ComparableResources struct {
	Flattened AllocatedTaskResources
	Shared    AllocatedSharedResources
}

// Add adds o into c.
func (c *ComparableResources) Add(o *ComparableResources) {
	if o == nil {
		return
	}
	c.Flattened.Cpu.CpuShares += o.Flattened.Cpu.CpuShares
	c.Flattened.Cpu.ReservedCores = append(c.Flattened.Cpu.ReservedCores, o.Flattened.Cpu.ReservedCores...)
	c.Flattened.Memory.MemoryMB += o.Flattened.Memory.MemoryMB
	c.Flattened.Memory.MemoryMaxMB += o.Flattened.Memory.MemoryMaxMB
	c.Shared.DiskMB += o.Shared.DiskMB
}

// Subtract removes o from c.
func (c *ComparableResources) Subtract(o *ComparableResources) {
	if o == nil {
		return
	}
	c.Flattened.Cpu.CpuShares -= o.Flattened.Cpu.CpuShares
	c.Flattened.Memory.MemoryMB -= o.Flattened.Memory.MemoryMB
	c.Flattened.Memory.MemoryMaxMB -= o.Flattened.Memory.MemoryMaxMB
	c.Shared.DiskMB -= o.Shared.DiskMB
}

// Superset reports whether c (a capacity) covers o (a demand). When it does
// not, the first exhausted dimension is returned, in the fixed order cpu,
// cores, memory, disk, so the same overcommit is always explained the same
// way. Cores are exhausted when the demand reserves a core twice or one
// the capacity does not offer.
func (c *ComparableResources) Superset(o *ComparableResources) (bool, string) {
	if c.Flattened.Cpu.CpuShares < o.Flattened.Cpu.CpuShares {
		return false, DimensionCPU
	}
	if cores := o.Flattened.Cpu.ReservedCores; len(cores) > 0 {
		if duplicateCore(cores) {
			return false, DimensionCores
		}
		for _, core := range cores {
			if !slices.Contains(c.Flattened.Cpu.ReservedCores, core) {
				return false, DimensionCores
			}
		}
	}
	if c.Flattened.Memory.MemoryMB < o.Flattened.Memory.MemoryMB {
		return false, DimensionMemory
	}
	if c.Shared.DiskMB < o.Shared.DiskMB {
		return false, DimensionDisk
	}
	return true, ""
}

func duplicateCore(cores []uint16) bool {
	if len(cores) < 2 {
		return false
	}
	seen := make(map[uint16]struct{}, len(cores))
	for _, c := range cores {
		if _, ok := seen[c]; ok {
			return true
		}
		seen[c] = struct{}{}
	}
	return false
}

// String renders the vector for log lines.
func (c *ComparableResources) String() string {
	return fmt.Sprintf("cpu=%dMHz memory=%dMB disk=%dMB", c.Flattened.Cpu.CpuShares, c.Flattened.Memory.MemoryMB, c.Shared.DiskMB)
}
