package structs_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

const (
	added   = structs.DiffTypeAdded
	deleted = structs.DiffTypeDeleted
	edited  = structs.DiffTypeEdited
	none    = structs.DiffTypeNone
)

func fd(typ structs.DiffType, name, old, new string, annotations ...string) *structs.FieldDiff {
	return &structs.FieldDiff{Type: typ, Name: name, Old: old, New: new, Annotations: annotations}
}

func od(typ structs.DiffType, name string, fields []*structs.FieldDiff, objects ...*structs.ObjectDiff) *structs.ObjectDiff {
	return &structs.ObjectDiff{Type: typ, Name: name, Fields: fields, Objects: objects}
}

func fields(f ...*structs.FieldDiff) []*structs.FieldDiff { return f }

func findGroup(t *testing.T, d *structs.JobDiff, name string) *structs.TaskGroupDiff {
	t.Helper()
	for _, g := range d.TaskGroups {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no diff for group %q in\n%s", name, d)
	return nil
}

func findTask(t *testing.T, g *structs.TaskGroupDiff, name string) *structs.TaskDiff {
	t.Helper()
	for _, td := range g.Tasks {
		if td.Name == name {
			return td
		}
	}
	t.Fatalf("no diff for task %q", name)
	return nil
}

func mustDiff(t *testing.T, old, new *structs.Job, contextual bool) *structs.JobDiff {
	t.Helper()
	d, err := old.Diff(new, contextual)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func assertFields(t *testing.T, what string, got, want []*structs.FieldDiff) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s fields:\n got  %s\n want %s", what, renderFields(got), renderFields(want))
	}
}

func assertObjects(t *testing.T, what string, got, want []*structs.ObjectDiff) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s objects:\n got\n%s want\n%s", what, renderObjects(got, "  "), renderObjects(want, "  "))
	}
}

func renderFields(fs []*structs.FieldDiff) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, string(f.Type)+" "+f.Name+" "+f.Old+"=>"+f.New+" "+strings.Join(f.Annotations, ","))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

func renderObjects(os []*structs.ObjectDiff, indent string) string {
	var b strings.Builder
	for _, o := range os {
		b.WriteString(indent + string(o.Type) + " " + o.Name + " " + renderFields(o.Fields) + "\n")
		b.WriteString(renderObjects(o.Objects, indent+"  "))
	}
	return b.String()
}

func TestDiff_Identical(t *testing.T) {
	j := mock.Job()
	other := j.Copy()
	// Bookkeeping the servers change on every write is not a change.
	other.Version, other.ModifyIndex, other.JobModifyIndex, other.SubmitTime = 3, 10, 10, 99
	other.Status, other.StatusDescription, other.Stable = structs.JobStatusRunning, "x", true
	d := mustDiff(t, j, other, true)
	if d.Type != none || len(d.Fields) != 0 || len(d.Objects) != 0 || d.ID != j.ID {
		t.Fatalf("identical jobs:\n%s", d)
	}
	if len(d.TaskGroups) != 1 || d.TaskGroups[0].Type != none || d.TaskGroups[0].Tasks[0].Type != none ||
		len(d.TaskGroups[0].Tasks[0].Annotations) != 0 {
		t.Fatalf("groups and tasks are listed as None:\n%s", d)
	}
	var nilJob *structs.Job
	if d, err := nilJob.Diff(nil, false); err != nil || d.Type != none {
		t.Fatalf("nil vs nil: %v %v", d, err)
	}
}

func TestDiff_DifferentIDs(t *testing.T) {
	if _, err := mock.Job().Diff(mock.Job(), false); err == nil || !strings.Contains(err.Error(), "different IDs") {
		t.Fatalf("err = %v", err)
	}
}

