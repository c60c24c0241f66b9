package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// addNodes registers n default nodes.
func addNodes(h *Harness, n int) []*structs.Node {
	var nodes []*structs.Node
	for range n {
		nodes = append(nodes, mock.Node(mock.Unreserved()))
	}
	h.UpsertNode(nodes...)
	return nodes
}

func TestServiceRegisterPlacesAll(t *testing.T) {
	h := NewHarness(t)
	addNodes(h, 10)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	h.UpsertJob(job)
	eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))
	eval.AnnotatePlan = true
	if err := h.Process(eval); err != nil {
		t.Fatal(err)
	}
	if len(h.Plans) != 1 {
		t.Fatalf("plans %d", len(h.Plans))
	}
	allocs := h.liveAllocs(job)
	if len(allocs) != 10 {
		t.Fatalf("placed %d", len(allocs))
	}
	seen := map[string]bool{}
	for _, a := range allocs {
		if seen[a.Name] {
			t.Fatalf("duplicate name %s", a.Name)
		}
		seen[a.Name] = true
		if a.Metrics == nil || len(a.Metrics.ScoreMetaData) == 0 || a.Metrics.NodesEvaluated == 0 {
			t.Fatalf("alloc without explanation: %+v", a.Metrics)
		}
		if a.EvalID != eval.ID || a.ClientStatus != structs.AllocClientStatusPending || a.DesiredStatus != structs.AllocDesiredStatusRun {
			t.Fatalf("alloc fields %+v", a)
		}
	}
	e := h.lastEval(t)
	if e.Status != structs.EvalStatusComplete || e.QueuedAllocations["web"] != 0 || len(e.FailedTGAllocs) != 0 {
		t.Fatalf("eval %+v", e)
	}
	if du := e.PlanAnnotations.DesiredTGUpdates["web"]; du.Place != 10 {
		t.Fatalf("annotations %+v", du)
	}
	if len(h.Overcommits) != 0 {
		t.Fatal(h.Overcommits)
	}
}

func TestServiceDeterministicPlacement(t *testing.T) {
	run := func() []string {
		h := NewHarness(t)
		for i := range 20 {
			h.UpsertNode(mock.Node(mock.Unreserved(), mock.NodeID(mock.IDFor(uint64(1000+i)))))
		}
		job := mock.Job(mock.Count(10), mock.NoPorts())
		job.ID = "same"
		h.UpsertJob(job)
		eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))
		eval.ID = "same-eval"
		if err := h.Process(eval); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range h.Plans[0].NodeAllocation {
			for _, x := range a {
				out = append(out, x.Name+"@"+x.NodeID)
			}
		}
		return sortedStrings(out)
	}
	a, b := run(), run()
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("same eval placed differently:\n%v\n%v", a, b)
	}
}

func TestServiceCapacityExhaustedBlocks(t *testing.T) {
	h := NewHarness(t)
	// Two nodes with room for two allocs each (1500 MHz of 4000).
	for range 2 {
		h.UpsertNode(mock.Node(mock.Unreserved(), mock.NodeClass("c1")))
	}
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 7
	job.TaskGroups[0].Tasks[0].Resources.CPU = 1500
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	if n := len(h.liveAllocs(job)); n != 4 {
		t.Fatalf("placed %d, want 4", n)
	}
	e := h.lastEval(t)
	m := e.FailedTGAllocs["web"]
	if m == nil {
		t.Fatal("no failure recorded")
	}
	// 3 placements failed: one explained, two coalesced into it.
	assertMetric(t, m, &structs.AllocMetric{
		NodesEvaluated: 2, NodesExhausted: 2, ClassExhausted: map[string]int{"c1": 2},
		DimensionExhausted: map[string]int{"cpu": 2}, NodesInPool: 2, NodePool: "default",
	})
	if m.CoalescedFailures != 2 || e.QueuedAllocations["web"] != 3 {
		t.Fatalf("coalesced %d queued %d", m.CoalescedFailures, e.QueuedAllocations["web"])
	}
	if len(h.Created) != 1 {
		t.Fatalf("created %d evals", len(h.Created))
	}
	b := h.Created[0]
	if b.Status != structs.EvalStatusBlocked || b.TriggeredBy != structs.EvalTriggerQueuedAllocs ||
		b.StatusDescription != structs.EvalDescBlocked || e.BlockedEval != b.ID || b.PreviousEval != e.ID {
		t.Fatalf("blocked eval %+v", b)
	}
	n, _ := h.Snapshot().NodeByID(h.allocs(job)[0].NodeID)
	if len(b.ClassEligibility) != 1 || !b.ClassEligibility[n.ComputedClass] || b.EscapedComputedClass {
		t.Fatalf("class eligibility %v escaped %v", b.ClassEligibility, b.EscapedComputedClass)
	}
	if b.FailedTGAllocs["web"] == nil {
		t.Fatal("blocked eval lacks the failure")
	}
}

