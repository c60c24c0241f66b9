// Package mock builds realistic, canonicalized fixtures of the data model
// for tests in every package: a job that passes Validate, a ready node that
// can run it, an allocation of one on the other, an evaluation.
//
// Every call returns fresh objects with fresh IDs; tests may modify them
// freely. Options cover the changes tests make most often; anything else
// is a plain field assignment on the returned value.
//
//	job := mock.Job(mock.Count(5))
//	node := mock.Node(mock.NodeResources(8000, 16384), mock.Datacenter("dc2"))
//	alloc := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node))
//
// The scheduler's tests mostly want bare fixtures whose arithmetic is
// simple: mock.Job(mock.Count(10), mock.NoPorts()) on
// mock.Node(mock.Unreserved()), allocs marked running with ClientStatus,
// finished ones with MarkFailed or MarkComplete, and IDFor where node
// order must be known.
//
// The package is imported only by tests; it holds no test-only imports
// itself, so importing it never pulls testing code into a binary.
package mock

import (
	"fmt"
	"time"

	"github.com/opennomad/nomad/structs"
)

// Sizes of the fixtures, exported so tests can state their arithmetic in
// terms of them (a node has room for NodeCPU/TaskCPU web allocs by cpu).
const (
	// NodeCPU and NodeMemoryMB are a mock node's total capacity;
	// NodeReservedCPU and NodeReservedMemoryMB are held back from it.
	NodeCPU              = 4000
	NodeMemoryMB         = 8192
	NodeDiskMB           = 100 * 1024
	NodeReservedCPU      = 100
	NodeReservedMemoryMB = 256
	NodeReservedDiskMB   = 4 * 1024
	// NodeIP is the address a mock node's ports are bound on.
	NodeIP = "192.168.0.100"

	// TaskCPU and TaskMemoryMB are what the mock jobs' tasks ask for.
	TaskCPU      = 500
	TaskMemoryMB = 256
)

// IDFor returns a UUID-shaped ID for n, ordered as n is: IDFor(1) <
// IDFor(2) < ... Tests that need nodes in a known ID order, or the same
// IDs on every run (the scheduler sorts nodes by ID before its seeded
// shuffle), name them with it instead of taking fresh ones.
func IDFor(n uint64) string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", n)
}

// JobOption changes a job before it is canonicalized.
type JobOption func(*structs.Job)

// Count sets the count of every group.
func Count(n int) JobOption {
	return func(j *structs.Job) {
		for _, tg := range j.TaskGroups {
			tg.Count = n
		}
	}
}

// Priority sets the job priority.
func Priority(p int) JobOption { return func(j *structs.Job) { j.Priority = p } }

// Datacenters sets the datacenters the job may run in.
func Datacenters(dcs ...string) JobOption {
	return func(j *structs.Job) { j.Datacenters = dcs }
}

// TaskResources sets the cpu (MHz) and memory (MB) of every task.
func TaskResources(cpu, memoryMB int) JobOption {
	return func(j *structs.Job) {
		for _, tg := range j.TaskGroups {
			for _, t := range tg.Tasks {
				t.Resources.CPU, t.Resources.MemoryMB = cpu, memoryMB
			}
		}
	}
}

// JobID sets the job's ID (and name).
func JobID(id string) JobOption {
	return func(j *structs.Job) { j.ID, j.Name = id, id }
}

// GroupName renames the job's first group.
func GroupName(name string) JobOption {
	return func(j *structs.Job) { j.TaskGroups[0].Name = name }
}

// TaskDriver sets the driver of every task.
func TaskDriver(driver string) JobOption {
	return func(j *structs.Job) {
		for _, tg := range j.TaskGroups {
			for _, t := range tg.Tasks {
				t.Driver = driver
			}
		}
	}
}

// NoPorts drops the groups' networks, so the job asks for no ports and
// any number of its allocs fit on a node by cpu, memory and disk alone.
func NoPorts() JobOption {
	return func(j *structs.Job) {
		for _, tg := range j.TaskGroups {
			tg.Networks = nil
		}
	}
}

