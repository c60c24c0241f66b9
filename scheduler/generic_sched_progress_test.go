package scheduler

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// A deployment's progress deadline runs from the group's first placed
// alloc, not from the deployment's creation: a job registered on a full
// cluster waits in its blocked eval for as long as it takes, and its
// deployment must not fail meanwhile (a failed deployment places no new
// allocs, so the job would be left with none and no blocked eval).
func TestServiceProgressDeadlineStartsWithTheFirstPlacement(t *testing.T) {
	h := NewHarness(t)
	addNodes(h, 1)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	tg := job.TaskGroups[0]
	tg.Count = 2
	tg.Update = &structs.UpdateStrategy{MaxParallel: 1, ProgressDeadline: 10 * time.Minute}
	// Larger than the node: nothing fits until a larger node comes.
	tg.Tasks[0].Resources.CPU = 100_000
	h.UpsertJob(job)

	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	if n := len(h.allocs(job)); n != 0 {
		t.Fatalf("placed %d allocs on a full cluster", n)
	}
	if len(h.Created) != 1 || h.Created[0].Status != structs.EvalStatusBlocked {
		t.Fatalf("want one blocked eval, created %+v", h.Created)
	}
	d, err := h.Snapshot().LatestDeploymentByJobID(job.Namespace, job.ID)
	if err != nil || d == nil {
		t.Fatalf("deployment: %v, %v", d, err)
	}
	if st := d.TaskGroups["web"]; st == nil || st.ProgressDeadline != 10*time.Minute || !st.RequireProgressBy.IsZero() {
		t.Fatalf("before any placement: group state %+v, want the deadline set and not started", st)
	}

	// An hour later a node with room joins; the blocked eval places, and
	// the deadline starts with that placement.
	h.Now = h.Now.Add(time.Hour)
	h.UpsertNode(mock.Node(mock.Unreserved(), mock.NodeResources(1_000_000, 100_000)))
	blocked := h.Created[0].Copy()
	if err := h.Process(blocked); err != nil {
		t.Fatal(err)
	}
	if n := len(h.liveAllocs(job)); n != 2 {
		t.Fatalf("placed %d, want 2", n)
	}
	d, _ = h.Snapshot().LatestDeploymentByJobID(job.Namespace, job.ID)
	st := d.TaskGroups["web"]
	if st.RequireProgressBy.Before(h.Now.Add(10*time.Minute)) || d.Status != structs.DeploymentStatusRunning {
		t.Fatalf("after placing at %v: deployment %s, RequireProgressBy %v", h.Now, d.Status, st.RequireProgressBy)
	}
}
