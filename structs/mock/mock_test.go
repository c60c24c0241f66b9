package mock_test

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestFixturesAreValidAndFit(t *testing.T) {
	for _, j := range []*structs.Job{mock.Job(), mock.BatchJob(), mock.SystemJob(), mock.SysBatchJob()} {
		if err := j.Validate(); err != nil {
			t.Errorf("%s: %v", j.Type, err)
		}
	}
	node := mock.Node()
	if !node.Ready() || node.ComputedClass == "" || node.NodePool != "default" {
		t.Errorf("node not ready: %+v", node)
	}
	job := mock.Job()
	var allocs []*structs.Allocation
	for i := range 3 {
		a := mock.Alloc(mock.ForJob(job, i), mock.OnNode(node))
		a.AllocatedResources.Shared.Ports[0].Value += i
		allocs = append(allocs, a)
	}
	// 3 x 500 MHz = 1500 <= 4000 - 100; 3 x 256 MB = 768 <= 8192 - 256
	if fit, dim, _ := structs.AllocsFit(node, allocs); !fit {
		t.Fatalf("mock allocs do not fit the mock node: %s", dim)
	}
	if allocs[2].Name != job.ID+".web[2]" || allocs[2].JobID != job.ID || allocs[2].NodeID != node.ID {
		t.Errorf("alloc %+v", allocs[2])
	}
}

func TestOptions(t *testing.T) {
	j := mock.Job(mock.JobID("api"), mock.Count(7), mock.Priority(80), mock.Datacenters("a", "b"), mock.TaskResources(1000, 2048))
	task := j.TaskGroups[0].Tasks[0]
	if j.ID != "api" || j.Name != "api" || j.TaskGroups[0].Count != 7 || j.Priority != 80 || len(j.Datacenters) != 2 ||
		task.Resources.CPU != 1000 || task.Resources.MemoryMB != 2048 {
		t.Errorf("job options not applied: %+v", j)
	}
	n := mock.Node(mock.NodeResources(8000, 16384), mock.Datacenter("dc2"), mock.NodeClass("gpu"), mock.NodePool("p"),
		mock.Attr("gpu", "1"), mock.Meta("rack", "r9"), mock.NodeStatus(structs.NodeStatusDown))
	plain := mock.Node()
	if n.NodeResources.Cpu.CpuShares != 8000 || n.Datacenter != "dc2" || n.NodeClass != "gpu" || n.NodePool != "p" ||
		n.Attributes["gpu"] != "1" || n.Meta["rack"] != "r9" || n.Status != "down" || n.ComputedClass == plain.ComputedClass {
		t.Errorf("node options not applied: %+v", n)
	}
	a := mock.Alloc(mock.ClientStatus(structs.AllocClientStatusRunning), mock.DesiredStatus(structs.AllocDesiredStatusStop))
	if a.ClientStatus != "running" || a.DesiredStatus != "stop" {
		t.Errorf("alloc options not applied: %+v", a)
	}
	e := mock.Eval(mock.EvalForJob(j), mock.EvalStatus(structs.EvalStatusBlocked), mock.TriggeredBy(structs.EvalTriggerNodeUpdate))
	if e.JobID != "api" || e.Priority != 80 || e.Status != "blocked" || e.TriggeredBy != "node-update" {
		t.Errorf("eval options not applied: %+v", e)
	}
}

func TestFreshIDs(t *testing.T) {
	if mock.Job().ID == mock.Job().ID || mock.Node().ID == mock.Node().ID || mock.Alloc().ID == mock.Alloc().ID ||
		mock.Eval().ID == mock.Eval().ID {
		t.Fatal("fixtures share IDs")
	}
}

func TestSchedulerOptions(t *testing.T) {
	j := mock.Job(mock.Count(10), mock.NoPorts(), mock.TaskDriver("exec"), mock.GroupName("api"))
	tg := j.TaskGroups[0]
	if tg.Count != 10 || len(tg.Networks) != 0 || tg.Tasks[0].Driver != "exec" || tg.Name != "api" {
		t.Errorf("job options not applied: %+v", tg)
	}
	n := mock.Node(mock.Unreserved(), mock.NodeID(mock.IDFor(7)), mock.CPUShares(2000), mock.MemoryMB(1024), mock.Cores(2),
		mock.Draining(), mock.NoNodeDriver("exec"))
	if n.ID != mock.IDFor(7) || mock.IDFor(7) >= mock.IDFor(8) || n.ReservedResources.Cpu.CpuShares != 0 ||
		n.ReservedResources.Networks.ReservedHostPorts != "" || n.NodeResources.Cpu.CpuShares != 2000 ||
		n.NodeResources.Memory.MemoryMB != 1024 || len(n.NodeResources.Cpu.ReservableCpuCores) != 2 ||
		n.DrainStrategy == nil || n.Drivers["exec"] != nil || n.Attributes["driver.exec"] != "" {
		t.Errorf("node options not applied: %+v", n)
	}
	a := mock.Alloc(mock.ForGroup(j, "api", 3), mock.OnNode(n))
	if a.TaskGroup != "api" || a.Name != j.ID+".api[3]" || len(a.AllocatedResources.Shared.Ports) != 0 {
		t.Errorf("alloc %+v", a)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if f := mock.MarkFailed(a, at); f.ClientStatus != "failed" || !f.TaskStates["web"].Failed || !f.TaskStates["web"].FinishedAt.Equal(at) {
		t.Errorf("failed %+v", f.TaskStates)
	}
	if c := mock.MarkComplete(a, at); c.ClientStatus != "complete" || c.TaskStates["web"].Failed {
		t.Errorf("complete %+v", c.TaskStates)
	}
}