// Job returns a service job "web-<id>" with one group "web" of 3 allocs,
// one raw_exec task asking for TaskCPU MHz and TaskMemoryMB MB, and a
// dynamic "http" port.
func Job(opts ...JobOption) *structs.Job {
	id := "web-" + structs.GenerateUUID()[:8]
	j := &structs.Job{
		ID:          id,
		Name:        id,
		Type:        structs.JobTypeService,
		Datacenters: []string{"dc1"},
		Constraints: []*structs.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}},
		TaskGroups: []*structs.TaskGroup{{
			Name:  "web",
			Count: 3,
			Networks: structs.Networks{{
				Mode:         structs.NetworkModeHost,
				DynamicPorts: []structs.Port{{Label: "http", To: -1}},
			}},
			Tasks: []*structs.Task{task("web", "/bin/sleep", "3600")},
			Meta:  map[string]string{"tier": "frontend"},
		}},
		Meta:   map[string]string{"owner": "platform"},
		Status: structs.JobStatusPending,
	}
	return finishJob(j, opts)
}

// BatchJob returns a batch job "batch-<id>" with one group "worker" of 2
// allocs running a short raw_exec task.
func BatchJob(opts ...JobOption) *structs.Job {
	id := "batch-" + structs.GenerateUUID()[:8]
	j := &structs.Job{
		ID:          id,
		Name:        id,
		Type:        structs.JobTypeBatch,
		Datacenters: []string{"dc1"},
		TaskGroups: []*structs.TaskGroup{{
			Name:  "worker",
			Count: 2,
			Tasks: []*structs.Task{task("worker", "/bin/sh", "-c", "echo done")},
		}},
		Status: structs.JobStatusPending,
	}
	return finishJob(j, opts)
}

// SystemJob returns a system job "system-<id>": one "agent" alloc on every
// eligible node.
func SystemJob(opts ...JobOption) *structs.Job {
	id := "system-" + structs.GenerateUUID()[:8]
	j := &structs.Job{
		ID:          id,
		Name:        id,
		Type:        structs.JobTypeSystem,
		Priority:    100,
		Datacenters: []string{"*"},
		TaskGroups: []*structs.TaskGroup{{
			Name:  "agent",
			Count: 1,
			Tasks: []*structs.Task{task("agent", "/bin/sleep", "3600")},
		}},
		Status: structs.JobStatusPending,
	}
	return finishJob(j, opts)
}

// SysBatchJob returns a sysbatch job "sysbatch-<id>": one "once" alloc run
// to completion on every eligible node.
func SysBatchJob(opts ...JobOption) *structs.Job {
	id := "sysbatch-" + structs.GenerateUUID()[:8]
	j := &structs.Job{
		ID:          id,
		Name:        id,
		Type:        structs.JobTypeSysBatch,
		Datacenters: []string{"*"},
		TaskGroups: []*structs.TaskGroup{{
			Name:  "once",
			Count: 1,
			Tasks: []*structs.Task{task("once", "/bin/true")},
		}},
		Status: structs.JobStatusPending,
	}
	return finishJob(j, opts)
}

func task(name, command string, args ...string) *structs.Task {
	cfg := map[string]interface{}{"command": command}
	if len(args) > 0 {
		cfg["args"] = args
	}
	return &structs.Task{
		Name:      name,
		Driver:    "raw_exec",
		Config:    cfg,
		Env:       map[string]string{"MOCK": "1"},
		Resources: &structs.Resources{CPU: TaskCPU, MemoryMB: TaskMemoryMB},
	}
}

func finishJob(j *structs.Job, opts []JobOption) *structs.Job {
	for _, o := range opts {
		o(j)
	}
	j.Canonicalize()
	return j
}

// NodeOption changes a node before its class is computed.
type NodeOption func(*structs.Node)

// NodeResources sets the node's total cpu (MHz) and memory (MB).
func NodeResources(cpu, memoryMB int64) NodeOption {
	return func(n *structs.Node) {
		n.NodeResources.Cpu.CpuShares, n.NodeResources.Memory.MemoryMB = cpu, memoryMB
	}
}

