package scheduler

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func allocsByNode(h *Harness, job *structs.Job) map[string][]*structs.Allocation {
	out := map[string][]*structs.Allocation{}
	for _, a := range h.liveAllocs(job) {
		out[a.NodeID] = append(out[a.NodeID], a)
	}
	return out
}

func TestSystemPlacesOnEveryEligibleNode(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 3)
	windows := mock.Node(mock.Unreserved(), mock.Attr("kernel.name", "windows"))
	h.UpsertNode(windows)
	job := mock.SystemJob(mock.GroupName("web"))
	job.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}}
	h.UpsertJob(job)
	eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))
	eval.AnnotatePlan = true
	if err := h.Process(eval); err != nil {
		t.Fatal(err)
	}
	by := allocsByNode(h, job)
	if len(by) != 3 || by[windows.ID] != nil {
		t.Fatalf("placed on %d nodes", len(by))
	}
	for _, n := range nodes {
		if len(by[n.ID]) != 1 || by[n.ID][0].Name != job.ID+".web[0]" {
			t.Fatalf("node %s: %v", n.ID, by[n.ID])
		}
	}
	e := h.lastEval(t)
	if e.Status != structs.EvalStatusComplete || len(e.FailedTGAllocs) != 0 || e.QueuedAllocations["web"] != 0 {
		t.Fatalf("eval %+v", e)
	}
	if du := e.PlanAnnotations.DesiredTGUpdates["web"]; du.Place != 3 {
		t.Fatalf("annotations %+v", du)
	}
	if len(h.Created) != 0 {
		t.Fatal("a filtered node is not a failure")
	}
}

func TestSystemNodeAddAndRemove(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 2)
	job := mock.SystemJob(mock.GroupName("web"))
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	// A node joins: only it gets a new alloc.
	added := mock.Node(mock.Unreserved())
	h.UpsertNode(added)
	ev := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerNodeUpdate))
	ev.NodeID = added.ID
	if err := h.Process(ev); err != nil {
		t.Fatal(err)
	}
	last := h.Plans[len(h.Plans)-1]
	if len(last.NodeAllocation) != 1 || len(last.NodeAllocation[added.ID]) != 1 || len(last.NodeUpdate) != 0 {
		t.Fatalf("node add plan: alloc %v update %v", last.NodeAllocation, last.NodeUpdate)
	}
	// A node goes down: its alloc is lost, nothing replaces it elsewhere.
	down := nodes[0]
	h.SetNodeStatus(down.ID, structs.NodeStatusDown)
	ev = mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerNodeUpdate))
	ev.NodeID = down.ID
	if err := h.Process(ev); err != nil {
		t.Fatal(err)
	}
	last = h.Plans[len(h.Plans)-1]
	if len(last.NodeAllocation) != 0 || len(last.NodeUpdate[down.ID]) != 1 ||
		last.NodeUpdate[down.ID][0].ClientStatus != structs.AllocClientStatusLost {
		t.Fatalf("node down plan: alloc %v update %v", last.NodeAllocation, last.NodeUpdate)
	}
	if by := allocsByNode(h, job); len(by) != 2 || by[down.ID] != nil {
		t.Fatalf("live on %d nodes", len(by))
	}
}

func TestSystemStopJob(t *testing.T) {
	h := NewHarness(t)
	addNodes(h, 2)
	job := mock.SystemJob(mock.GroupName("web"))
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	stopped, _ := h.Snapshot().JobByID(job.Namespace, job.ID)
	stopped = stopped.Copy()
	stopped.Stop = true
	h.UpsertJob(stopped)
	if err := h.Process(mock.Eval(mock.EvalForJob(stopped), mock.TriggeredBy(structs.EvalTriggerJobDeregister))); err != nil {
		t.Fatal(err)
	}
	if n := len(h.liveAllocs(job)); n != 0 {
		t.Fatalf("%d allocs left", n)
	}
}

func TestSysBatchRunsOncePerNode(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 2)
	job := mock.SysBatchJob(mock.GroupName("web"))
	h.UpsertJob(job)
	snapJob := job
	done := mock.MarkComplete(mock.Alloc(mock.ForJob(snapJob, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning)), h.Now)
	failed := mock.MarkFailed(mock.Alloc(mock.ForJob(snapJob, 0), mock.OnNode(nodes[1]), mock.ClientStatus(structs.AllocClientStatusRunning)), h.Now)
	h.UpsertAllocs(done, failed)
	newNode := mock.Node(mock.Unreserved())
	h.UpsertNode(newNode)
	if err := h.Process(mock.Eval(mock.EvalForJob(snapJob), mock.TriggeredBy(structs.EvalTriggerNodeUpdate))); err != nil {
		t.Fatal(err)
	}
	if len(h.Plans) != 1 {
		t.Fatalf("plans %d", len(h.Plans))
	}
	p := h.Plans[0]
	if len(p.NodeAllocation) != 1 || p.NodeAllocation[newNode.ID] == nil {
		t.Fatalf("sysbatch must run only on the new node: %v", p.NodeAllocation)
	}
}

