package structs

import (
	"reflect"
	"testing"
	"time"
)

func minimalJob(typ string) *Job {
	return &Job{
		ID:   "example",
		Type: typ,
		TaskGroups: []*TaskGroup{{
			Name:  "g",
			Count: 1,
			Tasks: []*Task{{Name: "t", Driver: "raw_exec"}},
		}},
	}
}

func TestCanonicalize_JobDefaults(t *testing.T) {
	j := minimalJob("")
	j.Canonicalize()
	checks := []struct {
		field     string
		got, want interface{}
	}{
		{"Namespace", j.Namespace, "default"},
		{"Region", j.Region, "global"},
		{"Name", j.Name, "example"},
		{"Type", j.Type, "service"},
		{"Priority", j.Priority, 50},
		{"Datacenters", j.Datacenters, []string{"*"}},
		{"NodePool", j.NodePool, "default"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
		}
	}
	task := j.TaskGroups[0].Tasks[0]
	if task.Resources.CPU != 100 || task.Resources.MemoryMB != 300 {
		t.Errorf("task resources = %+v, want cpu 100 memory 300", task.Resources)
	}
	if task.KillTimeout != 5*time.Second {
		t.Errorf("kill timeout = %s", task.KillTimeout)
	}
	if *task.LogConfig != (LogConfig{MaxFiles: 10, MaxFileSizeMB: 10}) {
		t.Errorf("log config = %+v", task.LogConfig)
	}
	if *j.TaskGroups[0].EphemeralDisk != (EphemeralDisk{SizeMB: 300}) {
		t.Errorf("ephemeral disk = %+v", j.TaskGroups[0].EphemeralDisk)
	}
	if err := j.Validate(); err != nil {
		t.Errorf("canonicalized minimal job is invalid: %v", err)
	}
}

func TestCanonicalize_PoliciesPerType(t *testing.T) {
	service := &RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: "fail"}
	batch := &RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: "fail"}
	cases := []struct {
		typ        string
		restart    *RestartPolicy
		reschedule *ReschedulePolicy
		migrate    *MigrateStrategy
	}{
		{JobTypeService, service,
			&ReschedulePolicy{Delay: 30 * time.Second, DelayFunction: "exponential", MaxDelay: time.Hour, Unlimited: true},
			&MigrateStrategy{MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute}},
		{JobTypeBatch, batch,
			&ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second, DelayFunction: "constant"}, nil},
		{JobTypeSystem, service, nil, nil},
		{JobTypeSysBatch, batch, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.typ, func(t *testing.T) {
			j := minimalJob(c.typ)
			j.Canonicalize()
			tg := j.TaskGroups[0]
			if !reflect.DeepEqual(tg.RestartPolicy, c.restart) {
				t.Errorf("restart = %+v, want %+v", tg.RestartPolicy, c.restart)
			}
			if !reflect.DeepEqual(tg.ReschedulePolicy, c.reschedule) {
				t.Errorf("reschedule = %+v, want %+v", tg.ReschedulePolicy, c.reschedule)
			}
			if !reflect.DeepEqual(tg.Migrate, c.migrate) {
				t.Errorf("migrate = %+v, want %+v", tg.Migrate, c.migrate)
			}
			if tg.Update != nil {
				t.Errorf("update = %+v, want none without an update block", tg.Update)
			}
			if err := j.Validate(); err != nil {
				t.Errorf("invalid: %v", err)
			}
		})
	}
}

func TestCanonicalize_PartialBlocks(t *testing.T) {
	j := minimalJob(JobTypeService)
	tg := j.TaskGroups[0]
	tg.RestartPolicy = &RestartPolicy{Attempts: 1}
	tg.ReschedulePolicy = &ReschedulePolicy{Attempts: 2, Delay: 10 * time.Second}
	tg.Migrate = &MigrateStrategy{MaxParallel: 2}
	tg.EphemeralDisk = &EphemeralDisk{Sticky: true}
	tg.Networks = Networks{{}}
	tg.Affinities = []*Affinity{{LTarget: "${node.class}", RTarget: "x", Operand: "="}}
	tg.Spreads = []*Spread{{Attribute: "${node.datacenter}"}}
	task := tg.Tasks[0]
	task.LogConfig = &LogConfig{MaxFiles: 3}
	task.Resources = &Resources{MemoryMB: 64}
	j.Canonicalize()

	if got := *tg.RestartPolicy; got != (RestartPolicy{Attempts: 1, Interval: 30 * time.Minute, Mode: "fail"}) {
		t.Errorf("restart = %+v", got)
	}
	// The service default reschedules exponentially, so the cap comes with
	// it; 2 attempts need an interval, which the service default lacks, so
	// the batch default (24h) is taken.
	if got := *tg.ReschedulePolicy; got != (ReschedulePolicy{Attempts: 2, Interval: 24 * time.Hour, Delay: 10 * time.Second,
		DelayFunction: "exponential", MaxDelay: time.Hour}) {
		t.Errorf("reschedule = %+v", got)
	}
	if got := *tg.Migrate; got != (MigrateStrategy{MaxParallel: 2, HealthCheck: "checks", HealthyDeadline: 5 * time.Minute}) {
		t.Errorf("migrate = %+v", got)
	}
	if got := *tg.EphemeralDisk; got != (EphemeralDisk{Sticky: true, SizeMB: 300}) {
		t.Errorf("disk = %+v", got)
	}
	if tg.Networks[0].Mode != "host" {
		t.Errorf("network mode = %q", tg.Networks[0].Mode)
	}
	if tg.Affinities[0].Weight != 50 || tg.Spreads[0].Weight != 50 {
		t.Errorf("weights = %d, %d", tg.Affinities[0].Weight, tg.Spreads[0].Weight)
	}
	if got := *task.LogConfig; got != (LogConfig{MaxFiles: 3, MaxFileSizeMB: 10}) {
		t.Errorf("logs = %+v", got)
	}
	if task.Resources.CPU != 100 || task.Resources.MemoryMB != 64 {
		t.Errorf("resources = %+v", task.Resources)
	}
	if err := j.Validate(); err != nil {
		t.Errorf("invalid: %v", err)
	}
}

