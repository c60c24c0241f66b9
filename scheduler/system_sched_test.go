package scheduler

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/scheduler/schedtest"
	"github.com/opennomad/nomad/structs"
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
	windows := schedtest.MakeNode().Attr("kernel.name", "windows").Obj()
	h.UpsertNode(windows)
	job := schedtest.SystemJob()
	job.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}}
	h.UpsertJob(job)
	eval := schedtest.Eval(job, structs.EvalTriggerJobRegister)
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
	job := schedtest.SystemJob()
	h.UpsertJob(job)
	if err := h.Process(schedtest.Eval(job, structs.EvalTriggerJobRegister)); err != nil {
		t.Fatal(err)
	}
	// A node joins: only it gets a new alloc.
	added := schedtest.Node()
	h.UpsertNode(added)
	ev := schedtest.Eval(job, structs.EvalTriggerNodeUpdate)
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
	ev = schedtest.Eval(job, structs.EvalTriggerNodeUpdate)
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
	job := schedtest.SystemJob()
	h.UpsertJob(job)
	if err := h.Process(schedtest.Eval(job, structs.EvalTriggerJobRegister)); err != nil {
		t.Fatal(err)
	}
	stopped, _ := h.Snapshot().JobByID(job.Namespace, job.ID)
	stopped = stopped.Copy()
	stopped.Stop = true
	h.UpsertJob(stopped)
	if err := h.Process(schedtest.Eval(stopped, structs.EvalTriggerJobDeregister)); err != nil {
		t.Fatal(err)
	}
	if n := len(h.liveAllocs(job)); n != 0 {
		t.Fatalf("%d allocs left", n)
	}
}

func TestSysBatchRunsOncePerNode(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 2)
	job := schedtest.SysBatchJob()
	h.UpsertJob(job)
	snapJob := job
	done := schedtest.Complete(schedtest.Alloc(snapJob, nodes[0], 0), h.Now)
	failed := schedtest.Failed(schedtest.Alloc(snapJob, nodes[1], 0), h.Now)
	h.UpsertAllocs(done, failed)
	newNode := schedtest.Node()
	h.UpsertNode(newNode)
	if err := h.Process(schedtest.Eval(snapJob, structs.EvalTriggerNodeUpdate)); err != nil {
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
	big := schedtest.Node()
	small := schedtest.MakeNode().CPU(200).Obj()
	h.UpsertNode(big, small)
	job := schedtest.SystemJob()
	h.UpsertJob(job)
	if err := h.Process(schedtest.Eval(job, structs.EvalTriggerJobRegister)); err != nil {
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
	node := schedtest.MakeNode().CPU(1000).Obj()
	h.UpsertNode(node)
	low := schedtest.Job()
	low.Priority = 30
	low.TaskGroups[0].Tasks[0].Resources.CPU = 900
	h.UpsertJob(low)
	h.UpsertAllocs(schedtest.Alloc(low, node, 0))
	job := schedtest.SystemJob()
	job.Priority = 70
	h.UpsertJob(job)
	if err := h.Process(schedtest.Eval(job, structs.EvalTriggerJobRegister)); err != nil {
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
	job := schedtest.SystemJob()
	job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Stagger: 30 * time.Second}
	h.UpsertJob(job)
	if err := h.Process(schedtest.Eval(job, structs.EvalTriggerJobRegister)); err != nil {
		t.Fatal(err)
	}
	cur, _ := h.Snapshot().JobByID(job.Namespace, job.ID)
	update := cur.Copy()
	update.TaskGroups[0].Tasks[0].Env["V"] = "2"
	h.UpsertJob(update)
	ev := schedtest.Eval(update, structs.EvalTriggerJobRegister)
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
	linux := schedtest.Node()
	other := schedtest.MakeNode().Meta("tier", "edge").Obj()
	h.UpsertNode(linux, other)
	job := schedtest.SystemJob()
	h.UpsertJob(job)
	if err := h.Process(schedtest.Eval(job, structs.EvalTriggerJobRegister)); err != nil {
		t.Fatal(err)
	}
	cur, _ := h.Snapshot().JobByID(job.Namespace, job.ID)
	update := cur.Copy()
	update.Constraints = []*structs.Constraint{{LTarget: "${meta.tier}", RTarget: "edge", Operand: "="}}
	h.UpsertJob(update)
	if err := h.Process(schedtest.Eval(update, structs.EvalTriggerJobRegister)); err != nil {
		t.Fatal(err)
	}
	by := allocsByNode(h, job)
	if len(by) != 1 || by[other.ID] == nil {
		t.Fatalf("live allocs on %d nodes", len(by))
	}
}