func TestDiff_AddedAndDeletedJob(t *testing.T) {
	j := mock.Job(mock.JobID("example"))
	var none *structs.Job
	d := mustDiff(t, none, j, false)
	if d.Type != added || d.ID != "example" {
		t.Fatalf("added job:\n%s", d)
	}
	if f := findField(d.Fields, "Priority"); !reflect.DeepEqual(f, fd(added, "Priority", "", "50")) {
		t.Errorf("priority %+v", f)
	}
	g := findGroup(t, d, "web")
	if g.Type != added {
		t.Errorf("group %s", g.Type)
	}
	if tk := findTask(t, g, "web"); tk.Type != added || !slices.Equal(tk.Annotations, []string{"forces create"}) {
		t.Errorf("task %s %v", tk.Type, tk.Annotations)
	}

	d = mustDiff(t, j, nil, false)
	if d.Type != deleted || findGroup(t, d, "web").Type != deleted {
		t.Fatalf("deleted job:\n%s", d)
	}
	if tk := findTask(t, findGroup(t, d, "web"), "web"); !slices.Equal(tk.Annotations, []string{"forces destroy"}) {
		t.Errorf("task annotations %v", tk.Annotations)
	}
	if f := findField(d.Fields, "Priority"); !reflect.DeepEqual(f, fd(deleted, "Priority", "50", "")) {
		t.Errorf("priority %+v", f)
	}
}