func TestServiceInfeasibleClassIneligible(t *testing.T) {
	h := NewHarness(t)
	n := mock.Node(mock.Unreserved(), mock.Attr("kernel.name", "darwin"))
	h.UpsertNode(n)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}}
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	b := h.Created[0]
	if elig, ok := b.ClassEligibility[n.ComputedClass]; !ok || elig {
		t.Fatalf("class should be known ineligible: %v", b.ClassEligibility)
	}
	m := h.lastEval(t).FailedTGAllocs["web"]
	if m.ConstraintFiltered["${attr.kernel.name} = linux"] != 1 || m.NodesFiltered != 1 {
		t.Fatalf("metric %+v", m)
	}
}

func TestServiceEscapedConstraint(t *testing.T) {
	h := NewHarness(t)
	addNodes(h, 2)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.Constraints = []*structs.Constraint{{LTarget: "${node.unique.name}", RTarget: "nope", Operand: "="}}
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	b := h.Created[0]
	if !b.EscapedComputedClass || b.ClassEligibility != nil {
		t.Fatalf("escaped %v eligibility %v", b.EscapedComputedClass, b.ClassEligibility)
	}
}

func TestBlockedEvalReblocks(t *testing.T) {
	h := NewHarness(t)
	h.UpsertNode(mock.Node(mock.Unreserved(), mock.CPUShares(1000)))
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 3
	h.UpsertJob(job)
	eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerQueuedAllocs))
	eval.Status = structs.EvalStatusBlocked
	if err := h.Process(eval); err != nil {
		t.Fatal(err)
	}
	if len(h.Created) != 0 || len(h.Reblocked) != 1 || len(h.Updated) != 0 {
		t.Fatalf("created %d reblocked %d updated %d", len(h.Created), len(h.Reblocked), len(h.Updated))
	}
	if h.Reblocked[0].Status != structs.EvalStatusBlocked || h.Reblocked[0].FailedTGAllocs["web"] == nil {
		t.Fatalf("reblocked %+v", h.Reblocked[0])
	}
}

func TestServiceStopJob(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 2)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 2
	h.UpsertJob(job)
	h.UpsertAllocs(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning)), mock.Alloc(mock.ForJob(job, 1), mock.OnNode(nodes[1]), mock.ClientStatus(structs.AllocClientStatusRunning)))
	stopped := job.Copy()
	stopped.Stop = true
	h.UpsertJob(stopped)
	if err := h.Process(mock.Eval(mock.EvalForJob(stopped), mock.TriggeredBy(structs.EvalTriggerJobDeregister))); err != nil {
		t.Fatal(err)
	}
	if n := len(h.liveAllocs(job)); n != 0 {
		t.Fatalf("%d allocs still wanted", n)
	}
	if e := h.lastEval(t); e.Status != structs.EvalStatusComplete || len(e.QueuedAllocations) != 0 {
		t.Fatalf("eval %+v", e)
	}
}

func TestServicePurgedJob(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 1)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	h.UpsertJob(job)
	h.UpsertAllocs(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning)))
	h.DeleteJob(job.Namespace, job.ID)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobDeregister))); err != nil {
		t.Fatal(err)
	}
	if n := len(h.liveAllocs(job)); n != 0 {
		t.Fatalf("%d allocs of a purged job still wanted", n)
	}
}

