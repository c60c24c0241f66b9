package structs_test

import (
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestAllocTerminalStatus(t *testing.T) {
	type want struct{ server, client, terminal bool }
	desired := map[string]bool{"run": false, "stop": true, "evict": true}
	client := map[string]bool{
		"pending": false, "running": false, "unknown": false,
		"complete": true, "failed": true, "lost": true,
	}
	for d, serverTerminal := range desired {
		for c, clientTerminal := range client {
			a := &structs.Allocation{DesiredStatus: d, ClientStatus: c}
			w := want{serverTerminal, clientTerminal, serverTerminal || clientTerminal}
			got := want{a.ServerTerminalStatus(), a.ClientTerminalStatus(), a.TerminalStatus()}
			if got != w {
				t.Errorf("desired %s client %s: got %+v, want %+v", d, c, got, w)
			}
		}
	}
}

func TestAllocName(t *testing.T) {
	if got := structs.AllocName("web", "api", 3); got != "web.api[3]" {
		t.Errorf("AllocName = %q", got)
	}
	for name, want := range map[string]int{
		"web.api[3]":          3,
		"my.job.v2.api[12]":   12,
		"job[1].group[2]":     2,
		"web.api[0]":          0,
		"web.api":             -1,
		"web.api[]":           -1,
		"web.api[x]":          -1,
		"web.api[3":           -1,
		"web.api]3[":          -1,
		"":                    -1,
		"dispatch/x-1.g[100]": 100,
	} {
		if got := structs.AllocIndexFromName(name); got != want {
			t.Errorf("AllocIndexFromName(%q) = %d, want %d", name, got, want)
		}
	}
	a := mock.Alloc()
	if a.Index() != 0 {
		t.Errorf("mock alloc index %d", a.Index())
	}
}

func TestAllocCopyIsDeep(t *testing.T) {
	a := mock.Alloc()
	a.TaskStates = map[string]*structs.TaskState{"web": {State: "running", Events: []*structs.TaskEvent{{Type: "Started"}}}}
	a.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{{PrevAllocID: "x"}}}
	c := a.Copy()
	c.AllocatedResources.Tasks["web"].Cpu.CpuShares = 1
	c.AllocatedResources.Shared.Ports[0].Value = 1
	c.TaskStates["web"].Events[0].Type = "Killed"
	c.RescheduleTracker.Events[0].PrevAllocID = "y"
	if a.AllocatedResources.Tasks["web"].Cpu.CpuShares != mock.TaskCPU || a.AllocatedResources.Shared.Ports[0].Value == 1 ||
		a.TaskStates["web"].Events[0].Type != "Started" || a.RescheduleTracker.Events[0].PrevAllocID != "x" {
		t.Fatal("Copy shares state with the original")
	}
	if c.Job != a.Job {
		t.Error("Copy should share the immutable job")
	}
	if a.CopySkipJob().Job != nil {
		t.Error("CopySkipJob kept the job")
	}
}

func TestAllocStub(t *testing.T) {
	a := mock.Alloc()
	a.NextAllocation = "next"
	s := a.Stub()
	if s.ID != a.ID || s.JobType != "service" || s.JobVersion != a.Job.Version || s.NextAllocation != "next" ||
		s.Name != a.Name || s.ClientStatus != a.ClientStatus {
		t.Fatalf("stub %+v", s)
	}
}

func TestPlanHelpers(t *testing.T) {
	eval := mock.Eval()
	job := mock.Job()
	p := eval.MakePlan(job)
	if p.EvalID != eval.ID || p.Priority != eval.Priority || !p.IsNoOp() {
		t.Fatalf("plan %+v", p)
	}
	a := mock.Alloc(mock.ForJob(job, 0))
	p.AppendStoppedAlloc(a, structs.AllocNotNeeded, structs.AllocClientStatusLost, "follow")
	stopped := p.NodeUpdate[a.NodeID][0]
	if stopped.ID != a.ID || stopped.DesiredDescription != structs.AllocNotNeeded || stopped.ClientStatus != "lost" ||
		stopped.FollowupEvalID != "follow" || a.DesiredStatus != "run" {
		t.Fatalf("stopped %+v", stopped)
	}
	p.PopUpdate(a)
	if len(p.NodeUpdate) != 0 {
		t.Fatal("PopUpdate left the stop")
	}
	p.AppendAlloc(a)
	victim := mock.Alloc(mock.OnNode(&structs.Node{ID: a.NodeID}))
	p.AppendPreemptedAlloc(victim, "preemptor")
	if p.IsNoOp() || len(p.NodeIDs()) != 1 {
		t.Fatalf("plan nodes %v", p.NodeIDs())
	}
	pre := p.NodePreemptions[a.NodeID][0]
	if pre.ID != victim.ID || pre.PreemptedByAllocation != "preemptor" || pre.DesiredDescription != "Preempted by alloc ID preemptor" ||
		pre.ClientStatus != "" || victim.DesiredStatus != "run" {
		t.Fatalf("preempted %+v", pre)
	}
	full, expected, actual := (&structs.PlanResult{}).FullCommit(p)
	if full || expected != 1 || actual != 0 {
		t.Fatalf("FullCommit = %v %d %d", full, expected, actual)
	}
}

func TestEvalStatusRules(t *testing.T) {
	for status, terminal := range map[string]bool{
		"pending": false, "blocked": false, "complete": true, "failed": true, "canceled": true,
	} {
		e := &structs.Evaluation{Status: status}
		if e.TerminalStatus() != terminal || !structs.ValidEvalStatus(status) {
			t.Errorf("%s: terminal %v", status, e.TerminalStatus())
		}
		if e.ShouldEnqueue() != (status == "pending") || e.ShouldBlock() != (status == "blocked") {
			t.Errorf("%s: enqueue %v block %v", status, e.ShouldEnqueue(), e.ShouldBlock())
		}
	}
	if structs.ValidEvalStatus("cancelled") {
		t.Error(`evals are "canceled" with one l`)
	}
}

func TestCreateBlockedEval(t *testing.T) {
	e := mock.Eval()
	failed := map[string]*structs.AllocMetric{"web": {NodesEvaluated: 3}}
	b := e.CreateBlockedEval(map[string]bool{"v1:1": false}, false, failed, timeAt(100))
	if b.Status != "blocked" || b.TriggeredBy != "queued-allocs" || b.PreviousEval != e.ID ||
		b.StatusDescription != "created to place remaining allocations" || b.ClassEligibility == nil || b.CreateTime != 100e9 {
		t.Fatalf("blocked eval %+v", b)
	}
	escaped := e.CreateBlockedEval(map[string]bool{"v1:1": false}, true, failed, timeAt(100))
	if escaped.ClassEligibility != nil || !escaped.EscapedComputedClass {
		t.Fatalf("escaped eval %+v", escaped)
	}
}