func findField(fs []*structs.FieldDiff, name string) *structs.FieldDiff {
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Job-level changes: primitive fields, meta entries, datacenters as a set,
// constraints and affinities as sets, spreads by attribute, periodic and
// parameterized blocks.
func TestDiff_JobLevel(t *testing.T) {
	cases := []struct {
		name       string
		old        func(j *structs.Job)
		new        func(j *structs.Job)
		contextual bool
		fields     []*structs.FieldDiff
		objects    []*structs.ObjectDiff
	}{
		{name: "priority edited", new: func(j *structs.Job) { j.Priority = 70 },
			fields: fields(fd(edited, "Priority", "50", "70"))},
		{name: "stop set", new: func(j *structs.Job) { j.Stop = true },
			fields: fields(fd(edited, "Stop", "false", "true"))},
		{name: "meta added, edited and deleted",
			old: func(j *structs.Job) { j.Meta = map[string]string{"owner": "a", "gone": "x"} },
			new: func(j *structs.Job) { j.Meta = map[string]string{"owner": "b", "team": "c"} },
			fields: fields(fd(deleted, "Meta[gone]", "x", ""), fd(edited, "Meta[owner]", "a", "b"),
				fd(added, "Meta[team]", "", "c"))},
		{name: "unchanged job fields are not listed even in contextual mode", contextual: true,
			new: func(j *structs.Job) { j.AllAtOnce = true }, fields: fields(fd(edited, "AllAtOnce", "false", "true"))},
		{name: "datacenter added", new: func(j *structs.Job) { j.Datacenters = []string{"dc1", "dc2"} },
			objects: []*structs.ObjectDiff{od(added, "Datacenters", fields(fd(added, "Datacenters", "", "dc2")))}},
		{name: "datacenter added, contextual", contextual: true, new: func(j *structs.Job) { j.Datacenters = []string{"dc2", "dc1"} },
			objects: []*structs.ObjectDiff{od(added, "Datacenters", fields(
				fd(none, "Datacenters", "dc1", "dc1"), fd(added, "Datacenters", "", "dc2")))}},
		{name: "datacenter replaced", new: func(j *structs.Job) { j.Datacenters = []string{"dc9"} },
			objects: []*structs.ObjectDiff{od(edited, "Datacenters", fields(
				fd(deleted, "Datacenters", "dc1", ""), fd(added, "Datacenters", "", "dc9")))}},
		{name: "datacenter order does not matter",
			old: func(j *structs.Job) { j.Datacenters = []string{"a", "b"} }, new: func(j *structs.Job) { j.Datacenters = []string{"b", "a"} }},
		{name: "constraint edited shows as deleted and added",
			new: func(j *structs.Job) { j.Constraints[0].RTarget = "windows" },
			objects: []*structs.ObjectDiff{
				od(added, "Constraint", fields(fd(added, "LTarget", "", "${attr.kernel.name}"), fd(added, "Operand", "", "="),
					fd(added, "RTarget", "", "windows"))),
				od(deleted, "Constraint", fields(fd(deleted, "LTarget", "${attr.kernel.name}", ""), fd(deleted, "Operand", "=", ""),
					fd(deleted, "RTarget", "linux", ""))),
			}},
		{name: "affinity added",
			new: func(j *structs.Job) {
				j.Affinities = []*structs.Affinity{{LTarget: "${node.class}", RTarget: "big", Operand: "=", Weight: 50}}
			},
			objects: []*structs.ObjectDiff{od(added, "Affinity", fields(fd(added, "LTarget", "", "${node.class}"),
				fd(added, "Operand", "", "="), fd(added, "RTarget", "", "big"), fd(added, "Weight", "", "50")))}},
		{name: "spread weight and target edited",
			old: func(j *structs.Job) {
				j.Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 50,
					SpreadTarget: []*structs.SpreadTarget{{Value: "r1", Percent: 50}}}}
			},
			new: func(j *structs.Job) {
				j.Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 80,
					SpreadTarget: []*structs.SpreadTarget{{Value: "r1", Percent: 40}, {Value: "r2", Percent: 60}}}}
			},
			objects: []*structs.ObjectDiff{od(edited, "Spread", fields(fd(edited, "Weight", "50", "80")),
				od(edited, "SpreadTarget", fields(fd(edited, "Percent", "50", "40"))),
				od(added, "SpreadTarget", fields(fd(added, "Percent", "", "60"), fd(added, "Value", "", "r2"))))}},
		{name: "periodic added",
			new: func(j *structs.Job) {
				j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "@daily", SpecType: "cron"}
			},
			objects: []*structs.ObjectDiff{od(added, "Periodic", fields(fd(added, "Enabled", "", "true"),
				fd(added, "ProhibitOverlap", "", "false"), fd(added, "Spec", "", "@daily"), fd(added, "SpecType", "", "cron")))}},
		{name: "periodic spec edited, contextual", contextual: true,
			old: func(j *structs.Job) {
				j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "@daily", SpecType: "cron"}
			},
			new: func(j *structs.Job) {
				j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "@hourly", SpecType: "cron", Specs: []string{"@weekly"}}
			},
			objects: []*structs.ObjectDiff{od(edited, "Periodic", fields(fd(none, "Enabled", "true", "true"),
				fd(none, "ProhibitOverlap", "false", "false"), fd(edited, "Spec", "@daily", "@hourly"),
				fd(none, "SpecType", "cron", "cron"), fd(none, "TimeZone", "", "")),
				od(added, "Specs", fields(fd(added, "Specs", "", "@weekly"))))}},
		{name: "parameterized meta edited",
			old: func(j *structs.Job) {
				j.ParameterizedJob = &structs.ParameterizedJobConfig{MetaRequired: []string{"a"}}
			},
			new: func(j *structs.Job) {
				j.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"a", "b"}}
			},
			objects: []*structs.ObjectDiff{od(edited, "ParameterizedJob", fields(fd(added, "Payload", "", "required")),
				od(added, "MetaRequired", fields(fd(added, "MetaRequired", "", "b"))))}},
		{name: "parameterized removed",
			old:     func(j *structs.Job) { j.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: "optional"} },
			new:     func(j *structs.Job) { j.ParameterizedJob = nil },
			objects: []*structs.ObjectDiff{od(deleted, "ParameterizedJob", fields(fd(deleted, "Payload", "optional", "")))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := mock.Job()
			if c.old != nil {
				c.old(old)
			}
			new := old.Copy()
			if c.new != nil {
				c.new(new)
			}
			d := mustDiff(t, old, new, c.contextual)
			wantType := none
			if len(c.fields) > 0 || len(c.objects) > 0 {
				wantType = edited
			}
			if d.Type != wantType {
				t.Errorf("job diff type %s, want %s", d.Type, wantType)
			}
			assertFields(t, "job", d.Fields, c.fields)
			assertObjects(t, "job", d.Objects, c.objects)
		})
	}
}