func TestServiceNodeDownReplacesLost(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 3)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 2
	h.UpsertJob(job)
	lost := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning))
	h.UpsertAllocs(lost, mock.Alloc(mock.ForJob(job, 1), mock.OnNode(nodes[1]), mock.ClientStatus(structs.AllocClientStatusRunning)))
	h.SetNodeStatus(nodes[0].ID, structs.NodeStatusDown)
	eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerNodeUpdate))
	if err := h.Process(eval); err != nil {
		t.Fatal(err)
	}
	snap := h.Snapshot()
	old, _ := snap.AllocByID(lost.ID)
	if old.ClientStatus != structs.AllocClientStatusLost || old.DesiredDescription != structs.AllocLost {
		t.Fatalf("lost alloc %s %q", old.ClientStatus, old.DesiredDescription)
	}
	live := h.liveAllocs(job)
	if len(live) != 2 {
		t.Fatalf("live %d", len(live))
	}
	for _, a := range live {
		if a.NodeID == nodes[0].ID {
			t.Fatal("placed on the down node")
		}
		if a.Name == lost.Name && a.PreviousAllocation != lost.ID {
			t.Fatal("replacement not linked")
		}
	}
}

func TestServiceDrainMigrates(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 2)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 1
	h.UpsertJob(job)
	a := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning))
	yes := true
	a.DesiredTransition.Migrate = &yes
	h.UpsertAllocs(a)
	h.DrainNode(nodes[0].ID)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerNodeDrain))); err != nil {
		t.Fatal(err)
	}
	live := h.liveAllocs(job)
	if len(live) != 1 || live[0].NodeID != nodes[1].ID {
		t.Fatalf("not migrated: %+v", live)
	}
	old, _ := h.Snapshot().AllocByID(a.ID)
	if old.DesiredDescription != structs.AllocMigrating {
		t.Fatalf("stop desc %q", old.DesiredDescription)
	}
}

func TestServiceRollingUpdate(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 4)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 4
	job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 2}
	h.UpsertJob(job)
	var allocs []*structs.Allocation
	for i, n := range nodes {
		allocs = append(allocs, mock.Alloc(mock.ForJob(job, i), mock.OnNode(n), mock.ClientStatus(structs.AllocClientStatusRunning)))
	}
	h.UpsertAllocs(allocs...)
	update := job.Copy()
	update.TaskGroups[0].Tasks[0].Config["command"] = "/bin/new"
	h.UpsertJob(update)
	eval := mock.Eval(mock.EvalForJob(update), mock.TriggeredBy(structs.EvalTriggerJobRegister))
	eval.AnnotatePlan = true
	if err := h.Process(eval); err != nil {
		t.Fatal(err)
	}
	plan := h.Plans[0]
	if plan.Deployment == nil {
		t.Fatal("no deployment created")
	}
	stops, places := 0, 0
	for _, v := range plan.NodeUpdate {
		stops += len(v)
	}
	for _, v := range plan.NodeAllocation {
		for _, a := range v {
			places++
			if a.DeploymentID != plan.Deployment.ID {
				t.Fatal("placement outside the deployment")
			}
		}
	}
	if stops != 2 || places != 2 {
		t.Fatalf("stops %d places %d, want 2 and 2", stops, places)
	}
	du := h.lastEval(t).PlanAnnotations.DesiredTGUpdates["web"]
	if du.DestructiveUpdate != 2 || du.Ignore != 2 {
		t.Fatalf("annotations %+v", du)
	}
}

