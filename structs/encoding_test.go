package structs_test

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// roundTrip encodes msg as a Raft entry of type t, checks the type byte,
// and decodes the body into out.
func roundTrip(t *testing.T, typ structs.MessageType, msg, out interface{}) {
	t.Helper()
	buf, err := structs.Encode(typ, msg)
	if err != nil {
		t.Fatal(err)
	}
	if structs.MessageType(buf[0]) != typ {
		t.Fatalf("type byte %d, want %d", buf[0], typ)
	}
	if err := structs.Decode(buf[1:], out); err != nil {
		t.Fatal(err)
	}
}

// sameTime compares instants: decoded times come back in UTC.
func sameTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestEncodeDecode_JobRegisterWithEval(t *testing.T) {
	job := mock.Job()
	job.TaskGroups[0].ShutdownDelay = durationPtr(7 * time.Second)
	job.TaskGroups[0].Update = structs.DefaultUpdateStrategy()
	job.Periodic = nil
	job.Meta = map[string]string{}                                                      // empty, not nil
	job.TaskGroups[0].Tasks[0].Meta = nil                                               // nil stays nil
	job.TaskGroups[0].Tasks[0].Config = map[string]interface{}{"command": "/bin/sleep"} // strings survive as is
	eval := mock.Eval(mock.EvalForJob(job))
	eval.WaitUntil = time.Date(2030, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))
	eval.Wait = 90 * time.Second
	eval.LeaderACL = "internal-token" // hidden from HTTP, never from Raft
	req := &structs.JobRegisterRequest{Job: job, Eval: eval, EnforceIndex: true, JobModifyIndex: 7,
		WriteRequest: structs.WriteRequest{Region: "global", Namespace: "default"}}

	var out structs.JobRegisterRequest
	roundTrip(t, structs.JobRegisterRequestType, req, &out)

	if d, err := job.Diff(out.Job, false); err != nil || d.Type != structs.DiffTypeNone {
		t.Fatalf("job changed in transit: %v\n%s", err, d)
	}
	got := out.Job.TaskGroups[0]
	if *got.ShutdownDelay != 7*time.Second || got.Update.HealthyDeadline != 5*time.Minute ||
		got.Tasks[0].KillTimeout != 5*time.Second || got.ReschedulePolicy.MaxDelay != time.Hour {
		t.Errorf("durations lost: %v %+v", *got.ShutdownDelay, got.Update)
	}
	if out.Job.Meta == nil || len(out.Job.Meta) != 0 {
		t.Errorf("empty map decoded as %#v", out.Job.Meta)
	}
	if got.Tasks[0].Meta != nil {
		t.Errorf("nil map decoded as %#v", got.Tasks[0].Meta)
	}
	if out.Eval.Wait != 90*time.Second || out.Eval.LeaderACL != "internal-token" || out.Eval.ID != eval.ID ||
		!out.EnforceIndex || out.JobModifyIndex != 7 || out.Region != "global" {
		t.Errorf("eval or options lost: %+v", out)
	}
	sameTime(t, "WaitUntil", out.Eval.WaitUntil, eval.WaitUntil)
}

