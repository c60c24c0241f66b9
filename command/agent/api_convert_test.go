package agent

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// fullJob sets every api field the server supports to a non-zero value.
func fullJob() *api.Job {
	return &api.Job{
		Region: new("r1"), Namespace: new("ns"), ID: new("web"), Name: new("web-name"),
		Type: new("batch"), Priority: new(70), AllAtOnce: new(true),
		Datacenters: []string{"dc1"}, NodePool: new("pool"),
		Constraints: []*api.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}},
		Affinities:  []*api.Affinity{{LTarget: "${node.class}", RTarget: "a", Operand: "=", Weight: new(int8(40))}},
		Spreads: []*api.Spread{{Attribute: "${node.datacenter}", Weight: new(int8(30)),
			SpreadTarget: []*api.SpreadTarget{{Value: "dc1", Percent: 50}}}},
		Update: &api.UpdateStrategy{
			Stagger: new(time.Second), MaxParallel: new(2), HealthCheck: new("task_states"),
			MinHealthyTime: new(time.Second), HealthyDeadline: new(time.Minute), ProgressDeadline: new(2 * time.Minute),
			Canary: new(1), AutoRevert: new(true), AutoPromote: new(true),
		},
		Periodic: &api.PeriodicConfig{Enabled: new(true), Spec: new("*/5 * * * *"), Specs: []string{"* * * * *"},
			ProhibitOverlap: new(true), TimeZone: new("Europe/Paris")},
		ParameterizedJob: &api.ParameterizedJobConfig{Payload: "optional", MetaRequired: []string{"a"}, MetaOptional: []string{"b"}},
		Meta:             map[string]string{"k": "v"},
		Stop:             new(true),
		ParentID:         new("parent"),
		Dispatched:       true,
		Payload:          []byte("payload"),
		TaskGroups: []*api.TaskGroup{{
			Name: new("g"), Count: new(3),
			Constraints: []*api.Constraint{{LTarget: "a", RTarget: "b", Operand: "="}},
			Affinities:  []*api.Affinity{{LTarget: "a", RTarget: "b", Operand: "=", Weight: new(int8(10))}},
			Spreads: []*api.Spread{{Attribute: "a", Weight: new(int8(10)),
				SpreadTarget: []*api.SpreadTarget{{Value: "x", Percent: 10}}}},
			RestartPolicy: &api.RestartPolicy{Interval: new(time.Hour), Attempts: new(4), Delay: new(time.Second),
				Mode: new("delay"), RenderTemplates: new(true)},
			ReschedulePolicy: &api.ReschedulePolicy{Attempts: new(1), Interval: new(time.Hour), Delay: new(time.Second),
				DelayFunction: new("constant"), MaxDelay: new(time.Minute), Unlimited: new(true)},
			EphemeralDisk: &api.EphemeralDisk{Sticky: new(true), Migrate: new(true), SizeMB: new(500)},
			Update:        &api.UpdateStrategy{MaxParallel: new(3)},
			Migrate: &api.MigrateStrategy{MaxParallel: new(2), HealthCheck: new("checks"),
				MinHealthyTime: new(time.Second), HealthyDeadline: new(time.Minute)},
			Networks: []*api.NetworkResource{{Mode: "host", Device: "eth0", CIDR: "10.0.0.0/8", IP: "10.0.0.1",
				Hostname: "h", MBits: new(10),
				ReservedPorts: []api.Port{{Label: "admin", Value: 8080, To: 80, HostNetwork: "public"}},
				// A dynamic port's value is the server's to pick; set here
				// only to show it is carried.
				DynamicPorts: []api.Port{{Label: "http", Value: 1, To: 8080, HostNetwork: "default"}}}},
			Meta:                      map[string]string{"g": "1"},
			Services:                  []*api.Service{fullService("t")},
			ShutdownDelay:             new(time.Second),
			StopAfterClientDisconnect: new(time.Minute),
			MaxClientDisconnect:       new(time.Hour),
			Scaling: &api.ScalingPolicy{Min: new(int64(1)), Max: new(int64(5)), Enabled: new(true),
				Type: api.ScalingPolicyTypeHorizontal, Policy: map[string]any{"k": "v"}},
			Tasks: []*api.Task{{
				Name: "t", Driver: "raw_exec", User: "nobody",
				Config:      map[string]any{"command": "/bin/true"},
				Env:         map[string]string{"E": "1"},
				Constraints: []*api.Constraint{{LTarget: "a", RTarget: "b", Operand: "="}},
				Affinities:  []*api.Affinity{{LTarget: "a", RTarget: "b", Operand: "=", Weight: new(int8(10))}},
				Resources: &api.Resources{CPU: new(200), Cores: new(1), MemoryMB: new(128), MemoryMaxMB: new(256),
					DiskMB: new(10), IOPS: new(5), Networks: []*api.NetworkResource{{Mode: "host", Device: "eth1", CIDR: "10.0.0.0/8",
						IP: "10.0.0.2", Hostname: "t", MBits: new(1),
						ReservedPorts: []api.Port{{Label: "a", Value: 1, To: 1, HostNetwork: "n"}},
						DynamicPorts:  []api.Port{{Label: "b", Value: 2, To: 2, HostNetwork: "n"}}}}},
				Meta:            map[string]string{"t": "1"},
				Services:        []*api.Service{fullService("t")},
				KillTimeout:     new(9 * time.Second),
				KillSignal:      "SIGTERM",
				LogConfig:       &api.LogConfig{MaxFiles: new(3), MaxFileSizeMB: new(4), Disabled: new(true)},
				Lifecycle:       &api.TaskLifecycle{Hook: "prestart", Sidecar: true},
				Leader:          true,
				DispatchPayload: &api.DispatchPayloadConfig{File: "in.json"},
				VolumeMounts: []*api.VolumeMount{{Volume: new("data"), Destination: new("/data"), ReadOnly: new(true),
					PropagationMode: new("host-to-task"), SELinuxLabel: new("z")}},
				Actions: []*api.Action{{Name: "hello", Command: "/bin/echo", Args: []string{"hi"}}},
			}},
			Volumes: map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "src", ReadOnly: true,
				Sticky: true, AccessMode: "single-node-reader-only", AttachmentMode: "file-system", PerAlloc: true,
				MountOptions: &api.CSIMountOptions{FSType: "ext4", MountFlags: []string{"noatime"}}}},
		}},
	}
}