func TestDiff_GroupLevel(t *testing.T) {
	cases := []struct {
		name       string
		new        func(tg *structs.TaskGroup)
		contextual bool
		fields     []*structs.FieldDiff
		objects    []*structs.ObjectDiff
	}{
		{name: "count up forces create", new: func(tg *structs.TaskGroup) { tg.Count = 5 },
			fields: fields(fd(edited, "Count", "3", "5", "forces create"))},
		{name: "count down forces destroy", new: func(tg *structs.TaskGroup) { tg.Count = 1 },
			fields: fields(fd(edited, "Count", "3", "1", "forces destroy"))},
		{name: "group meta", new: func(tg *structs.TaskGroup) { tg.Meta["tier"] = "backend" },
			fields: fields(fd(edited, "Meta[tier]", "frontend", "backend"))},
		{name: "shutdown delay set", new: func(tg *structs.TaskGroup) { tg.ShutdownDelay = durationPtr(5 * time.Second) },
			fields: fields(fd(added, "ShutdownDelay", "", "5000000000"))},
		{name: "restart attempts", new: func(tg *structs.TaskGroup) { tg.RestartPolicy.Attempts = 5 },
			objects: []*structs.ObjectDiff{od(edited, "RestartPolicy", fields(fd(edited, "Attempts", "2", "5")))}},
		{name: "restart attempts, contextual", contextual: true, new: func(tg *structs.TaskGroup) { tg.RestartPolicy.Attempts = 5 },
			objects: []*structs.ObjectDiff{od(edited, "RestartPolicy", fields(fd(edited, "Attempts", "2", "5"),
				fd(none, "Delay", "15000000000", "15000000000"), fd(none, "Interval", "1800000000000", "1800000000000"),
				fd(none, "Mode", "fail", "fail"), fd(none, "RenderTemplates", "false", "false")))}},
		{name: "reschedule made constant", new: func(tg *structs.TaskGroup) {
			tg.ReschedulePolicy.DelayFunction, tg.ReschedulePolicy.MaxDelay = "constant", 0
		}, objects: []*structs.ObjectDiff{od(edited, "ReschedulePolicy", fields(
			fd(edited, "DelayFunction", "exponential", "constant"), fd(edited, "MaxDelay", "3600000000000", "0")))}},
		{name: "ephemeral disk", new: func(tg *structs.TaskGroup) { tg.EphemeralDisk.SizeMB = 500 },
			objects: []*structs.ObjectDiff{od(edited, "EphemeralDisk", fields(fd(edited, "SizeMB", "300", "500")))}},
		{name: "update added", new: func(tg *structs.TaskGroup) {
			tg.Update = &structs.UpdateStrategy{MaxParallel: 2, HealthCheck: "checks", Stagger: time.Second}
		}, objects: []*structs.ObjectDiff{od(added, "Update", fields(fd(added, "AutoPromote", "", "false"),
			fd(added, "AutoRevert", "", "false"), fd(added, "Canary", "", "0"), fd(added, "HealthCheck", "", "checks"),
			fd(added, "HealthyDeadline", "", "0"), fd(added, "MaxParallel", "", "2"), fd(added, "MinHealthyTime", "", "0"),
			fd(added, "ProgressDeadline", "", "0")))}},
		{name: "migrate max parallel", new: func(tg *structs.TaskGroup) { tg.Migrate.MaxParallel = 3 },
			objects: []*structs.ObjectDiff{od(edited, "Migrate", fields(fd(edited, "MaxParallel", "1", "3")))}},
		{name: "group constraint added", new: func(tg *structs.TaskGroup) {
			tg.Constraints = []*structs.Constraint{{Operand: "distinct_hosts", RTarget: "true"}}
		}, objects: []*structs.ObjectDiff{od(added, "Constraint", fields(fd(added, "Operand", "", "distinct_hosts"),
			fd(added, "RTarget", "", "true")))}},
		{name: "dynamic port added and static port edited", new: func(tg *structs.TaskGroup) {
			tg.Networks[0].DynamicPorts = append(tg.Networks[0].DynamicPorts, structs.Port{Label: "admin", To: -1})
		}, objects: []*structs.ObjectDiff{od(edited, "Network", nil,
			od(added, "Dynamic Port", fields(fd(added, "Label", "", "admin"), fd(added, "To", "", "-1"))))}},
		{name: "dynamic port value is not diffed", new: func(tg *structs.TaskGroup) { tg.Networks[0].DynamicPorts[0].Value = 25000 }},
		{name: "network removed", new: func(tg *structs.TaskGroup) { tg.Networks = nil },
			objects: []*structs.ObjectDiff{od(deleted, "Network", fields(fd(deleted, "Mode", "host", "")),
				od(deleted, "Dynamic Port", fields(fd(deleted, "Label", "http", ""), fd(deleted, "To", "-1", ""))))}},
		{name: "stagger alone is no change", new: func(tg *structs.TaskGroup) {
			tg.Update = structs.DefaultUpdateStrategy()
		}, objects: []*structs.ObjectDiff{od(added, "Update", fields(fd(added, "AutoPromote", "", "false"),
			fd(added, "AutoRevert", "", "false"), fd(added, "Canary", "", "0"), fd(added, "HealthCheck", "", "checks"),
			fd(added, "HealthyDeadline", "", "300000000000"), fd(added, "MaxParallel", "", "1"),
			fd(added, "MinHealthyTime", "", "10000000000"), fd(added, "ProgressDeadline", "", "600000000000")))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := mock.Job()
			new := old.Copy()
			c.new(tg0(new))
			g := findGroup(t, mustDiff(t, old, new, c.contextual), "web")
			wantType := none
			if len(c.fields) > 0 || len(c.objects) > 0 {
				wantType = edited
			}
			if g.Type != wantType {
				t.Errorf("group diff type %s, want %s", g.Type, wantType)
			}
			assertFields(t, "group", g.Fields, c.fields)
			assertObjects(t, "group", g.Objects, c.objects)
			// Group-only changes leave the tasks alone.
			if tk := findTask(t, g, "web"); tk.Type != none || tk.Annotations != nil {
				t.Errorf("task diff %s %v", tk.Type, tk.Annotations)
			}
		})
	}
	// Stagger is deprecated: changing only it changes nothing.
	old := mock.Job()
	tg0(old).Update = structs.DefaultUpdateStrategy()
	new := old.Copy()
	tg0(new).Update.Stagger = time.Minute
	if d := mustDiff(t, old, new, true); d.Type != none {
		t.Errorf("stagger change:\n%s", d)
	}
}

