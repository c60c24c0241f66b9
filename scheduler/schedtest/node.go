package schedtest

import (
	"fmt"

	"github.com/opennomad/nomad/structs"
)

// NodeBuilder builds a node fluently: MakeNode().DC("dc2").Meta("rack", "r1").Obj().
type NodeBuilder struct{ n *structs.Node }

// MakeNode starts a ready, eligible node in dc1 and the default pool with
// 4000 MHz of CPU, 8192 MB of memory, 100 GiB of disk, and the exec,
// raw_exec and mock drivers healthy.
func MakeNode() *NodeBuilder {
	id := NextID()
	return &NodeBuilder{n: &structs.Node{
		ID:         id,
		SecretID:   NextID(),
		Datacenter: "dc1",
		Name:       "node-" + id[len(id)-6:],
		Attributes: map[string]string{
			"kernel.name":               "linux",
			"arch":                      "amd64",
			"nomad.version":             "1.9.0",
			"driver.exec":               "1",
			"unique.network.ip-address": fmt.Sprintf("10.0.%d.%d", (len(id)*7)%250, idCounter.Load()%250),
		},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4, ReservableCpuCores: []uint16{0, 1, 2, 3}},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 100 * 1024},
			Networks: structs.Networks{{
				Mode: "host", Device: "eth0", CIDR: "10.0.0.1/32", IP: "10.0.0.1", MBits: 1000,
			}},
		},
		ReservedResources: &structs.NodeReservedResources{},
		Meta:              map[string]string{},
		NodePool:          structs.NodePoolDefault,
		Drivers: map[string]*structs.DriverInfo{
			"exec":     {Detected: true, Healthy: true},
			"raw_exec": {Detected: true, Healthy: true},
			"mock":     {Detected: true, Healthy: true},
		},
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Status:                structs.NodeStatusReady,
	}}
}

// ID sets the node ID.
func (b *NodeBuilder) ID(id string) *NodeBuilder { b.n.ID = id; return b }

// Name sets the node name.
func (b *NodeBuilder) Name(name string) *NodeBuilder { b.n.Name = name; return b }

// DC sets the datacenter.
func (b *NodeBuilder) DC(dc string) *NodeBuilder { b.n.Datacenter = dc; return b }

// Pool sets the node pool.
func (b *NodeBuilder) Pool(pool string) *NodeBuilder { b.n.NodePool = pool; return b }

// Class sets the operator-given node class.
func (b *NodeBuilder) Class(class string) *NodeBuilder { b.n.NodeClass = class; return b }

// Attr sets an attribute.
func (b *NodeBuilder) Attr(k, v string) *NodeBuilder { b.n.Attributes[k] = v; return b }

// DelAttr removes an attribute.
func (b *NodeBuilder) DelAttr(k string) *NodeBuilder { delete(b.n.Attributes, k); return b }

// Meta sets a meta key.
func (b *NodeBuilder) Meta(k, v string) *NodeBuilder { b.n.Meta[k] = v; return b }

// Status sets the node status.
func (b *NodeBuilder) Status(s string) *NodeBuilder { b.n.Status = s; return b }

// Ineligible marks the node ineligible for scheduling.
func (b *NodeBuilder) Ineligible() *NodeBuilder {
	b.n.SchedulingEligibility = structs.NodeSchedulingIneligible
	return b
}

// Draining starts a drain (which also makes the node ineligible).
func (b *NodeBuilder) Draining() *NodeBuilder {
	b.n.DrainStrategy = &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: -1}}
	b.n.SchedulingEligibility = structs.NodeSchedulingIneligible
	return b
}

// Driver sets a driver's detected and healthy flags.
func (b *NodeBuilder) Driver(name string, detected, healthy bool) *NodeBuilder {
	b.n.Drivers[name] = &structs.DriverInfo{Detected: detected, Healthy: healthy}
	return b
}

// NoDriver removes a driver entirely.
func (b *NodeBuilder) NoDriver(name string) *NodeBuilder {
	delete(b.n.Drivers, name)
	delete(b.n.Attributes, "driver."+name)
	return b
}

// CPU sets total CPU in MHz.
func (b *NodeBuilder) CPU(mhz int64) *NodeBuilder { b.n.NodeResources.Cpu.CpuShares = mhz; return b }

// Cores sets the number of reservable cores (IDs 0..n-1).
func (b *NodeBuilder) Cores(n int) *NodeBuilder {
	b.n.NodeResources.Cpu.TotalCpuCores = uint16(n)
	b.n.NodeResources.Cpu.ReservableCpuCores = nil
	for i := range n {
		b.n.NodeResources.Cpu.ReservableCpuCores = append(b.n.NodeResources.Cpu.ReservableCpuCores, uint16(i))
	}
	return b
}

// Memory sets total memory in MB.
func (b *NodeBuilder) Memory(mb int64) *NodeBuilder { b.n.NodeResources.Memory.MemoryMB = mb; return b }

// Disk sets total disk in MB.
func (b *NodeBuilder) Disk(mb int64) *NodeBuilder { b.n.NodeResources.Disk.DiskMB = mb; return b }

// Reserved sets the reserved CPU, memory and disk.
func (b *NodeBuilder) Reserved(cpu, memMB, diskMB int64) *NodeBuilder {
	r := b.n.ReservedResources
	r.Cpu.CpuShares, r.Memory.MemoryMB, r.Disk.DiskMB = cpu, memMB, diskMB
	return b
}

// ReservedPorts sets the host ports no allocation may take.
func (b *NodeBuilder) ReservedPorts(spec string) *NodeBuilder {
	b.n.ReservedResources.Networks.ReservedHostPorts = spec
	return b
}

// Obj returns the node with its computed class set.
func (b *NodeBuilder) Obj() *structs.Node {
	b.n.ComputeClass()
	return b.n
}

// Node is MakeNode().Obj(): a default ready node.
func Node() *structs.Node { return MakeNode().Obj() }