func TestServiceInPlaceUpdate(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 2)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 2
	h.UpsertJob(job)
	h.UpsertAllocs(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning)), mock.Alloc(mock.ForJob(job, 1), mock.OnNode(nodes[1]), mock.ClientStatus(structs.AllocClientStatusRunning)))
	update := job.Copy()
	update.Priority = 70 // scheduling-only change
	h.UpsertJob(update)
	if err := h.Process(mock.Eval(mock.EvalForJob(update), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	plan := h.Plans[0]
	if len(plan.NodeUpdate) != 0 {
		t.Fatal("in-place update must not stop allocs")
	}
	newJob, _ := h.Snapshot().JobByID(job.Namespace, job.ID)
	for _, a := range h.liveAllocs(job) {
		if a.Job.Version != newJob.Version {
			t.Fatalf("alloc still at version %d", a.Job.Version)
		}
	}
}

func TestServiceRetriesPartialCommit(t *testing.T) {
	h := NewHarness(t)
	addNodes(h, 4)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 4
	h.UpsertJob(job)
	// The applier rejects one node of the first plan, as when another
	// scheduler raced for it.
	h.Reject = func(n int, plan *structs.Plan) []string {
		if n == 0 {
			for id := range plan.NodeAllocation {
				return []string{id}
			}
		}
		return nil
	}
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	if len(h.Plans) != 2 {
		t.Fatalf("plans %d, want a retry", len(h.Plans))
	}
	if n := len(h.liveAllocs(job)); n != 4 {
		t.Fatalf("placed %d", n)
	}
	if e := h.lastEval(t); e.Status != structs.EvalStatusComplete || e.QueuedAllocations["web"] != 0 {
		t.Fatalf("eval %+v", e)
	}
}

func TestServiceMaxPlanAttempts(t *testing.T) {
	h := NewHarness(t)
	addNodes(h, 1)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 1
	h.UpsertJob(job)
	h.Reject = func(_ int, plan *structs.Plan) []string { return plan.NodeIDs() }
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	if len(h.Plans) != maxServiceScheduleAttempts {
		t.Fatalf("plans %d", len(h.Plans))
	}
	e := h.lastEval(t)
	if e.Status != structs.EvalStatusFailed || e.StatusDescription != "maximum attempts reached (5)" {
		t.Fatalf("eval %s %q", e.Status, e.StatusDescription)
	}
	b := h.Created[len(h.Created)-1]
	if b.TriggeredBy != structs.EvalTriggerMaxPlans || b.StatusDescription != structs.EvalDescMaxPlans || b.Status != structs.EvalStatusBlocked {
		t.Fatalf("blocked eval %+v", b)
	}
	if e.BlockedEval != b.ID {
		t.Fatal("eval not linked to its blocked eval")
	}
}

func TestBatchMaxPlanAttempts(t *testing.T) {
	h := NewHarness(t)
	addNodes(h, 1)
	job := mock.BatchJob(mock.GroupName("web"), mock.Count(10))
	job.TaskGroups[0].Count = 1
	h.UpsertJob(job)
	h.Reject = func(_ int, plan *structs.Plan) []string { return plan.NodeIDs() }
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	if len(h.Plans) != maxBatchScheduleAttempts {
		t.Fatalf("plans %d", len(h.Plans))
	}
}

func TestServiceUnknownTrigger(t *testing.T) {
	h := NewHarness(t)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy("bogus"))); err != nil {
		t.Fatal(err)
	}
	e := h.lastEval(t)
	if e.Status != structs.EvalStatusFailed || e.StatusDescription != "scheduler cannot handle 'bogus' evaluation reason" {
		t.Fatalf("eval %s %q", e.Status, e.StatusDescription)
	}
}

func TestServiceReschedulesFailedAlloc(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 3)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 1
	job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Delay: 5 * time.Second,
		DelayFunction: structs.RescheduleDelayExponential, MaxDelay: time.Hour, Unlimited: true}
	h.UpsertJob(job)
	failed := mock.MarkFailed(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning)), h.Now.Add(-time.Minute))
	h.UpsertAllocs(failed)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerRetryFailedAlloc))); err != nil {
		t.Fatal(err)
	}
	var repl *structs.Allocation
	for _, a := range h.liveAllocs(job) {
		if a.ID != failed.ID {
			repl = a
		}
	}
	if repl == nil {
		t.Fatal("not rescheduled")
	}
	if repl.NodeID == nodes[0].ID {
		t.Fatal("rescheduled onto the node it failed on")
	}
	if repl.PreviousAllocation != failed.ID || repl.RescheduleTracker == nil || len(repl.RescheduleTracker.Events) != 1 ||
		repl.RescheduleTracker.Events[0].PrevNodeID != nodes[0].ID || repl.RescheduleTracker.Events[0].Delay != 5*time.Second {
		t.Fatalf("tracker %+v", repl.RescheduleTracker)
	}
	for _, m := range repl.Metrics.ScoreMetaData {
		if m.NodeID == nodes[0].ID && m.Scores.Map()[scorerPenalty] != -1 {
			t.Fatal("failed node not penalized")
		}
	}
}