func TestDiff_GroupsAddedAndRemoved(t *testing.T) {
	old := mock.Job()
	new := old.Copy()
	extra := tg0(new).Copy()
	extra.Name = "api"
	new.TaskGroups = append(new.TaskGroups, extra)
	d := mustDiff(t, old, new, false)
	if d.Type != edited || len(d.TaskGroups) != 2 || d.TaskGroups[0].Name != "api" || d.TaskGroups[1].Name != "web" {
		t.Fatalf("groups are listed by name:\n%s", d)
	}
	api := d.TaskGroups[0]
	if api.Type != added || findField(api.Fields, "Count").New != "3" ||
		!slices.Equal(findField(api.Fields, "Count").Annotations, []string{"forces create"}) {
		t.Errorf("added group:\n%s", d)
	}
	if tk := findTask(t, api, "web"); tk.Type != added || !slices.Equal(tk.Annotations, []string{"forces create"}) {
		t.Errorf("task of the added group %s %v", tk.Type, tk.Annotations)
	}
	if d.TaskGroups[1].Type != none {
		t.Errorf("unchanged group %s", d.TaskGroups[1].Type)
	}

	d = mustDiff(t, new, old, false)
	api = d.TaskGroups[0]
	if api.Type != deleted || !slices.Equal(findField(api.Fields, "Count").Annotations, []string{"forces destroy"}) ||
		!slices.Equal(findTask(t, api, "web").Annotations, []string{"forces destroy"}) {
		t.Errorf("deleted group:\n%s", d)
	}
}

