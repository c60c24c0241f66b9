package scheduler

import (
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
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
	draining := mock.Node(mock.Unreserved())
	full := mock.Node(mock.Unreserved(), mock.CPUShares(600)) // room for one alloc of 500 MHz
	h.UpsertNode(draining, full)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 2
	h.UpsertJob(job)
	a0, a1 := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(full), mock.ClientStatus(structs.AllocClientStatusRunning)), markMigrate(mock.Alloc(mock.ForJob(job, 1), mock.OnNode(draining), mock.ClientStatus(structs.AllocClientStatusRunning)))
	h.UpsertAllocs(a0, a1)
	h.DrainNode(draining.ID)

	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerNodeDrain))); err != nil {
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
	h.UpsertNode(mock.Node(mock.Unreserved()))
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
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 2
	h.UpsertJob(job)
	a0, a1 := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning)), markMigrate(mock.Alloc(mock.ForJob(job, 1), mock.OnNode(nodes[1]), mock.ClientStatus(structs.AllocClientStatusRunning)))
	h.UpsertAllocs(a0, a1)
	eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerAllocStop))
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
	job := mock.SystemJob(mock.GroupName("web"))
	h.UpsertJob(job)
	onReady, onDraining := markMigrate(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning))), markMigrate(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[1]), mock.ClientStatus(structs.AllocClientStatusRunning)))
	h.UpsertAllocs(onReady, onDraining)
	h.DrainNode(nodes[1].ID)
	eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerAllocStop))
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