// TestServiceRescheduleKeepsHistory: rescheduling stops the failed alloc
// and places a replacement whose tracker extends the failed one's. The
// stopped alloc keeps its own tracker through the commit: the stop
// carries the decision only, the stored alloc the rest. Were it lost, a
// later replacement of that alloc would start its count afresh and the
// job would reschedule more often than its policy allows.
func TestServiceRescheduleKeepsHistory(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 3)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 1
	job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Attempts: 3, Interval: time.Hour,
		Delay: 5 * time.Second, DelayFunction: structs.RescheduleDelayConstant}
	h.UpsertJob(job)
	failed := mock.MarkFailed(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning)), h.Now.Add(-time.Minute))
	earlier := &structs.RescheduleEvent{RescheduleTime: h.Now.Add(-10 * time.Minute).UnixNano(),
		PrevAllocID: "earlier", PrevNodeID: nodes[1].ID, Delay: 5 * time.Second}
	failed.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{earlier}}
	h.UpsertAllocs(failed)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerRetryFailedAlloc))); err != nil {
		t.Fatal(err)
	}

	stopped := h.alloc(failed.ID)
	if stopped.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("failed alloc not stopped: %s", stopped.DesiredStatus)
	}
	if tr := stopped.RescheduleTracker; tr == nil || len(tr.Events) != 1 || *tr.Events[0] != *earlier {
		t.Fatalf("stopped alloc's tracker %+v, want its stored history", tr)
	}
	repl := h.alloc(stopped.NextAllocation)
	if repl == nil || repl.RescheduleTracker == nil || len(repl.RescheduleTracker.Events) != 2 ||
		*repl.RescheduleTracker.Events[0] != *earlier || repl.RescheduleTracker.Events[1].PrevAllocID != failed.ID {
		t.Fatalf("replacement %+v", repl)
	}
}

func TestServiceDelayedRescheduleCreatesFollowup(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 2)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 1
	job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Delay: 30 * time.Second,
		DelayFunction: structs.RescheduleDelayConstant, Unlimited: true}
	h.UpsertJob(job)
	failed := mock.MarkFailed(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(nodes[0]), mock.ClientStatus(structs.AllocClientStatusRunning)), h.Now.Add(-time.Second))
	h.UpsertAllocs(failed)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerRetryFailedAlloc))); err != nil {
		t.Fatal(err)
	}
	if len(h.Created) != 1 {
		t.Fatalf("created %d evals", len(h.Created))
	}
	f := h.Created[0]
	if f.TriggeredBy != structs.EvalTriggerAllocReschedule || !f.WaitUntil.Equal(h.Now.Add(29*time.Second)) {
		t.Fatalf("follow-up %+v", f)
	}
	a, _ := h.Snapshot().AllocByID(failed.ID)
	if a.FollowupEvalID != f.ID {
		t.Fatal("failed alloc not linked to its follow-up")
	}
	// When the follow-up runs, the alloc is replaced.
	h.Now = f.WaitUntil
	if err := h.Process(f); err != nil {
		t.Fatal(err)
	}
	live := h.liveAllocs(job)
	if len(live) != 1 || live[0].PreviousAllocation != failed.ID {
		t.Fatalf("live %+v", live)
	}
}