func TestDiff_TaskLevel(t *testing.T) {
	const destructive, inPlace = "forces create/destroy update", "forces in-place update"
	cases := []struct {
		name       string
		new        func(t *structs.Task)
		contextual bool
		fields     []*structs.FieldDiff
		objects    []*structs.ObjectDiff
		annotation string
	}{
		{name: "driver", new: func(t *structs.Task) { t.Driver = "exec" },
			fields: fields(fd(edited, "Driver", "raw_exec", "exec")), annotation: destructive},
		{name: "kill timeout only", new: func(t *structs.Task) { t.KillTimeout = 10 * time.Second },
			fields: fields(fd(edited, "KillTimeout", "5000000000", "10000000000")), annotation: inPlace},
		{name: "env", new: func(t *structs.Task) { t.Env["MOCK"] = "2"; t.Env["NEW"] = "x" },
			fields: fields(fd(edited, "Env[MOCK]", "1", "2"), fd(added, "Env[NEW]", "", "x")), annotation: destructive},
		{name: "task meta", new: func(t *structs.Task) { t.Meta = map[string]string{"k": "v"} },
			fields: fields(fd(added, "Meta[k]", "", "v")), annotation: destructive},
		{name: "config arg", new: func(t *structs.Task) { t.Config["args"] = []string{"7200"} },
			objects:    []*structs.ObjectDiff{od(edited, "Config", fields(fd(edited, "args[0]", "3600", "7200")))},
			annotation: destructive},
		{name: "config nested, contextual", contextual: true, new: func(t *structs.Task) {
			t.Config["labels"] = map[string]interface{}{"team": "x"}
		}, objects: []*structs.ObjectDiff{od(edited, "Config", fields(fd(none, "args[0]", "3600", "3600"),
			fd(none, "command", "/bin/sleep", "/bin/sleep"), fd(added, "labels[team]", "", "x")))},
			annotation: destructive},
		{name: "cpu", new: func(t *structs.Task) { t.Resources.CPU = 1000 },
			objects:    []*structs.ObjectDiff{od(edited, "Resources", fields(fd(edited, "CPU", "500", "1000")))},
			annotation: destructive},
		{name: "memory, contextual", contextual: true, new: func(t *structs.Task) { t.Resources.MemoryMB = 512 },
			objects: []*structs.ObjectDiff{od(edited, "Resources", fields(fd(none, "CPU", "500", "500"),
				fd(none, "Cores", "0", "0"), fd(none, "DiskMB", "0", "0"), fd(none, "IOPS", "0", "0"),
				fd(edited, "MemoryMB", "256", "512"), fd(none, "MemoryMaxMB", "0", "0")))},
			annotation: destructive},
		{name: "task network port", new: func(t *structs.Task) {
			t.Resources.Networks = structs.Networks{{Mode: "host", ReservedPorts: []structs.Port{{Label: "db", Value: 5432}}}}
		}, objects: []*structs.ObjectDiff{od(edited, "Resources", nil, od(added, "Network", fields(
			fd(added, "Mode", "", "host")), od(added, "Static Port", fields(
			fd(added, "Label", "", "db"), fd(added, "To", "", "0"), fd(added, "Value", "", "5432")))))},
			annotation: destructive},
		{name: "log config only", new: func(t *structs.Task) { t.LogConfig.MaxFiles = 3 },
			objects:    []*structs.ObjectDiff{od(edited, "LogConfig", fields(fd(edited, "MaxFiles", "10", "3")))},
			annotation: inPlace},
		{name: "task constraint only", new: func(t *structs.Task) {
			t.Constraints = []*structs.Constraint{{LTarget: "${attr.cpu.arch}", Operand: "=", RTarget: "amd64"}}
		}, objects: []*structs.ObjectDiff{od(added, "Constraint", fields(fd(added, "LTarget", "", "${attr.cpu.arch}"),
			fd(added, "Operand", "", "="), fd(added, "RTarget", "", "amd64")))}, annotation: inPlace},
		{name: "task affinity", new: func(t *structs.Task) {
			t.Affinities = []*structs.Affinity{{LTarget: "${attr.cpu.arch}", Operand: "=", RTarget: "arm64", Weight: -50}}
		}, objects: []*structs.ObjectDiff{od(added, "Affinity", fields(fd(added, "LTarget", "", "${attr.cpu.arch}"),
			fd(added, "Operand", "", "="), fd(added, "RTarget", "", "arm64"), fd(added, "Weight", "", "-50")))},
			annotation: destructive},
		{name: "lifecycle added", new: func(t *structs.Task) { t.Lifecycle = &structs.TaskLifecycleConfig{Hook: "prestart"} },
			objects: []*structs.ObjectDiff{od(added, "Lifecycle", fields(fd(added, "Hook", "", "prestart"),
				fd(added, "Sidecar", "", "false")))}, annotation: destructive},
		{name: "dispatch payload", new: func(t *structs.Task) { t.DispatchPayload = &structs.DispatchPayloadConfig{File: "in.json"} },
			objects:    []*structs.ObjectDiff{od(added, "DispatchPayload", fields(fd(added, "File", "", "in.json")))},
			annotation: destructive},
		{name: "kill timeout and log config", new: func(t *structs.Task) {
			t.KillTimeout = time.Second
			t.LogConfig.Disabled = true
		}, fields: fields(fd(edited, "KillTimeout", "5000000000", "1000000000")),
			objects:    []*structs.ObjectDiff{od(edited, "LogConfig", fields(fd(edited, "Disabled", "false", "true")))},
			annotation: inPlace},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := mock.Job()
			new := old.Copy()
			c.new(task0(new))
			d := mustDiff(t, old, new, c.contextual)
			g := findGroup(t, d, "web")
			tk := findTask(t, g, "web")
			if d.Type != edited || g.Type != edited || tk.Type != edited {
				t.Errorf("types job %s group %s task %s, want Edited", d.Type, g.Type, tk.Type)
			}
			assertFields(t, "task", tk.Fields, c.fields)
			assertObjects(t, "task", tk.Objects, c.objects)
			if !slices.Equal(tk.Annotations, []string{c.annotation}) {
				t.Errorf("annotations %v, want [%s]", tk.Annotations, c.annotation)
			}
		})
	}
}