func TestEncodeDecode_ApplyPlanResults(t *testing.T) {
	node := mock.Node()
	alloc := mock.Alloc(mock.OnNode(node))
	alloc.Metrics = &structs.AllocMetric{
		NodesEvaluated: 3, NodesAvailable: map[string]int{"dc1": 3},
		DimensionExhausted: map[string]int{"memory": 1}, AllocationTime: 1500 * time.Microsecond,
		ScoreMetaData: []*structs.NodeScoreMeta{{NodeID: node.ID, Scores: structs.NamedScores{{Name: "binpack", Score: 0.5}}, NormScore: 0.5}},
	}
	alloc.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: boolPtr(true), Timestamp: time.Unix(100, 5)}
	stopped := &structs.AllocStop{ID: "stopped", DesiredDescription: structs.AllocNotNeeded,
		ClientStatus: structs.AllocClientStatusLost, FollowupEvalID: "follow"}
	dep := structs.NewDeployment(alloc.Job, 50, time.Unix(200, 0))
	dep.TaskGroups["web"] = &structs.DeploymentState{ProgressDeadline: 10 * time.Minute, RequireProgressBy: time.Unix(300, 0),
		PlacedCanaries: []string{alloc.ID}, DesiredTotal: 3}
	req := &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{alloc},
			AllocsStopped: []*structs.AllocStop{stopped}, Job: alloc.Job},
		AllocsPreempted: []*structs.AllocStop{{ID: "victim", PreemptedByAllocation: alloc.ID}},
		Deployment:      dep,
		DeploymentUpdates: []*structs.DeploymentStatusUpdate{{DeploymentID: "old", Status: structs.DeploymentStatusCancelled,
			StatusDescription: structs.DeploymentStatusDescriptionNewerJob}},
		EvalID:          "eval",
		PreemptionEvals: []*structs.Evaluation{mock.Eval(mock.TriggeredBy(structs.EvalTriggerPreemption))},
		IneligibleNodes: []string{"bad"},
		UpdatedAt:       123,
	}
	var out structs.ApplyPlanResultsRequest
	roundTrip(t, structs.ApplyPlanResultsRequestType, req, &out)

	got := out.AllocsUpdated[0]
	if got.ID != alloc.ID || got.Metrics.AllocationTime != 1500*time.Microsecond ||
		got.Metrics.ScoreMetaData[0].Scores.Map()["binpack"] != 0.5 || !got.DeploymentStatus.IsHealthy() ||
		!reflect.DeepEqual(got.AllocatedResources, alloc.AllocatedResources) {
		t.Errorf("alloc changed in transit: %+v", got)
	}
	sameTime(t, "DeploymentStatus.Timestamp", got.DeploymentStatus.Timestamp, alloc.DeploymentStatus.Timestamp)
	if *out.AllocsStopped[0] != *stopped || out.AllocsPreempted[0].PreemptedByAllocation != alloc.ID {
		t.Errorf("stops lost: %+v %+v", out.AllocsStopped[0], out.AllocsPreempted[0])
	}
	ds := out.Deployment.TaskGroups["web"]
	if out.Deployment.ID != dep.ID || ds.ProgressDeadline != 10*time.Minute || ds.PlacedCanaries[0] != alloc.ID {
		t.Errorf("deployment lost: %+v", ds)
	}
	sameTime(t, "RequireProgressBy", ds.RequireProgressBy, time.Unix(300, 0))
	if out.DeploymentUpdates[0].Status != "cancelled" || out.PreemptionEvals[0].TriggeredBy != "preemption" ||
		out.IneligibleNodes[0] != "bad" || out.UpdatedAt != 123 || out.EvalID != "eval" {
		t.Errorf("plan result fields lost: %+v", out)
	}
}

func TestEncodeDecode_NodeRegister(t *testing.T) {
	node := mock.Node()
	node.DrainStrategy = &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true},
		ForceDeadline: time.Unix(5000, 0), StartedAt: time.Unix(1400, 0)}
	node.Drivers["raw_exec"].UpdateTime = time.Unix(1000, 0)
	node.Links = map[string]string{}
	event := structs.NewNodeEvent(structs.NodeEventSubsystemCluster, structs.NodeEventMsgRegistered, time.Unix(1500, 0))
	var out structs.NodeRegisterRequest
	roundTrip(t, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node, NodeEvent: event}, &out)

	got := out.Node
	if got.SecretID != node.SecretID || got.ComputedClass != node.ComputedClass ||
		!reflect.DeepEqual(got.Attributes, node.Attributes) || !reflect.DeepEqual(got.NodeResources, node.NodeResources) ||
		!reflect.DeepEqual(got.ReservedResources, node.ReservedResources) {
		t.Errorf("node changed in transit")
	}
	if got.DrainStrategy.Deadline != time.Hour || !got.DrainStrategy.IgnoreSystemJobs {
		t.Errorf("drain strategy %+v", got.DrainStrategy)
	}
	sameTime(t, "ForceDeadline", got.DrainStrategy.ForceDeadline, time.Unix(5000, 0))
	sameTime(t, "driver UpdateTime", got.Drivers["raw_exec"].UpdateTime, time.Unix(1000, 0))
	sameTime(t, "event Timestamp", out.NodeEvent.Timestamp, time.Unix(1500, 0))
	if got.Links == nil {
		t.Error("empty map decoded as nil")
	}
	if got.Events != nil {
		t.Errorf("nil slice decoded as %#v", got.Events)
	}
	got.ComputeClass()
	if got.ComputedClass != node.ComputedClass {
		t.Error("computed class differs after a round trip")
	}
}

