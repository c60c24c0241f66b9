package jobspec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// parseFixture parses testdata/name with the given options.
func parseFixture(t *testing.T, name string, opts Options) *Result {
	t.Helper()
	path := filepath.Join("testdata", name)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Parse(path, src, opts)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return res
}

// assertSameJSON compares two values by their JSON, reporting the first
// differing line.
func assertSameJSON(t *testing.T, got, want any) {
	t.Helper()
	g, _ := json.MarshalIndent(got, "", "  ")
	w, _ := json.MarshalIndent(want, "", "  ")
	if string(g) == string(w) {
		return
	}
	gl, wl := strings.Split(string(g), "\n"), strings.Split(string(w), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("JSON differs at line %d:\n got: %s\nwant: %s\n\nfull result:\n%s", i+1, gl[i], wl[i], g)
		}
	}
	t.Fatalf("JSON differs in length:\n got: %s\nwant: %s", g, w)
}

func TestParseJobBlock(t *testing.T) {
	res := parseFixture(t, "job.nomad.hcl", Options{})
	want := &api.Job{
		ID:          new("payments"),
		Name:        new("Payments API"),
		Type:        new("service"),
		Priority:    new(70),
		Region:      new("eu"),
		Namespace:   new("finance"),
		Datacenters: []string{"eu-west-1a", "eu-west-1b"},
		NodePool:    new("prod"),
		AllAtOnce:   new(false),
		Meta:        map[string]string{"owner": "team-payments", "tier": "1"},
		Constraints: []*api.Constraint{
			{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="},
			{LTarget: "${attr.cpu.arch}", RTarget: "arm64", Operand: "!="},
		},
		Affinities: []*api.Affinity{
			{LTarget: "${node.datacenter}", RTarget: "eu-west-1a", Operand: "=", Weight: new(int8(75))},
		},
		Spreads: []*api.Spread{{
			Attribute: "${node.datacenter}",
			Weight:    new(int8(100)),
			SpreadTarget: []*api.SpreadTarget{
				{Value: "eu-west-1a", Percent: 60},
				{Value: "eu-west-1b", Percent: 40},
			},
		}},
		Update: &api.UpdateStrategy{
			Stagger:          new(20 * time.Second),
			MaxParallel:      new(2),
			HealthCheck:      new("task_states"),
			MinHealthyTime:   new(15 * time.Second),
			HealthyDeadline:  new(4 * time.Minute),
			ProgressDeadline: new(12 * time.Minute),
			Canary:           new(1),
			AutoRevert:       new(true),
			AutoPromote:      new(true),
		},
		Migrate: &api.MigrateStrategy{
			MaxParallel:     new(3),
			HealthCheck:     new("checks"),
			MinHealthyTime:  new(20 * time.Second),
			HealthyDeadline: new(6 * time.Minute),
		},
		Reschedule: &api.ReschedulePolicy{
			Attempts:      new(4),
			Interval:      new(2 * time.Hour),
			Delay:         new(45 * time.Second),
			DelayFunction: new("fibonacci"),
			MaxDelay:      new(30 * time.Minute),
			Unlimited:     new(false),
		},
		TaskGroups: []*api.TaskGroup{{
			Name: new("api"),
			Tasks: []*api.Task{{
				Name:   "server",
				Driver: "raw_exec",
				Config: map[string]any{"command": "/usr/local/bin/payments"},
			}},
		}},
	}
	assertSameJSON(t, res.Job, want)
	if len(res.Warnings) != 0 {
		t.Fatalf("warnings = %v", res.Warnings)
	}
}

func TestParseGroupBlock(t *testing.T) {
	res := parseFixture(t, "group.nomad.hcl", Options{})
	want := &api.TaskGroup{
		Name:                      new("frontend"),
		Count:                     new(3),
		ShutdownDelay:             new(5 * time.Second),
		MaxClientDisconnect:       new(2 * time.Minute),
		StopAfterClientDisconnect: new(90 * time.Second),
		Meta:                      map[string]string{"version.major": "2", "release": "blue"},
		Constraints:               []*api.Constraint{{LTarget: "${meta.rack}", RTarget: "r[0-9]+", Operand: "regexp"}},
		Affinities:                []*api.Affinity{{LTarget: "${node.class}", RTarget: "fast", Operand: "=", Weight: new(int8(-20))}},
		Spreads:                   []*api.Spread{{Attribute: "${meta.rack}"}},
		Update:                    &api.UpdateStrategy{MaxParallel: new(1), Canary: new(2)},
		Migrate:                   &api.MigrateStrategy{MaxParallel: new(2)},
		RestartPolicy: &api.RestartPolicy{
			Attempts: new(5), Interval: new(10 * time.Minute), Delay: new(10 * time.Second),
			Mode: new("delay"), RenderTemplates: new(true),
		},
		ReschedulePolicy: &api.ReschedulePolicy{
			Delay: new(time.Minute), DelayFunction: new("exponential"), MaxDelay: new(2 * time.Hour), Unlimited: new(true),
		},
		EphemeralDisk: &api.EphemeralDisk{SizeMB: new(1024), Sticky: new(true), Migrate: new(true)},
		Networks: []*api.NetworkResource{{
			Mode: "bridge",
			DynamicPorts: []api.Port{
				{Label: "http", To: 8080},
				{Label: "metrics"},
			},
			ReservedPorts: []api.Port{{Label: "admin", Value: 9000, HostNetwork: "internal"}},
		}},
		Tasks: []*api.Task{{Name: "nginx", Driver: "raw_exec"}},
	}
	assertSameJSON(t, res.Job.TaskGroups[0], want)
}

func TestParseTaskBlock(t *testing.T) {
	res := parseFixture(t, "task.nomad.hcl", Options{})
	tasks := res.Job.TaskGroups[0].Tasks
	if len(tasks) != 3 {
		t.Fatalf("tasks = %d", len(tasks))
	}
	assertSameJSON(t, tasks[0], &api.Task{
		Name:      "setup",
		Driver:    "raw_exec",
		Lifecycle: &api.TaskLifecycle{Hook: "prestart"},
		Config:    map[string]any{"command": "/bin/true"},
	})
	assertSameJSON(t, tasks[1], &api.Task{
		Name:          "main",
		Driver:        "raw_exec",
		User:          "nobody",
		Leader:        true,
		KillTimeout:   new(25 * time.Second),
		KillSignal:    "SIGINT",
		ShutdownDelay: 3 * time.Second,
		Kind:          "worker",
		Config: map[string]any{
			"command":  "/usr/bin/env",
			"args":     []any{"bash", "-c", "echo ${NOMAD_ALLOC_DIR}"},
			"pid_mode": "host",
			"retries":  3,
			"ratio":    0.5,
			"debug":    true,
			"labels":   []map[string]any{{"team": "jobs"}},
			"port_map": []map[string]any{{"http": 80}},
			"mount": []map[string]any{
				{"bind": []map[string]any{{"source": "/srv", "readonly": true}}},
				{"bind": []map[string]any{{"source": "/var/log"}}},
			},
		},
		Env:  map[string]string{"LOG_LEVEL": "debug", "NODE": "${node.unique.name}", "EMPTY": ""},
		Meta: map[string]string{"queue": "default"},
		Resources: &api.Resources{
			CPU: new(500), MemoryMB: new(256), MemoryMaxMB: new(512), DiskMB: new(150),
		},
		LogConfig:       &api.LogConfig{MaxFiles: new(4), MaxFileSizeMB: new(15), Disabled: new(false)},
		RestartPolicy:   &api.RestartPolicy{Attempts: new(1)},
		DispatchPayload: &api.DispatchPayloadConfig{File: "input.json"},
		Constraints:     []*api.Constraint{{LTarget: "${attr.unique.storage.volume}", Operand: "is_set"}},
		Affinities:      []*api.Affinity{{LTarget: "${attr.cpu.numcores}", RTarget: "4", Operand: ">="}},
	})
	assertSameJSON(t, tasks[2].Resources, &api.Resources{Cores: new(2), MemoryMB: new(128)})

	// Config values keep Go types a driver can use directly.
	cfg := tasks[1].Config
	if _, ok := cfg["retries"].(int); !ok {
		t.Errorf("retries is %T, want int", cfg["retries"])
	}
	if _, ok := cfg["ratio"].(float64); !ok {
		t.Errorf("ratio is %T, want float64", cfg["ratio"])
	}
	if _, ok := cfg["port_map"].([]map[string]any); !ok {
		t.Errorf("port_map is %T, want []map[string]any", cfg["port_map"])
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