// Datacenter sets the node's datacenter.
func Datacenter(dc string) NodeOption { return func(n *structs.Node) { n.Datacenter = dc } }

// NodeClass sets the operator-defined node class.
func NodeClass(c string) NodeOption { return func(n *structs.Node) { n.NodeClass = c } }

// NodePool sets the node pool.
func NodePool(p string) NodeOption { return func(n *structs.Node) { n.NodePool = p } }

// Attr sets one fingerprinted attribute.
func Attr(k, v string) NodeOption { return func(n *structs.Node) { n.Attributes[k] = v } }

// Meta sets one node meta entry.
func Meta(k, v string) NodeOption { return func(n *structs.Node) { n.Meta[k] = v } }

// NodeStatus sets the node status.
func NodeStatus(s string) NodeOption { return func(n *structs.Node) { n.Status = s } }

// NodeID sets the node ID.
func NodeID(id string) NodeOption { return func(n *structs.Node) { n.ID = id } }

// HostVolume offers a host volume at path on the node.
func HostVolume(name, path string, readOnly bool) NodeOption {
	return func(n *structs.Node) {
		if n.HostVolumes == nil {
			n.HostVolumes = map[string]*structs.ClientHostVolumeConfig{}
		}
		n.HostVolumes[name] = &structs.ClientHostVolumeConfig{Name: name, Path: path, ReadOnly: readOnly}
	}
}

// NodeName sets the node name.
func NodeName(name string) NodeOption { return func(n *structs.Node) { n.Name = name } }

// DelAttr removes one fingerprinted attribute.
func DelAttr(k string) NodeOption { return func(n *structs.Node) { delete(n.Attributes, k) } }

// Ineligible marks the node ineligible for scheduling.
func Ineligible() NodeOption {
	return func(n *structs.Node) { n.SchedulingEligibility = structs.NodeSchedulingIneligible }
}

// Draining starts a drain with no deadline (which also makes the node
// ineligible).
func Draining() NodeOption {
	return func(n *structs.Node) {
		n.DrainStrategy = &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: -1}}
		n.SchedulingEligibility = structs.NodeSchedulingIneligible
	}
}

// NodeDriver sets a driver's detected and healthy flags.
func NodeDriver(name string, detected, healthy bool) NodeOption {
	return func(n *structs.Node) {
		n.Drivers[name] = &structs.DriverInfo{Detected: detected, Healthy: healthy}
	}
}

// NoNodeDriver removes a driver, and its legacy "driver.<name>"
// attribute, from the node.
func NoNodeDriver(name string) NodeOption {
	return func(n *structs.Node) {
		delete(n.Drivers, name)
		delete(n.Attributes, "driver."+name)
	}
}

// CPUShares sets the node's total cpu in MHz.
func CPUShares(mhz int64) NodeOption {
	return func(n *structs.Node) { n.NodeResources.Cpu.CpuShares = mhz }
}

// MemoryMB sets the node's total memory in MB.
func MemoryMB(mb int64) NodeOption {
	return func(n *structs.Node) { n.NodeResources.Memory.MemoryMB = mb }
}

// DiskMB sets the node's total disk in MB.
func DiskMB(mb int64) NodeOption {
	return func(n *structs.Node) { n.NodeResources.Disk.DiskMB = mb }
}

// Cores sets the number of reservable cores (IDs 0..n-1).
func Cores(count int) NodeOption {
	return func(n *structs.Node) {
		cpu := &n.NodeResources.Cpu
		cpu.TotalCpuCores, cpu.ReservableCpuCores = uint16(count), nil
		for i := range count {
			cpu.ReservableCpuCores = append(cpu.ReservableCpuCores, uint16(i))
		}
	}
}

// Unreserved holds nothing back on the node, no cpu, memory, disk or
// port, so its whole capacity is for allocations.
func Unreserved() NodeOption {
	return func(n *structs.Node) { n.ReservedResources = &structs.NodeReservedResources{} }
}