// fullService is a service block with every field the server keeps set.
func fullService(task string) *api.Service {
	return &api.Service{Name: "web", TaskName: task, PortLabel: "http", AddressMode: "host", Address: "10.0.0.9",
		Tags: []string{"a"}, CanaryTags: []string{"c"}, Meta: map[string]string{"m": "1"},
		CanaryMeta: map[string]string{"cm": "1"}, OnUpdate: "ignore", Provider: "nomad",
		Checks: []api.ServiceCheck{{Name: "alive", Type: "http", Path: "/health", Protocol: "https",
			Method: "POST", Header: map[string][]string{"X": {"y"}}, Body: "{}", PortLabel: "http",
			AddressMode: "host", Interval: time.Second, Timeout: time.Second, InitialStatus: "passing",
			TLSSkipVerify: true, TaskName: task, OnUpdate: "ignore"}}}
}

// serverOwned are structs fields a submitted job cannot set.
var serverOwned = map[string]bool{
	"Job.Status": true, "Job.StatusDescription": true, "Job.Stable": true, "Job.Version": true,
	"Job.SubmitTime": true, "Job.CreateIndex": true, "Job.ModifyIndex": true, "Job.JobModifyIndex": true,
	// Tags are applied to a stored version (job tag apply), never submitted.
	"Job.VersionTag": true,
	// The server names a scaling policy and stamps its indexes.
	"ScalingPolicy.ID": true, "ScalingPolicy.Target": true, "ScalingPolicy.CreateIndex": true, "ScalingPolicy.ModifyIndex": true,
}

// TestConvertJob_NoFieldForgotten converts a job with every supported
// field set and checks that no field of the result is left zero: a field
// added to structs without a conversion fails here.
func TestConvertJob_NoFieldForgotten(t *testing.T) {
	out, warnings := convertJob(fullJob())
	must.SliceEmpty(t, warnings)
	var zero []string
	findZero(reflect.ValueOf(out).Elem(), "Job", &zero)
	must.SliceEmpty(t, zero, must.Sprintf("fields left unset by the conversion: %v", zero))
}

func findZero(v reflect.Value, path string, zero *[]string) {
	if serverOwned[path] {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			*zero = append(*zero, path)
			return
		}
		findZero(v.Elem(), path, zero)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			if v.Interface().(time.Time).IsZero() {
				*zero = append(*zero, path)
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.IsExported() {
				findZero(v.Field(i), v.Type().Name()+"."+f.Name, zero)
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			*zero = append(*zero, path)
			return
		}
		for i := 0; i < v.Len(); i++ {
			findZero(v.Index(i), path, zero)
		}
	case reflect.Map:
		if v.Len() == 0 {
			*zero = append(*zero, path)
		}
	default:
		if v.IsZero() {
			*zero = append(*zero, path)
		}
	}
}

func TestConvertJob_Values(t *testing.T) {
	out, _ := convertJob(fullJob())
	must.Eq(t, "r1", out.Region)
	must.Eq(t, "ns", out.Namespace)
	must.Eq(t, structs.UpdateStrategy{Stagger: time.Second, MaxParallel: 2, HealthCheck: "task_states",
		MinHealthyTime: time.Second, HealthyDeadline: time.Minute, ProgressDeadline: 2 * time.Minute,
		AutoRevert: true, AutoPromote: true, Canary: 1}, out.Update)
	tg := out.TaskGroups[0]
	// The group's update block is merged over the job's by api canonicalization.
	must.Eq(t, 3, tg.Update.MaxParallel)
	must.Eq(t, 1, tg.Update.Canary)
	must.Eq(t, []structs.Port{{Label: "admin", Value: 8080, To: 80, HostNetwork: "public"}}, tg.Networks[0].ReservedPorts)
	task := tg.Tasks[0]
	must.Eq(t, 200, task.Resources.CPU)
	must.Eq(t, 1, task.Resources.Cores)
	must.Eq(t, 256, task.Resources.MemoryMaxMB)
	must.Eq(t, "eth1", task.Resources.Networks[0].Device)
	must.Eq(t, &structs.LogConfig{MaxFiles: 3, MaxFileSizeMB: 4, Disabled: true}, task.LogConfig)
}

