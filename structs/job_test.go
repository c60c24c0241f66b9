package structs_test

import (
	"maps"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestJobCopyIsDeep(t *testing.T) {
	j := mock.Job()
	j.Periodic = &structs.PeriodicConfig{Enabled: true, Specs: []string{"@daily"}}
	j.ParameterizedJob = &structs.ParameterizedJobConfig{MetaRequired: []string{"a"}}
	task0(j).Config["nested"] = map[string]interface{}{"list": []interface{}{"x"}}
	c := j.Copy()
	c.Datacenters[0] = "changed"
	c.Constraints[0].RTarget = "changed"
	c.Meta["owner"] = "changed"
	c.Periodic.Specs[0] = "changed"
	c.ParameterizedJob.MetaRequired[0] = "changed"
	tg0(c).Count = 99
	tg0(c).RestartPolicy.Attempts = 99
	tg0(c).Networks[0].DynamicPorts[0].Label = "changed"
	task0(c).Env["MOCK"] = "changed"
	task0(c).Resources.CPU = 1
	task0(c).Config["nested"].(map[string]interface{})["list"].([]interface{})[0] = "changed"
	if j.Datacenters[0] != "dc1" || j.Constraints[0].RTarget != "linux" || j.Meta["owner"] != "platform" ||
		j.Periodic.Specs[0] != "@daily" || j.ParameterizedJob.MetaRequired[0] != "a" || tg0(j).Count != 3 ||
		tg0(j).RestartPolicy.Attempts != 2 || tg0(j).Networks[0].DynamicPorts[0].Label != "http" ||
		task0(j).Env["MOCK"] != "1" || task0(j).Resources.CPU != mock.TaskCPU ||
		task0(j).Config["nested"].(map[string]interface{})["list"].([]interface{})[0] != "x" {
		t.Fatal("Copy shares state with the original")
	}
	var nilJob *structs.Job
	if nilJob.Copy() != nil {
		t.Fatal("nil copy")
	}
}

func TestJobKinds(t *testing.T) {
	periodic := mock.BatchJob()
	periodic.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "@daily"}
	disabled := mock.BatchJob()
	disabled.Periodic = &structs.PeriodicConfig{Enabled: false, Spec: "@daily"}
	param := mock.BatchJob()
	param.ParameterizedJob = &structs.ParameterizedJobConfig{}
	child := param.Copy()
	child.Dispatched = true
	cases := []struct {
		name                                    string
		j                                       *structs.Job
		periodic, parameterized, system, evaled bool
	}{
		{"service", mock.Job(), false, false, false, true},
		{"system", mock.SystemJob(), false, false, true, true},
		{"sysbatch", mock.SysBatchJob(), false, false, true, true},
		{"periodic template", periodic, true, false, false, false},
		{"disabled periodic", disabled, false, false, false, true},
		{"parameterized template", param, false, true, false, false},
		{"dispatched child", child, false, false, false, true},
	}
	for _, c := range cases {
		if c.j.IsPeriodic() != c.periodic || c.j.IsParameterized() != c.parameterized ||
			c.j.IsSystemLike() != c.system || c.j.RequiresEval() != c.evaled {
			t.Errorf("%s: periodic %v parameterized %v system %v eval %v", c.name,
				c.j.IsPeriodic(), c.j.IsParameterized(), c.j.IsSystemLike(), c.j.RequiresEval())
		}
	}
	var nilJob *structs.Job
	if !nilJob.Stopped() || nilJob.LookupTaskGroup("web") != nil {
		t.Error("a missing job is stopped and has no groups")
	}
}

func TestCombinedTaskMeta(t *testing.T) {
	j := mock.Job()
	j.Meta = map[string]string{"a": "job", "b": "job", "c": "job"}
	tg0(j).Meta = map[string]string{"b": "group", "c": "group"}
	task0(j).Meta = map[string]string{"c": "task"}
	want := map[string]string{"a": "job", "b": "group", "c": "task"}
	if got := j.CombinedTaskMeta("web", "web"); !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if j.CombinedTaskMeta("nope", "web") != nil {
		t.Error("unknown group")
	}
	if j.Meta["b"] != "job" {
		t.Error("CombinedTaskMeta modified the job")
	}
}

func TestJobStub(t *testing.T) {
	j := mock.Job()
	summary := &structs.JobSummary{JobID: j.ID, Summary: map[string]structs.TaskGroupSummary{"web": {Running: 3}}}
	s := j.Stub(summary)
	if s.ID != j.ID || s.Type != "service" || s.Priority != 50 || s.NodePool != "default" || s.JobSummary != summary ||
		s.Periodic || s.ParameterizedJob || s.Datacenters[0] != "dc1" {
		t.Errorf("stub %+v", s)
	}
	param := mock.BatchJob()
	param.ParameterizedJob = &structs.ParameterizedJobConfig{}
	child := param.Copy()
	child.Dispatched = true
	if !param.Stub(nil).ParameterizedJob || child.Stub(nil).ParameterizedJob {
		t.Error("only the template of a parameterized job is listed as parameterized")
	}
	s.Datacenters[0] = "x"
	if j.Datacenters[0] != "dc1" {
		t.Error("stub shares datacenters")
	}
	if j.NamespacedID().String() != "default/"+j.ID {
		t.Errorf("namespaced id %s", j.NamespacedID())
	}
}