func TestCanonicalize_UpdateMerge(t *testing.T) {
	cases := []struct {
		name     string
		typ      string
		jobLevel UpdateStrategy
		group    *UpdateStrategy
		want     *UpdateStrategy
	}{
		{"no blocks", JobTypeService, UpdateStrategy{}, nil, nil},
		{"job level only", JobTypeService, UpdateStrategy{MaxParallel: 2, Canary: 1}, nil,
			&UpdateStrategy{Stagger: 30 * time.Second, MaxParallel: 2, HealthCheck: "checks", MinHealthyTime: 10 * time.Second,
				HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute, Canary: 1}},
		{"group overrides job", JobTypeService, UpdateStrategy{MaxParallel: 2, AutoRevert: true},
			&UpdateStrategy{MaxParallel: 3, HealthCheck: "task_states"},
			&UpdateStrategy{Stagger: 30 * time.Second, MaxParallel: 3, HealthCheck: "task_states", MinHealthyTime: 10 * time.Second,
				HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute, AutoRevert: true}},
		{"empty group block means defaults", JobTypeSystem, UpdateStrategy{}, &UpdateStrategy{},
			DefaultUpdateStrategy()},
		{"unset fields take defaults", JobTypeService, UpdateStrategy{}, &UpdateStrategy{HealthCheck: "manual"}, &UpdateStrategy{
			Stagger: 30 * time.Second, MaxParallel: 1, HealthCheck: "manual", MinHealthyTime: 10 * time.Second,
			HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute}},
		{"batch never rolls", JobTypeBatch, UpdateStrategy{MaxParallel: 2}, &UpdateStrategy{MaxParallel: 2}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := minimalJob(c.typ)
			j.Update = c.jobLevel
			j.TaskGroups[0].Update = c.group
			j.Canonicalize()
			if !reflect.DeepEqual(j.TaskGroups[0].Update, c.want) {
				t.Errorf("update = %+v, want %+v", j.TaskGroups[0].Update, c.want)
			}
		})
	}
}

// A reschedule policy on a system job is kept so that Validate can say it
// is not allowed, instead of silently dropping what the user wrote.
func TestCanonicalize_SystemReschedulePolicyKept(t *testing.T) {
	j := minimalJob(JobTypeSystem)
	j.TaskGroups[0].ReschedulePolicy = &ReschedulePolicy{Attempts: 1}
	j.Canonicalize()
	if j.TaskGroups[0].ReschedulePolicy == nil {
		t.Fatal("policy dropped")
	}
	if err := j.Validate(); err == nil {
		t.Fatal("system job with a reschedule policy passed validation")
	}
}

func TestCanonicalize_Idempotent(t *testing.T) {
	for _, typ := range []string{JobTypeService, JobTypeBatch, JobTypeSystem, JobTypeSysBatch} {
		j := minimalJob(typ)
		j.Update = UpdateStrategy{MaxParallel: 2}
		j.Periodic = &PeriodicConfig{Spec: "@daily"}
		j.Canonicalize()
		once := j.Copy()
		j.Canonicalize()
		if !reflect.DeepEqual(once, j) {
			t.Errorf("%s: second Canonicalize changed the job", typ)
		}
		if j.Periodic.SpecType != "cron" {
			t.Errorf("%s: spec type %q", typ, j.Periodic.SpecType)
		}
	}
}

func TestCanonicalize_NilEntriesDoNotPanic(t *testing.T) {
	j := minimalJob(JobTypeService)
	j.TaskGroups = append(j.TaskGroups, nil)
	j.TaskGroups[0].Tasks = append(j.TaskGroups[0].Tasks, nil)
	j.TaskGroups[0].Networks = Networks{nil}
	j.TaskGroups[0].Affinities = []*Affinity{nil}
	j.Canonicalize()
	if err := j.Validate(); err == nil {
		t.Fatal("nil entries passed validation")
	}
	var nilJob *Job
	nilJob.Canonicalize()
}
