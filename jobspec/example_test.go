package jobspec

import (
	"testing"
	"time"
)

func TestExampleJobRunsOnADevAgent(t *testing.T) {
	res, err := Parse(ExampleJobFileName, ExampleJob(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 0 {
		t.Fatalf("the example must use only blocks the server acts on: %v", res.Warnings)
	}
	j := res.Job
	j.Canonicalize()
	if *j.ID != "example" || *j.Type != "service" || len(j.TaskGroups) != 1 {
		t.Fatalf("job = %s %s groups=%d", *j.ID, *j.Type, len(j.TaskGroups))
	}
	task := j.TaskGroups[0].Tasks[0]
	if task.Driver != "raw_exec" {
		t.Fatalf("driver = %q; the dev agent enables raw_exec", task.Driver)
	}
	if task.Config["command"] != "/bin/sh" {
		t.Fatalf("config = %v", task.Config)
	}
	// Dev agents sit in dc1; the example must not pin another datacenter.
	if len(j.Datacenters) != 1 || j.Datacenters[0] != "*" {
		t.Fatalf("datacenters = %v", j.Datacenters)
	}
	if *task.Resources.MemoryMB != 64 || *j.TaskGroups[0].Update.HealthyDeadline != 3*time.Minute {
		t.Fatalf("resources/update = %+v %+v", task.Resources, j.TaskGroups[0].Update)
	}
}

func TestExampleJobIsACopy(t *testing.T) {
	a := ExampleJob()
	a[0] = 'X'
	if ExampleJob()[0] == 'X' {
		t.Fatal("ExampleJob returned shared bytes")
	}
}