// Reserved sets the cpu (MHz), memory and disk (MB) held back.
func Reserved(cpu, memoryMB, diskMB int64) NodeOption {
	return func(n *structs.Node) {
		r := n.ReservedResources
		r.Cpu.CpuShares, r.Memory.MemoryMB, r.Disk.DiskMB = cpu, memoryMB, diskMB
	}
}

// ReservedPorts sets the host ports no allocation may take ("22,80-90").
func ReservedPorts(spec string) NodeOption {
	return func(n *structs.Node) { n.ReservedResources.Networks.ReservedHostPorts = spec }
}

// Node returns a ready, eligible linux node in dc1 with NodeCPU MHz over 4
// cores, NodeMemoryMB MB and NodeDiskMB MB, of which NodeReserved* are
// reserved, port 22 reserved, and healthy raw_exec, exec and mock drivers.
func Node(opts ...NodeOption) *structs.Node {
	id := structs.GenerateUUID()
	healthy := func() *structs.DriverInfo {
		return &structs.DriverInfo{Detected: true, Healthy: true, HealthDescription: "healthy"}
	}
	n := &structs.Node{
		ID:         id,
		SecretID:   structs.GenerateUUID(),
		Datacenter: "dc1",
		Name:       "node-" + id[:8],
		HTTPAddr:   NodeIP + ":4646",
		Attributes: map[string]string{
			"kernel.name":               "linux",
			"os.name":                   "ubuntu",
			"cpu.arch":                  "amd64",
			"cpu.totalcompute":          "4000",
			"memory.totalbytes":         "8589934592",
			"nomad.version":             "1.9.0",
			"driver.raw_exec":           "1",
			"driver.exec":               "1",
			"unique.hostname":           "node-" + id[:8],
			"unique.network.ip-address": NodeIP,
		},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: NodeCPU, TotalCpuCores: 4, ReservableCpuCores: []uint16{0, 1, 2, 3}},
			Memory: structs.NodeMemoryResources{MemoryMB: NodeMemoryMB},
			Disk:   structs.NodeDiskResources{DiskMB: NodeDiskMB},
			Networks: structs.Networks{{
				Mode: structs.NetworkModeHost, Device: "eth0", CIDR: NodeIP + "/32", IP: NodeIP, MBits: 1000,
			}},
			MinDynamicPort: structs.DefaultMinDynamicPort,
			MaxDynamicPort: structs.DefaultMaxDynamicPort,
		},
		ReservedResources: &structs.NodeReservedResources{
			Cpu:      structs.NodeReservedCpuResources{CpuShares: NodeReservedCPU},
			Memory:   structs.NodeReservedMemoryResources{MemoryMB: NodeReservedMemoryMB},
			Disk:     structs.NodeReservedDiskResources{DiskMB: NodeReservedDiskMB},
			Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: "22"},
		},
		Meta:                  map[string]string{"rack": "r1"},
		NodeClass:             "linux-medium",
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Status:                structs.NodeStatusReady,
		StatusUpdatedAt:       time.Now().Unix(),
		Drivers: map[string]*structs.DriverInfo{
			"raw_exec": healthy(),
			"exec":     healthy(),
			"mock":     healthy(),
		},
	}
	for _, o := range opts {
		o(n)
	}
	n.Canonicalize()
	return n
}

// AllocOption changes an alloc after it was built.
type AllocOption func(*structs.Allocation)

// ForJob makes the alloc instance index of the job's first group: job,
// name, group and resources follow.
func ForJob(j *structs.Job, index int) AllocOption {
	return func(a *structs.Allocation) { setJob(a, j, j.TaskGroups[0].Name, index) }
}

// ForGroup makes the alloc instance index of the job's named group.
func ForGroup(j *structs.Job, group string, index int) AllocOption {
	return func(a *structs.Allocation) { setJob(a, j, group, index) }
}

