package jobspec

import (
	"slices"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

func TestParsePeriodic(t *testing.T) {
	res := parseFixture(t, "periodic.nomad.hcl", Options{})
	assertSameJSON(t, res.Job.Periodic, &api.PeriodicConfig{
		Enabled:         new(true),
		Spec:            new("0 2 * * *"),
		SpecType:        new("cron"),
		ProhibitOverlap: new(true),
		TimeZone:        new("Europe/Berlin"),
	})

	res = parseFixture(t, "crons.nomad.hcl", Options{})
	assertSameJSON(t, res.Job.Periodic, &api.PeriodicConfig{Specs: []string{"0 6 * * *", "0 18 * * *"}})
	if *res.Job.Type != "sysbatch" {
		t.Fatalf("type = %s", *res.Job.Type)
	}
}

func TestParseParameterized(t *testing.T) {
	res := parseFixture(t, "parameterized.nomad.hcl", Options{})
	assertSameJSON(t, res.Job.ParameterizedJob, &api.ParameterizedJobConfig{
		Payload:      "required",
		MetaRequired: []string{"input"},
		MetaOptional: []string{"profile", "bitrate"},
	})
	task := res.Job.TaskGroups[0].Tasks[0]
	assertSameJSON(t, task.DispatchPayload, &api.DispatchPayloadConfig{File: "job.json"})
	assertSameJSON(t, task.Config["args"], []any{"-i", "${NOMAD_META_input}", "${NOMAD_TASK_DIR}/out.mp4"})
}

func TestParseConstraintShorthands(t *testing.T) {
	res := parseFixture(t, "constraints.nomad.hcl", Options{})
	assertSameJSON(t, res.Job.Constraints, []*api.Constraint{
		{Operand: "distinct_hosts"},
		{LTarget: "${meta.rack}", RTarget: "2", Operand: "distinct_property"},
		{LTarget: "${attr.nomad.version}", RTarget: ">= 1.2, < 2.0", Operand: "version"},
		{LTarget: "${attr.os.version}", RTarget: "~> 22.04", Operand: "semver"},
		{LTarget: "${attr.unique.hostname}", RTarget: "^web-[0-9]+$", Operand: "regexp"},
		{LTarget: "${meta.features}", RTarget: "ssd,gpu", Operand: "set_contains"},
	})
	assertSameJSON(t, res.Job.Affinities, []*api.Affinity{
		{LTarget: "${meta.zones}", RTarget: "a,b", Operand: "set_contains_any", Weight: new(int8(30))},
		{LTarget: "${attr.kernel.version}", RTarget: "> 5.0", Operand: "version"},
	})
}

func TestParseNotActedBlocksAreKeptAndReported(t *testing.T) {
	res := parseFixture(t, "not_acted.nomad.hcl", Options{})
	wantWarnings := []string{
		`group "api": scaling blocks are parsed but not acted on by this server`,
		`group "api": consul blocks are parsed but not acted on by this server`,
		`group "api": disconnect blocks are parsed but not acted on by this server`,
		`group "api": dns blocks are parsed but not acted on by this server`,
		`group "api": connect blocks are not supported by this server and were ignored`,
		`group "api": task "server": template blocks are parsed but not acted on by this server`,
		`group "api": task "server": artifact blocks are parsed but not acted on by this server`,
		`group "api": task "server": vault blocks are parsed but not acted on by this server`,
		`group "api": task "server": scaling blocks are parsed but not acted on by this server`,
		`group "api": task "server": identity blocks are parsed but not acted on by this server`,
		`group "api": task "server": device blocks are parsed but not acted on by this server`,
		`job "mesh": vault blocks are parsed but not acted on by this server`,
		`job "mesh": multiregion blocks are not supported by this server and were ignored`,
	}
	got := slices.Clone(res.Warnings)
	slices.Sort(got)
	want := slices.Clone(wantWarnings)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("warnings:\n got %q\nwant %q", res.Warnings, wantWarnings)
	}

	tg := res.Job.TaskGroups[0]
	assertSameJSON(t, tg.Disconnect, &api.DisconnectStrategy{
		LostAfter: new(time.Hour), Replace: new(false), Reconcile: new("keep_original"),
	})
	assertSameJSON(t, tg.Volumes, map[string]*api.VolumeRequest{
		"data": {Name: "data", Type: "host", Source: "pg-data"},
	})
	assertSameJSON(t, tg.Scaling, &api.ScalingPolicy{
		Min: new(int64(1)), Max: new(int64(5)), Type: "horizontal",
		Policy: map[string]any{
			"cooldown": "1m",
			"check":    []map[string]any{{"cpu": []map[string]any{{"source": "prometheus"}}}},
		},
	})
	assertSameJSON(t, tg.Consul, &api.Consul{Namespace: "apps"})
	assertSameJSON(t, tg.Networks[0].DNS, &api.DNSConfig{Servers: []string{"1.1.1.1"}})
	assertSameJSON(t, tg.Services, []*api.Service{{
		Name: "api", PortLabel: "http", Tags: []string{"v1", "public"}, Provider: "nomad",
		Meta: map[string]string{"version": "1"},
		Checks: []api.ServiceCheck{{
			Type: "http", Path: "/health", Interval: 10 * time.Second, Timeout: 2 * time.Second,
			Header:       map[string][]string{"Authorization": {"Bearer x"}},
			CheckRestart: &api.CheckRestart{Limit: 3, Grace: new(30 * time.Second)},
		}},
	}})

	task := tg.Tasks[0]
	// The task's own vault block wins over the job's; both get the parser's
	// vault defaults.
	assertSameJSON(t, task.Vault, &api.Vault{Role: "api", Env: new(true), ChangeMode: new("restart")})
	assertSameJSON(t, task.Artifacts, []*api.TaskArtifact{{
		GetterSource: new("https://example.com/api.tar.gz"), RelativeDest: new("local/bin"),
		GetterOptions: map[string]string{"checksum": "sha256:abc"},
	}})
	assertSameJSON(t, task.Templates, []*api.Template{{
		EmbeddedTmpl: new(`DB={{ key "db" }}`), DestPath: new("secrets/env"), Envvars: new(true),
		ChangeMode: new("restart"), Perms: new("0644"), Splay: new(5 * time.Second), ErrMissingKey: new(false),
	}})
	assertSameJSON(t, task.VolumeMounts, []*api.VolumeMount{{Volume: new("data"), Destination: new("/var/lib/data")}})
	assertSameJSON(t, task.Identities, []*api.WorkloadIdentity{{Env: true, File: true}})
	assertSameJSON(t, task.ScalingPolicies, []*api.ScalingPolicy{{
		Min: new(int64(100)), Max: new(int64(1000)), Type: "vertical_cpu",
		Policy: map[string]any{"strategy": []map[string]any{{"app-sizing-percentile": []map[string]any{{"percentile": "95"}}}}},
	}})
	assertSameJSON(t, task.Resources.Devices, []*api.RequestedDevice{{Name: "nvidia/gpu", Count: new(uint64(1))}})
}

func TestJobLevelVaultReachesTasksWithoutOne(t *testing.T) {
	src := `
job "j" {
  vault { policies = ["p"] }
  group "g" {
    vault { policies = ["group"] }
    task "a" { driver = "raw_exec" }
    task "b" {
      driver = "raw_exec"
      vault { policies = ["own"] }
    }
  }
  group "h" {
    task "c" { driver = "raw_exec" }
  }
}`
	res, err := Parse("vault.nomad.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	policy := func(g, task int) string { return res.Job.TaskGroups[g].Tasks[task].Vault.Policies[0] }
	if policy(0, 0) != "group" || policy(0, 1) != "own" || policy(1, 0) != "p" {
		t.Fatalf("vault policies: %s %s %s", policy(0, 0), policy(0, 1), policy(1, 0))
	}
}
