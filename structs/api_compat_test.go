package structs_test

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// The HTTP API serialises these types directly, and existing Nomad clients
// (the hashicorp/nomad/api package first among them) must decode them.
// These tests compare our field names with that package, recursively: a
// misspelt field would silently read as zero on the client side.

// serverOnlyFields exist in Nomad's server structs but not in its api
// package, so an api client ignores them; any other field of ours that
// the api package lacks is a spelling mistake.
var serverOnlyFields = map[string]bool{
	"structs.AllocatedResources.TaskLifecycles":         true,
	"structs.AllocatedCpuResources.ReservedCores":       true,
	"structs.RescheduleEvent.Delay":                     true,
	"structs.Deployment.EvalPriority":                   true,
	"structs.DeploymentState.AutoPromote":               true,
	"structs.Evaluation.LeaderACL":                      true,
	"structs.AllocListStub.DesiredTransition":           true,
	"structs.JobListStub.NodePool":                      true,
	"structs.Node.ComputedClass":                        true,
	"structs.Node.SecretID":                             true,
	"structs.Node.LastMissedHeartbeatIndex":             true,
	"structs.Node.LastAllocUpdateIndex":                 true,
	"structs.NodeReservedCpuResources.ReservedCpuCores": true,
	"structs.JobPlanResponse.Index":                     true, // the HTTP layer moves it to a header
	"structs.TaskEvent.Signalling":                      true, // deprecated, see its comment
	"structs.AllocMetric.ClosestNodes":                  true, // ours; Nomad's clients ignore it
	"structs.ClientHostVolumeConfig.Name":               true, // the map key on the api side
	// Our extension (backpressure); Nomad's clients ignore it, and the
	// agent keeps the stored limit when a write leaves it out.
	"structs.SchedulerConfiguration.EvalBacklogLimit": true,
	// Nomad's servers send the ACL objects' hashes; its api package
	// leaves them out.
	"structs.ACLPolicy.Hash":         true,
	"structs.ACLPolicyListStub.Hash": true,
	"structs.ACLToken.Hash":          true,
	"structs.ACLTokenListStub.Hash":  true,
	"structs.ACLRole.Hash":           true,
	"structs.ACLRoleListStub.Hash":   true,
}

func TestAPICompat_FieldNames(t *testing.T) {
	pairs := []struct{ ours, theirs interface{} }{
		{structs.Job{}, api.Job{}},
		{structs.Node{}, api.Node{}},
		{structs.Allocation{}, api.Allocation{}},
		{structs.Evaluation{}, api.Evaluation{}},
		{structs.EvaluationStub{}, api.EvaluationStub{}},
		{structs.Deployment{}, api.Deployment{}},
		{structs.JobSummary{}, api.JobSummary{}},
		{structs.JobListStub{}, api.JobListStub{}},
		{structs.NodeListStub{}, api.NodeListStub{}},
		{structs.AllocListStub{}, api.AllocationListStub{}},
		{structs.SchedulerConfiguration{}, api.SchedulerConfiguration{}},
		{structs.JobDiff{}, api.JobDiff{}},
		{structs.JobPlanResponse{}, api.JobPlanResponse{}},
		{structs.ACLPolicy{}, api.ACLPolicy{}},
		{structs.ACLPolicyListStub{}, api.ACLPolicyListStub{}},
		{structs.ACLToken{}, api.ACLToken{}},
		{structs.ACLTokenListStub{}, api.ACLTokenListStub{}},
		{structs.ACLRole{}, api.ACLRole{}},
		{structs.ACLRoleListStub{}, api.ACLRoleListStub{}},
	}
	seen := map[string]bool{}
	var problems []string
	for _, p := range pairs {
		compareFields(reflect.TypeOf(p.ours), reflect.TypeOf(p.theirs), seen, &problems)
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

func compareFields(ours, theirs reflect.Type, seen map[string]bool, problems *[]string) {
	ours, theirs = elemType(ours), elemType(theirs)
	if ours.Kind() != reflect.Struct || theirs.Kind() != reflect.Struct || ours.PkgPath() == "time" {
		return
	}
	key := ours.String() + "~" + theirs.String()
	if seen[key] {
		return
	}
	seen[key] = true
	theirFields := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(theirs) {
		if f.IsExported() && !f.Anonymous {
			theirFields[f.Name] = f
		}
	}
	for _, f := range reflect.VisibleFields(ours) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name := ours.String() + "." + f.Name
		tf, ok := theirFields[f.Name]
		if !ok {
			if !serverOnlyFields[name] {
				*problems = append(*problems, name+" has no field of that name in "+theirs.String())
			}
			continue
		}
		compareFields(f.Type, tf.Type, seen, problems)
	}
}

func elemType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t
}