func TestEncodeDecode_EvalUpdate(t *testing.T) {
	eval := mock.Eval(mock.EvalStatus(structs.EvalStatusBlocked))
	eval.FailedTGAllocs = map[string]*structs.AllocMetric{"web": {
		NodesEvaluated: 10, NodesFiltered: 4, ConstraintFiltered: map[string]int{"${attr.kernel.name} = linux": 4},
		NodesExhausted: 6, ClassExhausted: map[string]int{"linux-medium": 6}, DimensionExhausted: map[string]int{"cpu": 6},
		CoalescedFailures: 2, QuotaExhausted: []string{},
	}}
	eval.ClassEligibility = map[string]bool{"v1:1": true, "v1:2": false}
	eval.QueuedAllocations = map[string]int{"web": 3}
	eval.PlanAnnotations = &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{"web": {Place: 3}}}
	eval.EscapedComputedClass = true
	eval.SnapshotIndex = 99
	var out structs.EvalUpdateRequest
	roundTrip(t, structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}, EvalToken: "tok"}, &out)

	got := out.Evals[0]
	if !reflect.DeepEqual(got.FailedTGAllocs, eval.FailedTGAllocs) || !reflect.DeepEqual(got.ClassEligibility, eval.ClassEligibility) ||
		!reflect.DeepEqual(got.QueuedAllocations, eval.QueuedAllocations) ||
		got.PlanAnnotations.DesiredTGUpdates["web"].Place != 3 || !got.EscapedComputedClass || got.SnapshotIndex != 99 ||
		got.Status != "blocked" || out.EvalToken != "tok" {
		t.Errorf("eval changed in transit: %+v", got)
	}
	if got.FailedTGAllocs["web"].QuotaExhausted == nil {
		t.Error("empty slice decoded as nil")
	}
	if !got.WaitUntil.IsZero() {
		t.Errorf("zero WaitUntil decoded as %v", got.WaitUntil)
	}
}

func TestEncodeDecode_AllocClientUpdate(t *testing.T) {
	alloc := mock.Alloc(mock.ClientStatus(structs.AllocClientStatusFailed))
	alloc.Job = nil // clients send their allocs without the job
	alloc.TaskStates = map[string]*structs.TaskState{"web": {
		State: structs.TaskStateDead, Failed: true, Restarts: 2,
		StartedAt: time.Unix(10, 0), FinishedAt: time.Unix(20, 500),
		Events: []*structs.TaskEvent{structs.NewTaskEvent(structs.TaskTerminated, time.Unix(20, 0)).
			SetExitCode(1).SetKillTimeout(5 * time.Second)},
	}}
	alloc.DesiredTransition = structs.DesiredTransition{Migrate: boolPtr(true)}
	req := &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{alloc},
		Evals: []*structs.Evaluation{mock.Eval(mock.TriggeredBy(structs.EvalTriggerRetryFailedAlloc))}}
	var out structs.AllocUpdateRequest
	roundTrip(t, structs.AllocClientUpdateRequestType, req, &out)

	got := out.Alloc[0]
	ts := got.TaskStates["web"]
	if got.ClientStatus != "failed" || got.Job != nil || ts.Restarts != 2 || !ts.Failed ||
		ts.Events[0].ExitCode != 1 || ts.Events[0].KillTimeout != 5*time.Second || ts.Events[0].Details["exit_code"] != "1" ||
		!got.DesiredTransition.ShouldMigrate() || got.DesiredTransition.Reschedule != nil {
		t.Errorf("alloc changed in transit: %+v %+v", got, ts)
	}
	sameTime(t, "FinishedAt", ts.FinishedAt, time.Unix(20, 500))
	if out.Evals[0].TriggeredBy != "alloc-failure" {
		t.Errorf("eval %+v", out.Evals[0])
	}
}

// Free-form driver configs come back with generic element types; nested
// structure and values survive.
func TestEncodeDecode_DriverConfig(t *testing.T) {
	job := mock.Job()
	job.TaskGroups[0].Tasks[0].Config = map[string]interface{}{
		"args": []string{"-a", "-b"}, "port": 8080, "labels": map[string]interface{}{"team": "x"}, "on": true,
	}
	var out structs.JobRegisterRequest
	roundTrip(t, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job}, &out)
	cfg := out.Job.TaskGroups[0].Tasks[0].Config
	if !reflect.DeepEqual(cfg["args"], []interface{}{"-a", "-b"}) || cfg["labels"].(map[string]interface{})["team"] != "x" ||
		cfg["on"] != true || reflect.ValueOf(cfg["port"]).Convert(reflect.TypeOf(0)).Interface() != 8080 {
		t.Fatalf("config %#v", cfg)
	}
	// The diff sees no change: it renders values, not Go types.
	if d, _ := job.Diff(out.Job, false); d.Type != structs.DiffTypeNone {
		t.Fatalf("diff after round trip:\n%s", d)
	}
}

func TestDecode_Garbage(t *testing.T) {
	var out structs.JobRegisterRequest
	if err := structs.Decode([]byte{0xc1}, &out); err == nil {
		t.Fatal("decoded garbage")
	}
	buf, _ := structs.Encode(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{})
	if !bytes.HasPrefix(buf, []byte{6}) {
		t.Fatalf("prefix %v", buf[:1])
	}
}

func durationPtr(d time.Duration) *time.Duration { return &d }
func boolPtr(b bool) *bool                       { return &b }
