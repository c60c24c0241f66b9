package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// The public Nomad Go api package is used here only to prove wire
// compatibility: our types must carry the same JSON fields with compatible
// types, and our Canonicalize must fill the same defaults.

func TestWireFieldsMatchNomadAPI(t *testing.T) {
	pairs := []struct{ ours, theirs any }{
		{Job{}, nomadapi.Job{}},
		{Namespace{}, nomadapi.Namespace{}},
		{HostVolume{}, nomadapi.HostVolume{}},
		{HostVolumeStub{}, nomadapi.HostVolumeStub{}},
		{HostVolumeCreateRequest{}, nomadapi.HostVolumeCreateRequest{}},
		{HostVolumeCreateResponse{}, nomadapi.HostVolumeCreateResponse{}},
		{NodeMetaApplyRequest{}, nomadapi.NodeMetaApplyRequest{}},
		{NodeMetaResponse{}, nomadapi.NodeMetaResponse{}},
		{AutopilotConfiguration{}, nomadapi.AutopilotConfiguration{}},
		{ServerHealth{}, nomadapi.ServerHealth{}},
		{OperatorHealthReply{}, nomadapi.OperatorHealthReply{}},
		{ServiceRegistration{}, nomadapi.ServiceRegistration{}},
		{ServiceRegistrationListStub{}, nomadapi.ServiceRegistrationListStub{}},
		{ServiceRegistrationStub{}, nomadapi.ServiceRegistrationStub{}},
		{AllocCheckStatus{}, nomadapi.AllocCheckStatus{}},
		{NodePool{}, nomadapi.NodePool{}},
		{NodePoolSchedulerConfiguration{}, nomadapi.NodePoolSchedulerConfiguration{}},
		{Variable{}, nomadapi.Variable{}},
		{VariableMetadata{}, nomadapi.VariableMetadata{}},
		{VariableLock{}, nomadapi.VariableLock{}},
		{ACLPolicy{}, nomadapi.ACLPolicy{}},
		{ACLPolicyListStub{}, nomadapi.ACLPolicyListStub{}},
		{ACLToken{}, nomadapi.ACLToken{}},
		{ACLTokenListStub{}, nomadapi.ACLTokenListStub{}},
		{ACLRole{}, nomadapi.ACLRole{}},
		{ACLRoleListStub{}, nomadapi.ACLRoleListStub{}},
		{ACLAuthMethod{}, nomadapi.ACLAuthMethod{}},
		{ACLAuthMethodConfig{}, nomadapi.ACLAuthMethodConfig{}},
		{OIDCClientAssertion{}, nomadapi.OIDCClientAssertion{}},
		{OIDCClientAssertionKey{}, nomadapi.OIDCClientAssertionKey{}},
		{ACLAuthMethodListStub{}, nomadapi.ACLAuthMethodListStub{}},
		{ACLBindingRule{}, nomadapi.ACLBindingRule{}},
		{ACLBindingRuleListStub{}, nomadapi.ACLBindingRuleListStub{}},
		{ACLIdentityClientIntroductionTokenRequest{}, nomadapi.ACLIdentityClientIntroductionTokenRequest{}},
		{ACLIdentityClientIntroductionTokenResponse{}, nomadapi.ACLIdentityClientIntroductionTokenResponse{}},
		{BootstrapRequest{}, nomadapi.BootstrapRequest{}},
		{OneTimeToken{}, nomadapi.OneTimeToken{}},
		{OneTimeTokenUpsertResponse{}, nomadapi.OneTimeTokenUpsertResponse{}},
		{OneTimeTokenExchangeRequest{}, nomadapi.OneTimeTokenExchangeRequest{}},
		{OneTimeTokenExchangeResponse{}, nomadapi.OneTimeTokenExchangeResponse{}},
		{JobListStub{}, nomadapi.JobListStub{}},
		{JobSummary{}, nomadapi.JobSummary{}},
		{JobRegisterRequest{}, nomadapi.JobRegisterRequest{}},
		{JobRegisterResponse{}, nomadapi.JobRegisterResponse{}},
		{JobDeregisterResponse{}, nomadapi.JobDeregisterResponse{}},
		{JobPlanRequest{}, nomadapi.JobPlanRequest{}},
		{JobPlanResponse{}, nomadapi.JobPlanResponse{}},
		{JobValidateRequest{}, nomadapi.JobValidateRequest{}},
		{JobValidateResponse{}, nomadapi.JobValidateResponse{}},
		{JobsParseRequest{}, nomadapi.JobsParseRequest{}},
		{JobEvaluateRequest{}, nomadapi.JobEvaluateRequest{}},
		{JobVersionsResponse{}, nomadapi.JobVersionsResponse{}},
		{JobDispatchRequest{}, nomadapi.JobDispatchRequest{}},
		{JobDispatchResponse{}, nomadapi.JobDispatchResponse{}},
		{JobRevertRequest{}, nomadapi.JobRevertRequest{}},
		{JobStabilityRequest{}, nomadapi.JobStabilityRequest{}},
		{JobStabilityResponse{}, nomadapi.JobStabilityResponse{}},
		{JobVersionTag{}, nomadapi.JobVersionTag{}},
		{TagVersionRequest{}, nomadapi.TagVersionRequest{}},
		{ScalingRequest{}, nomadapi.ScalingRequest{}},
		{JobScaleStatusResponse{}, nomadapi.JobScaleStatusResponse{}},
		{TaskGroupScaleStatus{}, nomadapi.TaskGroupScaleStatus{}},
		{ScalingEvent{}, nomadapi.ScalingEvent{}},
		{Evaluation{}, nomadapi.Evaluation{}},
		{Allocation{}, nomadapi.Allocation{}},
		{AllocationListStub{}, nomadapi.AllocationListStub{}},
		{AllocStopResponse{}, nomadapi.AllocStopResponse{}},
		{Node{}, nomadapi.Node{}},
		{NodeListStub{}, nomadapi.NodeListStub{}},
		{NodeUpdateDrainRequest{}, nomadapi.NodeUpdateDrainRequest{}},
		{NodeDrainUpdateResponse{}, nomadapi.NodeDrainUpdateResponse{}},
		{NodeUpdateEligibilityRequest{}, nomadapi.NodeUpdateEligibilityRequest{}},
		{NodeEligibilityUpdateResponse{}, nomadapi.NodeEligibilityUpdateResponse{}},
		{AgentSelf{}, nomadapi.AgentSelf{}},
		{ServerMembers{}, nomadapi.ServerMembers{}},
		{AgentHealthResponse{}, nomadapi.AgentHealthResponse{}},
		{AgentSchedulerWorkersInfo{}, nomadapi.AgentSchedulerWorkersInfo{}},
		{AgentSchedulerWorkerConfigRequest{}, nomadapi.AgentSchedulerWorkerConfigRequest{}},
		{AgentSchedulerWorkerConfigResponse{}, nomadapi.AgentSchedulerWorkerConfigResponse{}},
		{SchedulerConfigurationResponse{}, nomadapi.SchedulerConfigurationResponse{}},
		{SchedulerSetConfigurationResponse{}, nomadapi.SchedulerSetConfigurationResponse{}},
		{RaftConfiguration{}, nomadapi.RaftConfiguration{}},
		{Events{}, nomadapi.Events{}},
		{MetricsSummary{}, nomadapi.MetricsSummary{}},
	}
	for _, p := range pairs {
		ours, theirs := reflect.TypeOf(p.ours), reflect.TypeOf(p.theirs)
		t.Run(ours.Name(), func(t *testing.T) {
			compareWireType(t, ours.Name(), ours, theirs, map[reflect.Type]bool{})
		})
	}
}