func TestServicePreemption(t *testing.T) {
	h := NewHarness(t)
	node := mock.Node(mock.Unreserved(), mock.CPUShares(2000))
	h.UpsertNode(node)
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.PreemptionConfig.ServiceSchedulerEnabled = true
	h.SetSchedulerConfig(cfg)

	low := mock.Job(mock.Count(10), mock.NoPorts())
	low.Priority = 20
	low.TaskGroups[0].Tasks[0].Resources.CPU = 800
	h.UpsertJob(low)
	lowAllocs := []*structs.Allocation{mock.Alloc(mock.ForJob(low, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning)), mock.Alloc(mock.ForJob(low, 1), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))}
	h.UpsertAllocs(lowAllocs...)

	high := mock.Job(mock.Count(10), mock.NoPorts())
	high.Priority = 80
	high.TaskGroups[0].Count = 1
	high.TaskGroups[0].Tasks[0].Resources.CPU = 1000
	h.UpsertJob(high)
	eval := mock.Eval(mock.EvalForJob(high), mock.TriggeredBy(structs.EvalTriggerJobRegister))
	eval.AnnotatePlan = true
	if err := h.Process(eval); err != nil {
		t.Fatal(err)
	}
	plan := h.Plans[0]
	if n := len(plan.NodePreemptions[node.ID]); n != 1 {
		t.Fatalf("preempted %d, want exactly one 800 MHz alloc", n)
	}
	placed := plan.NodeAllocation[node.ID][0]
	if len(placed.PreemptedAllocations) != 1 || placed.Metrics.ScoreMetaData[0].Scores.Map()[scorerPreemption] == 0 {
		t.Fatalf("placed %+v", placed)
	}
	if du := h.lastEval(t).PlanAnnotations.DesiredTGUpdates["web"]; du.Preemptions != 1 {
		t.Fatalf("annotations %+v", du)
	}
	if len(h.Overcommits) != 0 {
		t.Fatal(h.Overcommits)
	}
}

func TestServiceNoPreemptionOfCloseOrHigherPriority(t *testing.T) {
	h := NewHarness(t)
	node := mock.Node(mock.Unreserved(), mock.CPUShares(1000))
	h.UpsertNode(node)
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.PreemptionConfig.ServiceSchedulerEnabled = true
	h.SetSchedulerConfig(cfg)
	other := mock.Job(mock.Count(10), mock.NoPorts())
	other.Priority = 45 // only 5 below
	other.TaskGroups[0].Tasks[0].Resources.CPU = 800
	h.UpsertJob(other)
	h.UpsertAllocs(mock.Alloc(mock.ForJob(other, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning)))
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 1
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	if len(h.Plans) != 0 {
		t.Fatal("preempted an alloc of a job within 10 priority")
	}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestPeriodicTemplateNeverPlaced(t *testing.T) {
	h := NewHarness(t)
	addNodes(h, 1)
	job := mock.BatchJob(mock.GroupName("web"), mock.Count(10))
	job.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "*/5 * * * *", SpecType: "cron"}
	h.UpsertJob(job)
	if err := h.Process(mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	if len(h.Plans) != 0 || len(h.liveAllocs(job)) != 0 {
		t.Fatal("a periodic template was placed")
	}
	if e := h.lastEval(t); e.Status != structs.EvalStatusComplete {
		t.Fatalf("eval %s", e.Status)
	}
}

func TestServiceCanaryUpdate(t *testing.T) {
	h := NewHarness(t)
	nodes := addNodes(h, 3)
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 3
	job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1}
	h.UpsertJob(job)
	for i, n := range nodes {
		h.UpsertAllocs(mock.Alloc(mock.ForJob(job, i), mock.OnNode(n), mock.ClientStatus(structs.AllocClientStatusRunning)))
	}
	update := job.Copy()
	update.TaskGroups[0].Tasks[0].Env["V"] = "2"
	h.UpsertJob(update)
	if err := h.Process(mock.Eval(mock.EvalForJob(update), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	p := h.Plans[0]
	if len(p.NodeUpdate) != 0 {
		t.Fatal("nothing is stopped before the canary is promoted")
	}
	var canary *structs.Allocation
	for _, allocs := range p.NodeAllocation {
		for _, a := range allocs {
			canary = a
		}
	}
	if canary == nil || canary.DeploymentStatus == nil || !canary.DeploymentStatus.Canary || p.Deployment == nil ||
		canary.DeploymentID != p.Deployment.ID {
		t.Fatalf("canary %+v deployment %+v", canary, p.Deployment)
	}
	ds := p.Deployment.TaskGroups["web"]
	if ds.DesiredCanaries != 1 || len(ds.PlacedCanaries) != 1 || ds.PlacedCanaries[0] != canary.ID || ds.DesiredTotal != 3 {
		t.Fatalf("deployment state %+v", ds)
	}
	if len(h.liveAllocs(job)) != 4 {
		t.Fatalf("live %d, want the three old allocs and the canary", len(h.liveAllocs(job)))
	}
}
