package scheduler

import (
	"testing"

	"github.com/opennomad/nomad/scheduler/schedtest"
	"github.com/opennomad/nomad/structs"
)

// markMigrate writes the alloc with DesiredTransition.Migrate set, as the
// drainer and the Alloc.Stop endpoint do.
func markMigrate(a *structs.Allocation) *structs.Allocation {
	yes := true
	a.DesiredTransition.Migrate = &yes
	return a
}

// A drain's deadline must be able to empty a node even when the cluster
// has no room for the replacements: the stop is committed, and the
// replacement waits in a blocked eval until room appears.
func TestServiceMigrationStopsWithoutRoom(t *testing.T) {
	h := NewHarness(t)
	draining := schedtest.Node()
	full := schedtest.MakeNode().CPU(600).Obj() // room for one alloc of 500 MHz
	h.UpsertNode(draining, full)
	job := schedtest.Job()
	job.TaskGroups[0].Count = 2
	h.UpsertJob(job)
	a0, a1 := schedtest.Alloc(job, full, 0), markMigrate(schedtest.Alloc(job, draining, 1))
	h.UpsertAllocs(a0, a1)
	h.DrainNode(draining.ID)

	if err := h.Process(schedtest.Eval(job, structs.EvalTriggerNodeDrain)); err != nil {
		t.Fatal(err)
	}
	old := h.alloc(a1.ID)
	if old.DesiredStatus != structs.AllocDesiredStatusStop || old.DesiredDescription != structs.AllocMigrating {
		t.Fatalf("migrated alloc: desired %s %q", old.DesiredStatus, old.DesiredDescription)
	}
	e := h.lastEval(t)
	if e.Status != structs.EvalStatusComplete || e.FailedTGAllocs["web"] == nil || e.QueuedAllocations["web"] != 1 {
		t.Fatalf("eval %s failed %v queued %v", e.Status, e.FailedTGAllocs, e.QueuedAllocations)
	}
	if len(h.Created) != 1 || h.Created[0].Status != structs.EvalStatusBlocked || e.BlockedEval != h.Created[0].ID {
		t.Fatalf("want one blocked eval, created %+v", h.Created)
	}

	// Room appears; the blocked eval places the missing name afresh.
	h.UpsertNode(schedtest.Node())
	blocked := h.Created[0].Copy()
	if err := h.Process(blocked); err != nil {
		t.Fatal(err)
	}
	live := h.liveAllocs(job)
	if len(live) != 2 {
		t.Fatalf("live %d, want 2", len(live))
	}
	for _, a := range live {
		if a.NodeID == draining.ID {
			t.Fatalf("placed on the draining node: %s", a.Name)
		}
	}
}

// The Alloc.Stop endpoint marks the alloc for migration on a node that is
// not draining, with an alloc-stop eval: the alloc is stopped and replaced.
func TestServiceAllocStopOnReadyNode(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 2)
	job := schedtest.Job()
	job.TaskGroups[0].Count = 2
	h.UpsertJob(job)
	a0, a1 := schedtest.Alloc(job, nodes[0], 0), markMigrate(schedtest.Alloc(job, nodes[1], 1))
	h.UpsertAllocs(a0, a1)
	eval := schedtest.Eval(job, structs.EvalTriggerAllocStop)
	eval.AnnotatePlan = true

	if err := h.Process(eval); err != nil {
		t.Fatal(err)
	}
	if old := h.alloc(a1.ID); old.DesiredDescription != structs.AllocMigrating || old.NextAllocation == "" {
		t.Fatalf("stopped alloc: %q next %q", old.DesiredDescription, old.NextAllocation)
	}
	live := h.liveAllocs(job)
	if len(live) != 2 {
		t.Fatalf("live %d, want 2", len(live))
	}
	for _, a := range live {
		if a.ID != a0.ID && (a.Name != a1.Name || a.PreviousAllocation != a1.ID) {
			t.Fatalf("replacement %s previous %s", a.Name, a.PreviousAllocation)
		}
	}
	if du := h.lastEval(t).PlanAnnotations.DesiredTGUpdates["web"]; du.Migrate != 1 || du.Place != 0 || du.Ignore != 1 {
		t.Fatalf("annotations %+v", du)
	}
}

// A system alloc stopped by an operator on a ready node is replaced on
// that node; one marked on a draining node is only stopped.
func TestSystemMigrations(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 2)
	job := schedtest.SystemJob()
	h.UpsertJob(job)
	onReady, onDraining := markMigrate(schedtest.Alloc(job, nodes[0], 0)), markMigrate(schedtest.Alloc(job, nodes[1], 0))
	h.UpsertAllocs(onReady, onDraining)
	h.DrainNode(nodes[1].ID)
	eval := schedtest.Eval(job, structs.EvalTriggerAllocStop)
	eval.AnnotatePlan = true

	if err := h.Process(eval); err != nil {
		t.Fatal(err)
	}
	for _, a := range []*structs.Allocation{onReady, onDraining} {
		if got := h.alloc(a.ID); got.DesiredDescription != structs.AllocMigrating {
			t.Fatalf("alloc on %s: %q", a.NodeID, got.DesiredDescription)
		}
	}
	by := allocsByNode(h, job)
	if len(by[nodes[0].ID]) != 1 || by[nodes[0].ID][0].ID == onReady.ID || len(by[nodes[1].ID]) != 0 {
		t.Fatalf("live allocs by node: %v", by)
	}
	if du := h.lastEval(t).PlanAnnotations.DesiredTGUpdates["web"]; du.Migrate != 2 || du.Place != 1 {
		t.Fatalf("annotations %+v", du)
	}
}