func TestSystemExhaustedNodeBlocks(t *testing.T) {
	h := NewHarness(t)
	big := mock.Node(mock.Unreserved())
	small := mock.Node(mock.Unreserved(), mock.CPUShares(200))
	h.UpsertNode(big, small)
	job := mock.SystemJob(mock.GroupName("web"))
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	e := h.lastEval(t)
	m := e.FailedTGAllocs["web"]
	if m == nil || m.NodesExhausted != 1 || m.DimensionExhausted["cpu"] != 1 || e.QueuedAllocations["web"] != 1 {
		t.Fatalf("eval %+v metric %+v", e, m)
	}
	if len(h.Created) != 1 || h.Created[0].NodeID != small.ID || h.Created[0].Status != structs.EvalStatusBlocked ||
		e.BlockedEval != h.Created[0].ID {
		t.Fatalf("blocked evals %+v", h.Created)
	}
}

func TestSystemPreemptsLowerPriority(t *testing.T) {
	h := NewHarness(t)
	node := mock.Node(mock.Unreserved(), mock.CPUShares(1000))
	h.UpsertNode(node)
	low := mock.Job(mock.Count(10), mock.NoPorts())
	low.Priority = 30
	low.TaskGroups[0].Tasks[0].Resources.CPU = 900
	h.UpsertJob(low)
	h.UpsertAllocs(mock.Alloc(mock.ForJob(low, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning)))
	job := mock.SystemJob(mock.GroupName("web"))
	job.Priority = 70
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	p := h.Plans[0]
	if len(p.NodePreemptions[node.ID]) != 1 || len(p.NodeAllocation[node.ID]) != 1 {
		t.Fatalf("preemptions %v allocs %v", p.NodePreemptions, p.NodeAllocation)
	}
	if len(h.Overcommits) != 0 {
		t.Fatal(h.Overcommits)
	}
}

func TestSystemRollingUpdate(t *testing.T) {
	h := NewHarness(t)
	addNodes(h, 3)
	job := mock.SystemJob(mock.GroupName("web"))
	job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Stagger: 30 * time.Second}
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	cur, _ := h.Snapshot().JobByID(job.Namespace, job.ID)
	update := cur.Copy()
	update.TaskGroups[0].Tasks[0].Env["V"] = "2"
	h.UpsertJob(update)
	ev := mock.Eval(mock.EvalForJob(update), mock.TriggeredBy(structs.EvalTriggerJobRegister))
	if err := h.Process(ev); err != nil {
		t.Fatal(err)
	}
	p := h.Plans[len(h.Plans)-1]
	stops, places := 0, 0
	for _, v := range p.NodeUpdate {
		stops += len(v)
	}
	for _, v := range p.NodeAllocation {
		places += len(v)
	}
	if stops != 1 || places != 1 {
		t.Fatalf("stops %d places %d", stops, places)
	}
	next := h.Created[len(h.Created)-1]
	if next.TriggeredBy != structs.EvalTriggerRollingUpdate || next.Wait != 30*time.Second || h.lastEval(t).NextEval != next.ID {
		t.Fatalf("next eval %+v", next)
	}
}

func TestSystemConstraintChangeStopsAlloc(t *testing.T) {
	h := NewHarness(t)
	linux := mock.Node(mock.Unreserved())
	other := mock.Node(mock.Unreserved(), mock.Meta("tier", "edge"))
	h.UpsertNode(linux, other)
	job := mock.SystemJob(mock.GroupName("web"))
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	cur, _ := h.Snapshot().JobByID(job.Namespace, job.ID)
	update := cur.Copy()
	update.Constraints = []*structs.Constraint{{LTarget: "${meta.tier}", RTarget: "edge", Operand: "="}}
	h.UpsertJob(update)
	if err := h.Process(mock.Eval(mock.EvalForJob(update), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	by := allocsByNode(h, job)
	if len(by) != 1 || by[other.ID] == nil {
		t.Fatalf("live allocs on %d nodes", len(by))
	}
}