// OnNode places the alloc on the node.
func OnNode(n *structs.Node) AllocOption {
	return func(a *structs.Allocation) {
		a.NodeID, a.NodeName = n.ID, n.Name
	}
}

// ClientStatus sets the client-reported status.
func ClientStatus(s string) AllocOption { return func(a *structs.Allocation) { a.ClientStatus = s } }

// DesiredStatus sets the server-desired status.
func DesiredStatus(s string) AllocOption { return func(a *structs.Allocation) { a.DesiredStatus = s } }

// Alloc returns a pending, desired-running alloc of a fresh mock Job's
// group "web" (index 0) on a fresh node ID, holding port 23456 as "http".
func Alloc(opts ...AllocOption) *structs.Allocation {
	now := time.Now().UnixNano()
	a := &structs.Allocation{
		ID:            structs.GenerateUUID(),
		EvalID:        structs.GenerateUUID(),
		NodeID:        structs.GenerateUUID(),
		NodeName:      "node",
		DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:  structs.AllocClientStatusPending,
		Metrics:       &structs.AllocMetric{},
		CreateTime:    now,
		ModifyTime:    now,
	}
	j := Job()
	setJob(a, j, j.TaskGroups[0].Name, 0)
	for _, o := range opts {
		o(a)
	}
	return a
}

// setJob points the alloc at instance index of the job's named group and
// grants it what the group asks for.
func setJob(a *structs.Allocation, j *structs.Job, group string, index int) {
	tg := j.LookupTaskGroup(group)
	a.Namespace, a.JobID, a.Job, a.TaskGroup = j.Namespace, j.ID, j, tg.Name
	a.Name = structs.AllocName(j.ID, tg.Name, index)
	ar := &structs.AllocatedResources{
		Tasks:          map[string]*structs.AllocatedTaskResources{},
		TaskLifecycles: map[string]*structs.TaskLifecycleConfig{},
	}
	if tg.EphemeralDisk != nil {
		ar.Shared.DiskMB = int64(tg.EphemeralDisk.SizeMB)
	}
	for _, t := range tg.Tasks {
		tr := &structs.AllocatedTaskResources{}
		if t.Resources != nil {
			tr.Cpu.CpuShares = int64(t.Resources.CPU)
			tr.Memory.MemoryMB = int64(t.Resources.MemoryMB)
		}
		ar.Tasks[t.Name] = tr
		ar.TaskLifecycles[t.Name] = t.Lifecycle
	}
	for i, n := range tg.Networks {
		for _, p := range n.DynamicPorts {
			ar.Shared.Ports = append(ar.Shared.Ports, structs.AllocatedPortMapping{
				Label: p.Label, Value: 23456 + i, To: 23456 + i, HostIP: NodeIP,
			})
		}
	}
	a.AllocatedResources = ar
}

// EvalOption changes an eval after it was built.
type EvalOption func(*structs.Evaluation)

// EvalForJob makes the eval one of the job: ID, namespace, type,
// priority and the job modify index it was created at.
func EvalForJob(j *structs.Job) EvalOption {
	return func(e *structs.Evaluation) {
		e.JobID, e.Namespace, e.Type, e.Priority = j.ID, j.Namespace, j.Type, j.Priority
		e.JobModifyIndex = j.JobModifyIndex
	}
}

// EvalStatus sets the eval status.
func EvalStatus(s string) EvalOption { return func(e *structs.Evaluation) { e.Status = s } }

// TriggeredBy sets what triggered the eval.
func TriggeredBy(t string) EvalOption { return func(e *structs.Evaluation) { e.TriggeredBy = t } }

// Eval returns a pending job-register eval of a service job.
func Eval(opts ...EvalOption) *structs.Evaluation {
	now := time.Now().UnixNano()
	e := &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   structs.DefaultNamespace,
		Priority:    structs.JobDefaultPriority,
		Type:        structs.JobTypeService,
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       structs.GenerateUUID(),
		Status:      structs.EvalStatusPending,
		CreateTime:  now,
		ModifyTime:  now,
	}
	for _, o := range opts {
		o(e)
	}
	return e
}