// wireDifferences are deliberate: fields whose Go type differs from
// Nomad's but whose JSON is the same.
var wireDifferences = map[string]bool{
	// Raw JSON per payload kind instead of map[string]any.
	"Events.Events.Payload": true,
	// Nomad's metric values embed *AggregateSample; ours flattens the same
	// JSON fields.
	"MetricsSummary.Counters.Count": true, "MetricsSummary.Counters.Rate": true,
	"MetricsSummary.Counters.Sum": true, "MetricsSummary.Counters.Min": true,
	"MetricsSummary.Counters.Max": true, "MetricsSummary.Samples.Count": true,
	"MetricsSummary.Samples.Rate": true, "MetricsSummary.Samples.Sum": true,
	"MetricsSummary.Samples.Min": true, "MetricsSummary.Samples.Max": true,
}

// extraFields are fields the server sends (per the API facts) that Nomad's
// Go package does not model; Nomad's clients ignore them.
var extraFields = map[string]bool{
	"JobListStub.NodePool":                true,
	"AllocatedCpuResources.ReservedCores": true,
	"Event.Namespace":                     true,
	// The nodes that came closest to a failed placement are ours.
	"AllocationMetric.ClosestNodes": true,
	// Pausing every scheduler worker of a server is our extension.
	"AgentSchedulerWorkerConfigRequest.paused":  true,
	"AgentSchedulerWorkerConfigResponse.paused": true,
	// So are the pause of one worker and showing it, for any server.
	"AgentSchedulerWorkersInfo.paused":         true,
	"AgentSchedulerWorkerInfo.operator_paused": true,
	// The eval backlog limit (backpressure) is our extension; a write
	// without it keeps the stored limit.
	"SchedulerConfiguration.EvalBacklogLimit": true,
}