func TestDiff_TasksAddedAndRemoved(t *testing.T) {
	old := mock.Job()
	new := old.Copy()
	side := task0(new).Copy()
	side.Name = "sidecar"
	tg0(new).Tasks = append(tg0(new).Tasks, side)
	g := findGroup(t, mustDiff(t, old, new, false), "web")
	if g.Type != edited || len(g.Tasks) != 2 || g.Tasks[0].Name != "sidecar" {
		t.Fatalf("tasks are listed by name: %+v", g.Tasks)
	}
	// A task added to a running group replaces its allocations.
	if tk := g.Tasks[0]; tk.Type != added || !slices.Equal(tk.Annotations, []string{"forces create/destroy update"}) ||
		findField(tk.Fields, "Driver").New != "raw_exec" {
		t.Errorf("added task %s %v", tk.Type, tk.Annotations)
	}
	g = findGroup(t, mustDiff(t, new, old, false), "web")
	if tk := g.Tasks[0]; tk.Type != deleted || !slices.Equal(tk.Annotations, []string{"forces create/destroy update"}) {
		t.Errorf("removed task %s %v", tk.Type, tk.Annotations)
	}
}

func TestDiff_AnnotateUpdates(t *testing.T) {
	old := mock.Job()
	new := old.Copy()
	tg0(new).Count = 5
	d := mustDiff(t, old, new, false)
	d.AnnotateUpdates(&structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{
		"web":   {Place: 2, Ignore: 3, InPlaceUpdate: 0},
		"other": {Place: 9},
	}})
	want := map[string]uint64{"create": 2, "ignore": 3}
	if got := findGroup(t, d, "web").Updates; !reflect.DeepEqual(got, want) {
		t.Fatalf("updates %v, want %v", got, want)
	}
	if !strings.Contains(d.String(), `Group "web" (Edited) (2 create, 3 ignore)`) {
		t.Errorf("String:\n%s", d)
	}
	d.AnnotateUpdates(nil)
	var nilDiff *structs.JobDiff
	nilDiff.AnnotateUpdates(&structs.PlanAnnotations{})
}

