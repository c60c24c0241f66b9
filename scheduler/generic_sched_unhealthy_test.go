package scheduler

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// unhealthyRollout stores a job of count 3 rolled out under a running
// deployment with a progress deadline, one alloc per node, the alloc on
// the first node judged unhealthy a minute ago while it keeps running.
func unhealthyRollout(h *Harness, nodes []*structs.Node) (*structs.Job, *structs.Deployment, []*structs.Allocation) {
	job := mock.Job(mock.Count(10), mock.NoPorts())
	tg := job.TaskGroups[0]
	tg.Count = 3
	tg.Update = &structs.UpdateStrategy{MaxParallel: 1, ProgressDeadline: 10 * time.Minute}
	tg.ReschedulePolicy = &structs.ReschedulePolicy{Delay: 5 * time.Second,
		DelayFunction: structs.RescheduleDelayConstant, Unlimited: true}
	h.UpsertJob(job)
	job, _ = h.Snapshot().JobByID(job.Namespace, job.ID)
	d := structs.NewDeployment(job, 50, h.Now.Add(-time.Hour))
	d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 3, ProgressDeadline: 10 * time.Minute}
	h.write(func(tx *state.Txn) error { return tx.UpsertDeployment(d) })
	yes, no := true, false
	var allocs []*structs.Allocation
	for i, n := range nodes[:3] {
		a := mock.Alloc(mock.ForJob(job, i), mock.OnNode(n), mock.ClientStatus(structs.AllocClientStatusRunning))
		a.DeploymentID = d.ID
		a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &yes, Timestamp: h.Now.Add(-time.Hour)}
		allocs = append(allocs, a)
	}
	allocs[0].DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &no, Timestamp: h.Now.Add(-time.Minute)}
	h.UpsertAllocs(allocs...)
	return job, d, allocs
}

func TestServiceReplacesARunningUnhealthyAlloc(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 4)
	job, d, allocs := unhealthyRollout(h, nodes)
	bad := allocs[0]

	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerDeploymentWatcher))); err != nil {
		t.Fatal(err)
	}
	if old := h.alloc(bad.ID); old.DesiredStatus != structs.AllocDesiredStatusStop ||
		old.DesiredDescription != structs.AllocRescheduled {
		t.Fatalf("unhealthy alloc: %s %q", old.DesiredStatus, old.DesiredDescription)
	}
	live := h.liveAllocs(job)
	if len(live) != 3 {
		t.Fatalf("live %d", len(live))
	}
	var repl *structs.Allocation
	for _, a := range live {
		if a.PreviousAllocation == bad.ID {
			repl = a
		}
	}
	if repl == nil || repl.Name != bad.Name || repl.DeploymentID != d.ID || repl.NodeID == bad.NodeID {
		t.Fatalf("replacement %+v", repl)
	}
	if tr := repl.RescheduleTracker; tr == nil || len(tr.Events) != 1 || tr.Events[0].PrevAllocID != bad.ID {
		t.Fatalf("reschedule tracker %+v", repl.RescheduleTracker)
	}
}

// With nowhere to go, the unhealthy alloc keeps running: stopping it
// would only leave its name empty.
func TestServiceKeepsAnUnhealthyAllocWithoutRoom(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 3)
	job, _, allocs := unhealthyRollout(h, nodes)
	// Every node is full: 3600 MHz of filler plus 500 leaves no room for
	// another 500, not even on the bad alloc's own node once it stops
	// (a node that failed an alloc is avoided, not excluded).
	filler := mock.Job(mock.Count(10), mock.NoPorts())
	filler.TaskGroups[0].Tasks[0].Resources.CPU = 3600
	h.UpsertJob(filler)
	for i, n := range nodes {
		h.UpsertAllocs(mock.Alloc(mock.ForJob(filler, i), mock.OnNode(n), mock.ClientStatus(structs.AllocClientStatusRunning)))
	}

	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerDeploymentWatcher))); err != nil {
		t.Fatal(err)
	}
	if old := h.alloc(allocs[0].ID); old.DesiredStatus != structs.AllocDesiredStatusRun {
		t.Fatalf("unhealthy alloc stopped without a replacement: %q", old.DesiredDescription)
	}
	if e := h.lastEval(t); e.FailedTGAllocs["web"] == nil || len(h.Created) != 1 {
		t.Fatalf("want the failed replacement reported and blocked: failed %v created %d", e.FailedTGAllocs, len(h.Created))
	}
}