// roundTripJSON encodes ours with encoding/json and decodes into theirs,
// as an api client does with an HTTP response body.
func roundTripJSON(t *testing.T, ours, theirs interface{}) {
	t.Helper()
	buf, err := json.Marshal(ours)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf, theirs); err != nil {
		t.Fatalf("api client cannot decode: %v", err)
	}
}

func TestAPICompat_JobDecodes(t *testing.T) {
	j := mock.Job()
	j.Version, j.JobModifyIndex, j.SubmitTime = 3, 42, 1700000000000000000
	var got api.Job
	roundTripJSON(t, j, &got)
	tg := got.TaskGroups[0]
	task := tg.Tasks[0]
	checks := []struct {
		what      string
		got, want interface{}
	}{
		{"ID", *got.ID, j.ID},
		{"Type", *got.Type, "service"},
		{"Priority", *got.Priority, 50},
		{"Datacenters", got.Datacenters, []string{"dc1"}},
		{"NodePool", *got.NodePool, "default"},
		{"Version", *got.Version, uint64(3)},
		{"JobModifyIndex", *got.JobModifyIndex, uint64(42)},
		{"SubmitTime", *got.SubmitTime, int64(1700000000000000000)},
		{"Constraint", *got.Constraints[0], api.Constraint{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}},
		{"group Count", *tg.Count, 3},
		{"restart Interval", *tg.RestartPolicy.Interval, 30 * time.Minute},
		{"reschedule Unlimited", *tg.ReschedulePolicy.Unlimited, true},
		{"reschedule DelayFunction", *tg.ReschedulePolicy.DelayFunction, "exponential"},
		{"migrate MaxParallel", *tg.Migrate.MaxParallel, 1},
		{"disk SizeMB", *tg.EphemeralDisk.SizeMB, 300},
		{"dynamic port", tg.Networks[0].DynamicPorts[0], api.Port{Label: "http", To: -1}},
		{"task Driver", task.Driver, "raw_exec"},
		{"task Config", task.Config["command"], "/bin/sleep"},
		{"task Env", task.Env["MOCK"], "1"},
		{"task CPU", *task.Resources.CPU, mock.TaskCPU},
		{"task MemoryMB", *task.Resources.MemoryMB, mock.TaskMemoryMB},
		{"task KillTimeout", *task.KillTimeout, 5 * time.Second},
		{"task LogConfig", *task.LogConfig.MaxFiles, 10},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
		}
	}
}