func TestConvertJob_Defaults(t *testing.T) {
	// A minimal job gets Nomad's defaults from canonicalization.
	out, _ := convertJob(&api.Job{ID: new("x"), TaskGroups: []*api.TaskGroup{{Name: new("g"),
		Tasks: []*api.Task{{Name: "t", Driver: "raw_exec"}}}}})
	out.Canonicalize()
	must.NoError(t, out.Validate())
	must.Eq(t, "service", out.Type)
	must.Eq(t, 50, out.Priority)
	tg := out.TaskGroups[0]
	must.Eq(t, 1, tg.Count)
	must.Eq(t, &structs.RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: "fail"}, tg.RestartPolicy)
	must.Eq(t, 5*time.Second, tg.Tasks[0].KillTimeout)
	must.Eq(t, 100, tg.Tasks[0].Resources.CPU)
	must.Eq(t, 300, tg.Tasks[0].Resources.MemoryMB)
}

func TestConvertJob_Warnings(t *testing.T) {
	cases := []struct {
		name string
		edit func(j *api.Job)
		want string
	}{
		{"service check_restart", func(j *api.Job) {
			j.TaskGroups[0].Services = []*api.Service{{Name: "s", CheckRestart: &api.CheckRestart{Limit: 3}}}
		}, `group "g": service "s": check_restart blocks are not supported`},
		{"disconnect replace", func(j *api.Job) { j.TaskGroups[0].Disconnect = &api.DisconnectStrategy{Replace: new(false)} },
			`group "g": disconnect.replace = false is not supported`},
		{"task artifact", func(j *api.Job) { j.TaskGroups[0].Tasks[0].Artifacts = []*api.TaskArtifact{{}} },
			`group "g": task "t": artifact blocks are not supported`},
		{"task vault", func(j *api.Job) { j.TaskGroups[0].Tasks[0].Vault = &api.Vault{} },
			`group "g": task "t": vault blocks are not supported`},
		{"task device", func(j *api.Job) {
			j.TaskGroups[0].Tasks[0].Resources.Devices = []*api.RequestedDevice{{Name: "gpu"}}
		}, `group "g": task "t": device blocks are not supported`},
		{"task restart", func(j *api.Job) {
			j.TaskGroups[0].Tasks[0].RestartPolicy = &api.RestartPolicy{Attempts: new(9)}
		}, `group "g": task "t": task-level restart blocks are not supported by this server; the group's restart policy applies`},
		{"port collision", func(j *api.Job) {
			j.TaskGroups[0].Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "p", IgnoreCollision: true}}}}
		}, `group "g": port "p": ignore_collision is not supported`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := &api.Job{ID: new("x"), TaskGroups: []*api.TaskGroup{{Name: new("g"),
				Tasks: []*api.Task{{Name: "t", Driver: "raw_exec", Resources: &api.Resources{}}}}}}
			tc.edit(j)
			_, warnings := convertJob(j)
			must.Len(t, 1, warnings)
			must.True(t, strings.HasPrefix(warnings[0], tc.want), must.Sprint(warnings[0]))
		})
	}

	// The same restart policy on the task as on its group is no change.
	j := &api.Job{ID: new("x"), TaskGroups: []*api.TaskGroup{{Name: new("g"),
		RestartPolicy: &api.RestartPolicy{Attempts: new(1)},
		Tasks:         []*api.Task{{Name: "t", Driver: "raw_exec", RestartPolicy: &api.RestartPolicy{Attempts: new(1)}}}}}}
	_, warnings := convertJob(j)
	must.SliceEmpty(t, warnings)
}

func TestConvertDrainAndSchedulerConfig(t *testing.T) {
	must.Nil(t, convertDrainSpec(nil))
	must.Eq(t, &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: -1}},
		convertDrainSpec(&api.DrainSpec{Deadline: -1}))

	got := convertSchedulerConfig(&api.SchedulerConfiguration{
		SchedulerAlgorithm: "spread", MemoryOversubscriptionEnabled: true, RejectJobRegistration: true,
		PauseEvalBroker: true, NodeLimitForFeasibilityChecks: 7, EvalBacklogLimit: new(uint(9)),
		PreemptionConfig: api.PreemptionConfig{SystemSchedulerEnabled: true, SysBatchSchedulerEnabled: true,
			BatchSchedulerEnabled: true, ServiceSchedulerEnabled: true},
		CreateIndex: 1, ModifyIndex: 2,
	})
	var zero []string
	findZero(reflect.ValueOf(got), "SchedulerConfiguration", &zero)
	must.SliceEmpty(t, zero)
}