func compareWireType(t *testing.T, path string, ours, theirs reflect.Type, seen map[reflect.Type]bool) {
	t.Helper()
	ours, theirs = derefType(ours), derefType(theirs)
	if wireDifferences[path] {
		return
	}
	if kindClass(ours) != kindClass(theirs) {
		t.Errorf("%s: our %s is %s on the wire, Nomad's %s is %s", path, ours, kindClass(ours), theirs, kindClass(theirs))
		return
	}
	switch ours.Kind() {
	case reflect.Slice, reflect.Array:
		compareWireType(t, path, ours.Elem(), theirs.Elem(), seen)
	case reflect.Map:
		compareWireType(t, path, ours.Elem(), theirs.Elem(), seen)
	case reflect.Struct:
		if ours == reflect.TypeOf(time.Time{}) || seen[ours] {
			return
		}
		seen[ours] = true
		theirFields := jsonFields(theirs)
		for name, f := range jsonFields(ours) {
			tf, ok := theirFields[name]
			if !ok {
				if !wireDifferences[path+"."+name] && !extraFields[ours.Name()+"."+name] {
					t.Errorf("%s.%s: Nomad's %s has no such JSON field", path, name, theirs)
				}
				continue
			}
			compareWireType(t, path+"."+name, f.Type, tf.Type, seen)
		}
	}
}

// jsonFields maps JSON names to fields, flattening embedded structs the
// way encoding/json does.
func jsonFields(typ reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" && derefType(f.Type).Kind() == reflect.Struct {
			for n, ef := range jsonFields(derefType(f.Type)) {
				if _, dup := out[n]; !dup {
					out[n] = ef
				}
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// kindClass is how a Go type looks in JSON.
func kindClass(t reflect.Type) string {
	if t == reflect.TypeOf(time.Time{}) {
		return "time"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Interface:
		return "any"
	}
	return t.Kind().String()
}

// canonicalizeInputs are job documents as a user or tool would submit them.
var canonicalizeInputs = map[string]string{
	"minimal service": `{"ID":"web","TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"raw_exec"}]}]}`,
	"batch with overrides": `{"ID":"report","Type":"batch","Priority":30,
		"Reschedule":{"Attempts":4},
		"TaskGroups":[{"Name":"g","Count":0,"RestartPolicy":{"Mode":"delay"},
		  "EphemeralDisk":{"SizeMB":50},
		  "Tasks":[{"Name":"t","Resources":{"Cores":1},"LogConfig":{"MaxFiles":2},
		            "RestartPolicy":{"Attempts":1}}]}]}`,
	"sysbatch": `{"ID":"sweep","Type":"sysbatch","TaskGroups":[{"Name":"g","Tasks":[{"Name":"t"}]}]}`,
	"system":   `{"ID":"agent","Type":"system","Update":{"MaxParallel":0},"TaskGroups":[{"Name":"g"}]}`,
	"service with everything": `{"ID":"full","Name":"Full","Namespace":"prod","Region":"eu","Datacenters":["dc1"],
		"NodePool":"gpu","AllAtOnce":true,
		"Update":{"MaxParallel":2,"Canary":1,"AutoPromote":true},
		"Migrate":{"MaxParallel":3},
		"Periodic":{"Spec":"@daily","TimeZone":""},
		"Spreads":[{"Attribute":"${node.datacenter}","SpreadTarget":[{"Value":"dc1","Percent":100}]}],
		"Affinities":[{"LTarget":"${meta.rack}","RTarget":"r1","Operand":"="}],
		"TaskGroups":[{"Name":"g","Update":{"MinHealthyTime":20000000000},
		  "Scaling":{"Min":2,"Max":10},
		  "Disconnect":{"LostAfter":60000000000},
		  "Consul":{"Cluster":""},
		  "Networks":[{"Mode":"bridge","DynamicPorts":[{"Label":"http","To":8080}]}],
		  "Services":[{"PortLabel":"http","CheckRestart":{"Limit":3},
		     "Checks":[{"Type":"http","Path":"/health","Interval":10000000000,"Timeout":2000000000,"FailuresBeforeCritical":-1}]}],
		  "Tasks":[{"Name":"t","Driver":"docker","Config":{"image":"redis:7"},
		    "Services":[{"Name":"","PortLabel":"http"}],
		    "Affinities":[{"LTarget":"${attr.cpu.arch}","RTarget":"amd64","Operand":"="}],
		    "Artifacts":[{"GetterSource":"https://example.com/file.tgz","GetterMode":"file"}],
		    "Templates":[{"EmbeddedTmpl":"x","DestPath":"local/x","ChangeMode":"signal"}],
		    "Vault":{"Policies":["p"]},
		    "VolumeMounts":[{"Volume":"data","Destination":"/data"}],
		    "CSIPluginConfig":{"ID":"ebs","Type":"node"},
		    "Resources":{"CPU":500,"MemoryMB":512,"MemoryMaxMB":1024,"Devices":[{"Name":"nvidia/gpu"}]}}]}]}`,
}

func TestCanonicalizeMatchesNomadAPI(t *testing.T) {
	for name, input := range canonicalizeInputs {
		t.Run(name, func(t *testing.T) {
			var ours Job
			if err := json.Unmarshal([]byte(input), &ours); err != nil {
				t.Fatal(err)
			}
			ours.Canonicalize()
			ourJSON, _ := json.Marshal(&ours)
			// Read our result through Nomad's type so both sides render the
			// same set of fields.
			var viaNomad nomadapi.Job
			if err := json.Unmarshal(ourJSON, &viaNomad); err != nil {
				t.Fatalf("Nomad cannot decode our job: %v", err)
			}
			got, _ := json.Marshal(&viaNomad)

			var theirs nomadapi.Job
			if err := json.Unmarshal([]byte(input), &theirs); err != nil {
				t.Fatal(err)
			}
			theirs.Canonicalize()
			want, _ := json.Marshal(&theirs)
			if string(got) != string(want) {
				t.Fatalf("canonical jobs differ\n ours: %s\nNomad: %s", got, want)
			}
		})
	}
}

func TestNomadJobDecodesIntoOurs(t *testing.T) {
	// A job built and canonicalized with Nomad's package must survive a trip
	// through our type unchanged in every field we model.
	job := nomadapi.NewServiceJob("web", "web", "global", 70)
	job.AddDatacenter("dc1")
	tg := nomadapi.NewTaskGroup("g", 2)
	task := nomadapi.NewTask("t", "raw_exec").SetConfig("command", "/bin/sleep").SetConfig("args", []string{"60"})
	task.Require(&nomadapi.Resources{CPU: new(200), MemoryMB: new(64)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	job.Canonicalize()
	src, _ := json.Marshal(job)

	var ours Job
	if err := json.Unmarshal(src, &ours); err != nil {
		t.Fatal(err)
	}
	back, _ := json.Marshal(&ours)
	var again nomadapi.Job
	if err := json.Unmarshal(back, &again); err != nil {
		t.Fatal(err)
	}
	round, _ := json.Marshal(&again)
	if string(round) != string(src) {
		t.Fatalf("round trip changed the job\n before: %s\n  after: %s", src, round)
	}
}
