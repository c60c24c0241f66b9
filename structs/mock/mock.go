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
// The package is imported only by tests; it holds no test-only imports
// itself, so importing it never pulls testing code into a binary.
package mock

import (
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
	return func(a *structs.Allocation) { setJob(a, j, index) }
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
	setJob(a, Job(), 0)
	for _, o := range opts {
		o(a)
	}
	return a
}

// setJob points the alloc at instance index of the job's first group and
// grants it what the group asks for.
func setJob(a *structs.Allocation, j *structs.Job, index int) {
	tg := j.TaskGroups[0]
	a.Namespace, a.JobID, a.Job, a.TaskGroup = j.Namespace, j.ID, j, tg.Name
	a.Name = structs.AllocName(j.ID, tg.Name, index)
	ar := &structs.AllocatedResources{
		Tasks:  map[string]*structs.AllocatedTaskResources{},
		Shared: structs.AllocatedSharedResources{DiskMB: int64(tg.EphemeralDisk.SizeMB)},
	}
	for _, t := range tg.Tasks {
		ar.Tasks[t.Name] = &structs.AllocatedTaskResources{
			Cpu:    structs.AllocatedCpuResources{CpuShares: int64(t.Resources.CPU)},
			Memory: structs.AllocatedMemoryResources{MemoryMB: int64(t.Resources.MemoryMB)},
		}
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

// EvalForJob makes the eval one of the job: ID, namespace, type, priority.
func EvalForJob(j *structs.Job) EvalOption {
	return func(e *structs.Evaluation) {
		e.JobID, e.Namespace, e.Type, e.Priority = j.ID, j.Namespace, j.Type, j.Priority
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
