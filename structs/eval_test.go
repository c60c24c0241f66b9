package structs_test

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestFollowUpEvals(t *testing.T) {
	e := mock.Eval()
	f := e.CreateFailedFollowUpEval(2*time.Minute, timeAt(50))
	if f.TriggeredBy != "failed-follow-up" || f.Wait != 2*time.Minute || f.PreviousEval != e.ID || f.Status != "pending" ||
		f.JobID != e.JobID || f.Priority != e.Priority || f.ID == e.ID {
		t.Errorf("failed follow-up %+v", f)
	}
	r := e.NextRollingEval(30*time.Second, timeAt(50))
	if r.TriggeredBy != "rolling-update" || r.Wait != 30*time.Second || r.StatusDescription == "" {
		t.Errorf("rolling eval %+v", r)
	}
	e.CreateTime = timeAt(100).UnixNano()
	e.UpdateModifyTime(timeAt(90))
	if e.ModifyTime != e.CreateTime {
		t.Error("modify time went before create time")
	}
	e.UpdateModifyTime(timeAt(200))
	if e.ModifyTime != timeAt(200).UnixNano() {
		t.Error("modify time not updated")
	}
}

func TestEvalCopyIsDeep(t *testing.T) {
	e := mock.Eval()
	e.FailedTGAllocs = map[string]*structs.AllocMetric{"web": {NodesEvaluated: 1}}
	e.ClassEligibility = map[string]bool{"v1:1": true}
	e.QueuedAllocations = map[string]int{"web": 1}
	e.MissingNonNodeResources = []string{"vol"}
	e.PlanAnnotations = &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{"web": {Place: 1}}}
	c := e.Copy()
	c.FailedTGAllocs["web"].NodesEvaluated = 9
	c.ClassEligibility["v1:1"] = false
	c.QueuedAllocations["web"] = 9
	c.MissingNonNodeResources[0] = "x"
	c.PlanAnnotations.DesiredTGUpdates["web"].Place = 9
	if e.FailedTGAllocs["web"].NodesEvaluated != 1 || !e.ClassEligibility["v1:1"] || e.QueuedAllocations["web"] != 1 ||
		e.MissingNonNodeResources[0] != "vol" || e.PlanAnnotations.DesiredTGUpdates["web"].Place != 1 {
		t.Fatal("Copy shares state")
	}
}

func TestConstraintEscapesComputedClass(t *testing.T) {
	for target, escapes := range map[string]bool{
		"${node.unique.id}": true, "${node.unique.name}": true, "${attr.unique.hostname}": true,
		"${meta.unique.serial}": true, "${unique.legacy}": true,
		"${node.datacenter}": false, "${attr.kernel.name}": false, "${meta.rack}": false, "unique.literal": false,
	} {
		l := &structs.Constraint{LTarget: target, Operand: "=", RTarget: "x"}
		r := &structs.Constraint{LTarget: "${attr.a}", Operand: "=", RTarget: target}
		if l.EscapesComputedClass() != escapes || r.EscapesComputedClass() != escapes {
			t.Errorf("%s: escapes = %v, want %v", target, l.EscapesComputedClass(), escapes)
		}
	}
	c := &structs.Constraint{LTarget: "${attr.a}", Operand: "=", RTarget: "b"}
	if c.String() != "${attr.a} = b" || !c.Equal(&structs.Constraint{LTarget: "${attr.a}", Operand: "=", RTarget: "b"}) || c.Equal(nil) {
		t.Errorf("String/Equal: %q", c)
	}
}

func TestDeploymentActive(t *testing.T) {
	for status, active := range map[string]bool{
		"running": true, "paused": true, "pending": true, "blocked": true,
		"successful": false, "failed": false, "cancelled": false, "unblocking": false, "initializing": false,
	} {
		if got := (&structs.Deployment{Status: status}).Active(); got != active {
			t.Errorf("%s: Active = %v", status, got)
		}
	}
	d := structs.NewDeployment(mock.Job(), 50, timeAt(1))
	d.TaskGroups["web"] = &structs.DeploymentState{PlacedCanaries: []string{"a"}}
	c := d.Copy()
	c.TaskGroups["web"].PlacedCanaries[0] = "b"
	if d.TaskGroups["web"].PlacedCanaries[0] != "a" || d.Status != "running" {
		t.Fatal("deployment copy shares canaries")
	}
}

func TestTaskEventSetters(t *testing.T) {
	e := structs.NewTaskEvent(structs.TaskTerminated, timeAt(1)).SetMessage("bye").SetExitCode(2).SetSignal(9).
		SetFailsTask().SetRestartDelay(time.Second).SetRestartReason("policy").SetKillTimeout(time.Second).
		SetDriverError(errTest("boom"))
	want := map[string]string{"message": "bye", "exit_code": "2", "signal": "9", "fails_task": "true",
		"start_delay": "1000000000", "restart_reason": "policy", "kill_timeout": "1s", "driver_error": "boom"}
	for k, v := range want {
		if e.Details[k] != v {
			t.Errorf("Details[%s] = %q, want %q", k, e.Details[k], v)
		}
	}
	if e.ExitCode != 2 || e.Signal != 9 || !e.FailsTask || e.StartDelay != int64(time.Second) || e.DriverError != "boom" ||
		e.String() != "Terminated: bye" || e.Time != timeAt(1).UnixNano() {
		t.Errorf("event %+v", e)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }
