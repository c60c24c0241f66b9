package api

import (
	"encoding/json"
	"testing"
	"time"
)

func TestJobCanonicalizeDefaults(t *testing.T) {
	cases := []struct {
		name  string
		job   *Job
		check func(t *testing.T, j *Job)
	}{
		{
			name: "bare service job",
			job: &Job{ID: new("web"), TaskGroups: []*TaskGroup{{
				Name:  new("g"),
				Tasks: []*Task{{Name: "t", Driver: "raw_exec"}},
			}}},
			check: func(t *testing.T, j *Job) {
				tg := j.TaskGroups[0]
				task := tg.Tasks[0]
				expectEq(t, "name", *j.Name, "web")
				expectEq(t, "namespace", *j.Namespace, "default")
				expectEq(t, "region", *j.Region, "global")
				expectEq(t, "type", *j.Type, "service")
				expectEq(t, "priority", *j.Priority, 50)
				expectEq(t, "node pool left for the server", *j.NodePool, "")
				if j.Datacenters != nil {
					t.Errorf("datacenters = %v, want nil (server defaults them)", j.Datacenters)
				}
				expectEq(t, "job update max_parallel", *j.Update.MaxParallel, 1)
				expectEq(t, "job update progress deadline", *j.Update.ProgressDeadline, 10*time.Minute)
				expectEq(t, "count", *tg.Count, 1)
				expectEq(t, "group update inherited", *tg.Update.HealthyDeadline, 5*time.Minute)
				expectEq(t, "restart attempts", *tg.RestartPolicy.Attempts, 2)
				expectEq(t, "restart interval", *tg.RestartPolicy.Interval, 30*time.Minute)
				expectEq(t, "restart delay", *tg.RestartPolicy.Delay, 15*time.Second)
				expectEq(t, "restart mode", *tg.RestartPolicy.Mode, "fail")
				expectEq(t, "reschedule delay", *tg.ReschedulePolicy.Delay, 30*time.Second)
				expectEq(t, "reschedule function", *tg.ReschedulePolicy.DelayFunction, "exponential")
				expectEq(t, "reschedule max delay", *tg.ReschedulePolicy.MaxDelay, time.Hour)
				expectEq(t, "reschedule unlimited", *tg.ReschedulePolicy.Unlimited, true)
				expectEq(t, "migrate max_parallel", *tg.Migrate.MaxParallel, 1)
				expectEq(t, "migrate min healthy", *tg.Migrate.MinHealthyTime, 10*time.Second)
				expectEq(t, "disk size", *tg.EphemeralDisk.SizeMB, 300)
				expectEq(t, "cpu", *task.Resources.CPU, 100)
				expectEq(t, "memory", *task.Resources.MemoryMB, 300)
				expectEq(t, "cores", *task.Resources.Cores, 0)
				expectEq(t, "kill timeout", *task.KillTimeout, 5*time.Second)
				expectEq(t, "log files", *task.LogConfig.MaxFiles, 10)
				expectEq(t, "log file size", *task.LogConfig.MaxFileSizeMB, 10)
				if task.RestartPolicy != tg.RestartPolicy {
					t.Errorf("task without restart block should share the group's policy")
				}
			},
		},
		{
			name: "batch job",
			job: &Job{ID: new("report"), Type: new("batch"), TaskGroups: []*TaskGroup{{
				Name: new("g"), Tasks: []*Task{{Name: "t"}},
			}}},
			check: func(t *testing.T, j *Job) {
				tg := j.TaskGroups[0]
				if j.Update != nil || tg.Update != nil || tg.Migrate != nil {
					t.Errorf("batch jobs get no update/migrate defaults: %+v %+v %+v", j.Update, tg.Update, tg.Migrate)
				}
				expectEq(t, "restart attempts", *tg.RestartPolicy.Attempts, 3)
				expectEq(t, "restart interval", *tg.RestartPolicy.Interval, 24*time.Hour)
				expectEq(t, "reschedule attempts", *tg.ReschedulePolicy.Attempts, 1)
				expectEq(t, "reschedule interval", *tg.ReschedulePolicy.Interval, 24*time.Hour)
				expectEq(t, "reschedule delay", *tg.ReschedulePolicy.Delay, 5*time.Second)
				expectEq(t, "reschedule function", *tg.ReschedulePolicy.DelayFunction, "constant")
				expectEq(t, "reschedule unlimited", *tg.ReschedulePolicy.Unlimited, false)
			},
		},
		{
			name: "system job never reschedules but gets an update block",
			job:  &Job{ID: new("agent"), Type: new("system"), TaskGroups: []*TaskGroup{{Name: new("g")}}},
			check: func(t *testing.T, j *Job) {
				tg := j.TaskGroups[0]
				if tg.ReschedulePolicy != nil {
					t.Errorf("system groups get no reschedule policy: %+v", tg.ReschedulePolicy)
				}
				expectEq(t, "update max_parallel", *tg.Update.MaxParallel, 1)
				expectEq(t, "restart attempts", *tg.RestartPolicy.Attempts, 2)
			},
		},
		{
			name: "job blocks merge under group blocks",
			job: &Job{
				ID:         new("web"),
				Update:     &UpdateStrategy{MaxParallel: new(3), Canary: new(1)},
				Reschedule: &ReschedulePolicy{Attempts: new(5), Unlimited: new(false)},
				Migrate:    &MigrateStrategy{MaxParallel: new(2)},
				TaskGroups: []*TaskGroup{{
					Name:             new("g"),
					Update:           &UpdateStrategy{Canary: new(2)},
					ReschedulePolicy: &ReschedulePolicy{Delay: new(time.Minute)},
					RestartPolicy:    &RestartPolicy{Attempts: new(9)},
					Tasks: []*Task{{
						Name:          "t",
						RestartPolicy: &RestartPolicy{Mode: new("delay")},
						Resources:     &Resources{Cores: new(2)},
					}},
				}},
			},
			check: func(t *testing.T, j *Job) {
				tg := j.TaskGroups[0]
				task := tg.Tasks[0]
				expectEq(t, "update from job", *tg.Update.MaxParallel, 3)
				expectEq(t, "update from group", *tg.Update.Canary, 2)
				expectEq(t, "update default", *tg.Update.MinHealthyTime, 10*time.Second)
				expectEq(t, "reschedule from job", *tg.ReschedulePolicy.Attempts, 5)
				expectEq(t, "reschedule from group", *tg.ReschedulePolicy.Delay, time.Minute)
				expectEq(t, "reschedule default", *tg.ReschedulePolicy.DelayFunction, "exponential")
				expectEq(t, "migrate from job", *tg.Migrate.MaxParallel, 2)
				expectEq(t, "group restart", *tg.RestartPolicy.Attempts, 9)
				expectEq(t, "task restart inherits attempts", *task.RestartPolicy.Attempts, 9)
				expectEq(t, "task restart mode", *task.RestartPolicy.Mode, "delay")
				expectEq(t, "group restart untouched by task", *tg.RestartPolicy.Mode, "fail")
				expectEq(t, "cores ask keeps cpu at 0", *task.Resources.CPU, 0)
			},
		},
		{
			name: "periodic, spread and affinity",
			job: &Job{
				ID:         new("cron"),
				Type:       new("batch"),
				Periodic:   &PeriodicConfig{Spec: new("*/5 * * * *")},
				Spreads:    []*Spread{{Attribute: "${node.datacenter}"}},
				Affinities: []*Affinity{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "="}},
			},
			check: func(t *testing.T, j *Job) {
				expectEq(t, "periodic enabled", *j.Periodic.Enabled, true)
				expectEq(t, "periodic spec type", *j.Periodic.SpecType, "cron")
				expectEq(t, "periodic time zone", *j.Periodic.TimeZone, "UTC")
				expectEq(t, "prohibit overlap", *j.Periodic.ProhibitOverlap, false)
				expectEq(t, "spread weight", *j.Spreads[0].Weight, int8(50))
				expectEq(t, "affinity weight", *j.Affinities[0].Weight, int8(50))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.job.Canonicalize()
			tc.check(t, tc.job)
			before, _ := json.Marshal(tc.job)
			tc.job.Canonicalize()
			after, _ := json.Marshal(tc.job)
			if string(before) != string(after) {
				t.Errorf("Canonicalize is not idempotent:\n%s\n%s", before, after)
			}
		})
	}
}

func expectEq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// A decoded request body may hold null list entries; Canonicalize must
// leave them for the server to refuse instead of crashing the caller.
func TestJobCanonicalizeNilEntries(t *testing.T) {
	group := func(mod func(g *TaskGroup)) *Job {
		g := &TaskGroup{Name: new("g"), Tasks: []*Task{{Name: "t", Driver: "raw_exec"}}}
		mod(g)
		return &Job{ID: new("web"), TaskGroups: []*TaskGroup{g}}
	}
	task := func(mod func(tk *Task)) *Job {
		return group(func(g *TaskGroup) { mod(g.Tasks[0]) })
	}
	cases := []struct {
		name string
		job  *Job
	}{
		{"job task group", &Job{ID: new("web"), TaskGroups: []*TaskGroup{nil}}},
		{"job spread", &Job{Spreads: []*Spread{nil}}},
		{"job affinity", &Job{Affinities: []*Affinity{nil}}},
		{"job constraint", &Job{Constraints: []*Constraint{nil}}},
		{"group task", group(func(g *TaskGroup) { g.Tasks = append(g.Tasks, nil) })},
		{"group spread", group(func(g *TaskGroup) { g.Spreads = []*Spread{nil} })},
		{"group affinity", group(func(g *TaskGroup) { g.Affinities = []*Affinity{nil} })},
		{"group service", group(func(g *TaskGroup) { g.Services = []*Service{nil} })},
		{"task service", task(func(tk *Task) { tk.Services = []*Service{nil} })},
		{"task affinity", task(func(tk *Task) { tk.Affinities = []*Affinity{nil} })},
		{"task template", task(func(tk *Task) { tk.Templates = []*Template{nil} })},
		{"task artifact", task(func(tk *Task) { tk.Artifacts = []*TaskArtifact{nil} })},
		{"task volume mount", task(func(tk *Task) { tk.VolumeMounts = []*VolumeMount{nil} })},
		{"task device", task(func(tk *Task) {
			tk.Resources = &Resources{Devices: []*RequestedDevice{nil, {Name: "gpu", Affinities: []*Affinity{nil}}}}
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.job.Canonicalize()
			if tc.job.LookupTaskGroup("nope") != nil {
				t.Error("LookupTaskGroup found a group that does not exist")
			}
			for _, g := range tc.job.TaskGroups {
				if g != nil && g.LookupTask("nope") != nil {
					t.Error("LookupTask found a task that does not exist")
				}
			}
		})
	}
	var nilJob *Job
	nilJob.Canonicalize()
}