// TestDiff_EveryFieldIsDiffed changes each exported field of Job,
// TaskGroup and Task in turn and checks the diff notices. A field added
// to these types later must either show in the diff or be listed here as
// deliberately ignored.
func TestDiff_EveryFieldIsDiffed(t *testing.T) {
	ignored := map[string]bool{
		// identity and server bookkeeping
		"Job.ID": true, "Job.Status": true, "Job.StatusDescription": true, "Job.Stable": true, "Job.Version": true,
		"Job.VersionTag": true,
		"Job.SubmitTime": true, "Job.CreateIndex": true, "Job.ModifyIndex": true, "Job.JobModifyIndex": true,
		// merged into every group by Canonicalize and diffed there
		"Job.Update": true,
		// a dispatched job's input data, not its specification
		"Job.Payload": true,
		// groups and tasks are matched by name
		"TaskGroup.Name": true, "Task.Name": true,
	}
	type target struct {
		name string
		get  func(j *structs.Job) reflect.Value
	}
	targets := []target{
		{"Job", func(j *structs.Job) reflect.Value { return reflect.ValueOf(j).Elem() }},
		{"TaskGroup", func(j *structs.Job) reflect.Value { return reflect.ValueOf(tg0(j)).Elem() }},
		{"Task", func(j *structs.Job) reflect.Value { return reflect.ValueOf(task0(j)).Elem() }},
	}
	for _, tg := range targets {
		typ := tg.get(mock.Job()).Type()
		for i := range typ.NumField() {
			f := typ.Field(i)
			key := tg.name + "." + f.Name
			if !f.IsExported() || ignored[key] {
				continue
			}
			t.Run(key, func(t *testing.T) {
				old := mock.Job()
				new := old.Copy()
				if !perturb(tg.get(new).Field(i)) {
					t.Fatalf("test cannot change a %s; teach perturb or list the field as ignored", f.Type)
				}
				if d := mustDiff(t, old, new, false); d.Type != edited {
					t.Errorf("changing %s is not in the diff", key)
				}
			})
		}
	}
}

// perturb changes v to a different value, reporting whether it could.
func perturb(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		elem := reflect.New(v.Type().Elem()).Elem()
		if elem.Kind() == reflect.Interface {
			elem = reflect.ValueOf("x")
		} else if !perturb(elem) {
			return false
		}
		v.SetMapIndex(reflect.ValueOf("perturbed"), elem)
	case reflect.Slice:
		elem := reflect.New(v.Type().Elem()).Elem()
		if elem.Kind() == reflect.Pointer {
			elem.Set(reflect.New(elem.Type().Elem()))
		} else if !perturb(elem) {
			return false
		}
		v.Set(reflect.Append(v, elem))
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
			return true
		}
		return perturb(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && perturb(v.Field(i)) {
				return true
			}
		}
		return false
	default:
		return false
	}
	return true
}

func TestDiff_OutputIsDeterministic(t *testing.T) {
	old := mock.Job()
	new := old.Copy()
	new.Constraints = []*structs.Constraint{{LTarget: "a", Operand: "=", RTarget: "1"}, {LTarget: "b", Operand: "=", RTarget: "2"},
		{LTarget: "c", Operand: "=", RTarget: "3"}}
	new.Meta = map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}
	task0(new).Config = map[string]interface{}{"a": 1, "b": []string{"x", "y"}, "c": map[string]interface{}{"d": "e"}}
	first := mustDiff(t, old, new, true).String()
	for range 20 {
		if got := mustDiff(t, old, new, true).String(); got != first {
			t.Fatalf("diff output changed between runs:\n%s\nvs\n%s", first, got)
		}
	}
}

func BenchmarkJobDiff(b *testing.B) {
	old := mock.Job()
	new := old.Copy()
	tg0(new).Count = 5
	task0(new).Resources.CPU = 1000
	b.ReportAllocs()
	for b.Loop() {
		if _, err := old.Diff(new, true); err != nil {
			b.Fatal(err)
		}
	}
}