func TestAPICompat_NodeAllocEvalDecode(t *testing.T) {
	n := mock.Node()
	var node api.Node
	roundTripJSON(t, n.Sanitize(), &node)
	if node.ID != n.ID || node.Status != "ready" || node.SchedulingEligibility != "eligible" || node.NodePool != "default" ||
		node.NodeResources.Cpu.CpuShares != mock.NodeCPU || node.ReservedResources.Networks.ReservedHostPorts != "22" ||
		!node.Drivers["raw_exec"].Healthy || node.Attributes["kernel.name"] != "linux" || node.StatusUpdatedAt != n.StatusUpdatedAt {
		t.Errorf("node decoded as %+v", node)
	}

	a := mock.Alloc(mock.OnNode(n))
	a.TaskStates = map[string]*structs.TaskState{"web": {State: "running", StartedAt: time.Unix(100, 0).UTC(),
		Events: []*structs.TaskEvent{structs.NewTaskEvent(structs.TaskStarted, time.Unix(100, 0))}}}
	var alloc api.Allocation
	roundTripJSON(t, a, &alloc)
	if alloc.ID != a.ID || alloc.NodeID != n.ID || alloc.ClientStatus != "pending" || alloc.DesiredStatus != "run" ||
		alloc.Name != a.Name || *alloc.Job.ID != a.JobID || alloc.AllocatedResources.Shared.DiskMB != 300 ||
		alloc.AllocatedResources.Tasks["web"].Cpu.CpuShares != mock.TaskCPU ||
		alloc.AllocatedResources.Shared.Ports[0].Value != a.AllocatedResources.Shared.Ports[0].Value ||
		alloc.TaskStates["web"].Events[0].Type != "Started" || !alloc.TaskStates["web"].StartedAt.Equal(time.Unix(100, 0)) {
		t.Errorf("alloc decoded as %+v", alloc)
	}

	e := mock.Eval(mock.EvalStatus(structs.EvalStatusBlocked))
	e.WaitUntil = time.Unix(500, 0).UTC()
	e.FailedTGAllocs = map[string]*structs.AllocMetric{"web": {NodesEvaluated: 2, DimensionExhausted: map[string]int{"memory": 2},
		AllocationTime: time.Millisecond}}
	e.QueuedAllocations = map[string]int{"web": 2}
	var eval api.Evaluation
	roundTripJSON(t, e, &eval)
	if eval.ID != e.ID || eval.Status != "blocked" || eval.TriggeredBy != "job-register" || !eval.WaitUntil.Equal(e.WaitUntil) ||
		eval.FailedTGAllocs["web"].DimensionExhausted["memory"] != 2 || eval.FailedTGAllocs["web"].AllocationTime != time.Millisecond ||
		eval.QueuedAllocations["web"] != 2 {
		t.Errorf("eval decoded as %+v", eval)
	}

	var cfg api.SchedulerConfiguration
	roundTripJSON(t, structs.DefaultSchedulerConfiguration(), &cfg)
	if cfg.SchedulerAlgorithm != "binpack" || !cfg.PreemptionConfig.SystemSchedulerEnabled || cfg.PreemptionConfig.ServiceSchedulerEnabled {
		t.Errorf("scheduler config decoded as %+v", cfg)
	}
}

func TestAPICompat_DiffDecodes(t *testing.T) {
	old := mock.Job()
	new := old.Copy()
	new.TaskGroups[0].Count = 4
	new.TaskGroups[0].Tasks[0].Resources.CPU = 900
	d, err := old.Diff(new, true)
	if err != nil {
		t.Fatal(err)
	}
	var got api.JobDiff
	roundTripJSON(t, d, &got)
	g := got.TaskGroups[0]
	if got.Type != "Edited" || g.Fields[0].Name != "Count" || g.Fields[0].Annotations[0] != "forces create" ||
		g.Tasks[0].Annotations[0] != "forces create/destroy update" || g.Tasks[0].Objects[0].Name != "Resources" {
		t.Errorf("diff decoded as %+v", got)
	}
}

func TestAPICompat_HostVolumeFieldNames(t *testing.T) {
	var problems []string
	seen := map[string]bool{}
	for _, p := range []struct{ ours, theirs interface{} }{
		{structs.HostVolume{}, api.HostVolume{}},
		{structs.HostVolumeStub{}, api.HostVolumeStub{}},
	} {
		compareFields(reflect.TypeOf(p.ours), reflect.TypeOf(p.theirs), seen, &problems)
	}
	for _, p := range problems {
		t.Error(p)
	}
}
