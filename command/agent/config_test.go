package agent

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// writeFiles creates files (name -> content) in a new directory and
// returns its path.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		must.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

const fullHCL = `
name       = "node-1"
region     = "europe"
datacenter = "dc2"
data_dir   = "/var/lib/nomad"
bind_addr  = "10.0.0.5"
log_level  = "warn"

ports {
  http = 5646
  rpc  = 5647
  serf = 5648
}
addresses {
  http = "127.0.0.1"
}
advertise {
  rpc = "10.0.0.5:5647"
}

server {
  enabled                   = true
  bootstrap_expect          = 3
  num_schedulers            = 2
  enabled_schedulers        = ["service", "batch", "_core"]
  heartbeat_grace           = "20s"
  min_heartbeat_ttl         = "15s"
  max_heartbeats_per_second = 100.5
  failover_heartbeat_ttl    = "10m"
  eval_gc_threshold         = "2h"
  batch_eval_gc_threshold   = "48h"
  job_gc_interval           = "10m"
  job_gc_threshold          = "8h"
  node_gc_threshold         = "72h"
  deployment_gc_threshold   = "3h"
  plan_apply_pipeline       = 4
  event_buffer_size         = 500

  default_scheduler_config {
    scheduler_algorithm             = "spread"
    memory_oversubscription_enabled = true
    preemption_config {
      batch_scheduler_enabled = true
    }
  }

  server_join {
    retry_join     = ["10.0.0.6", "10.0.0.7:5648"]
    retry_interval = "15s"
    retry_max      = 5
  }
}

client {
  enabled           = true
  servers           = ["10.0.0.6:5647"]
  node_class        = "compute"
  node_pool         = "batch-pool"
  network_interface = "eth0"
  max_kill_timeout  = "1m"
  disable_remote_exec = true
  meta {
    rack = "r1"
  }
  options = {
    "driver.raw_exec.enable" = "1"
  }
  reserved {
    cpu            = 500
    memory         = 512
    disk           = 1024
    reserved_ports = "22,8000-8002"
  }
}

plugin "raw_exec" {
  config {
    enabled = true
  }
}

telemetry {
  prometheus_metrics  = true
  collection_interval = "5s"
  disable_hostname    = true
}
`

func TestConfig_FullFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.hcl": fullHCL})
	c, err := LoadConfig([]string{"-config", filepath.Join(dir, "agent.hcl")}, io.Discard)
	must.NoError(t, err)

	must.Eq(t, "node-1", c.Name)
	must.Eq(t, "europe", c.Region)
	must.Eq(t, "dc2", c.Datacenter)
	must.Eq(t, "/var/lib/nomad", c.DataDir)
	must.Eq(t, "10.0.0.5", c.BindAddr)
	must.Eq(t, "WARN", c.LogLevel)
	must.Eq(t, Ports{HTTP: 5646, RPC: 5647, Serf: 5648}, c.Ports)
	must.Eq(t, "127.0.0.1", c.Addresses.HTTP)
	must.Eq(t, "10.0.0.5:5647", c.Advertise.RPC)

	s := c.Server
	must.True(t, s.Enabled)
	must.Eq(t, 3, s.BootstrapExpect)
	must.Eq(t, 2, s.NumSchedulers)
	must.Eq(t, []string{"service", "batch", "_core"}, s.EnabledSchedulers)
	must.Eq(t, 20*time.Second, s.HeartbeatGrace)
	must.Eq(t, 15*time.Second, s.MinHeartbeatTTL)
	must.Eq(t, 100.5, s.MaxHeartbeatsPerSecond)
	must.Eq(t, 10*time.Minute, s.FailoverHeartbeatTTL)
	must.Eq(t, 2*time.Hour, s.EvalGCThreshold)
	must.Eq(t, 48*time.Hour, s.BatchEvalGCThreshold)
	must.Eq(t, 10*time.Minute, s.JobGCInterval)
	must.Eq(t, 8*time.Hour, s.JobGCThreshold)
	must.Eq(t, 72*time.Hour, s.NodeGCThreshold)
	must.Eq(t, 3*time.Hour, s.DeploymentGCThreshold)
	must.Eq(t, 4, s.PlanApplyPipeline)
	must.Eq(t, 500, s.EventBufferSize)
	must.Eq(t, []string{"10.0.0.6", "10.0.0.7:5648"}, s.ServerJoin.RetryJoin)
	must.Eq(t, 15*time.Second, s.ServerJoin.RetryInterval)
	must.Eq(t, 5, s.ServerJoin.RetryMax)

	// A partial block keeps the defaults of what it does not set: system
	// preemption stays on.
	sc := s.DefaultSchedulerConfig.SchedulerConfiguration()
	must.Eq(t, &structs.SchedulerConfiguration{
		SchedulerAlgorithm:            "spread",
		MemoryOversubscriptionEnabled: true,
		PreemptionConfig:              structs.PreemptionConfig{SystemSchedulerEnabled: true, BatchSchedulerEnabled: true},
		EvalBacklogLimit:              structs.DefaultEvalBacklogLimit,
	}, sc)

	cl := c.Client
	must.True(t, cl.Enabled)
	must.Eq(t, []string{"10.0.0.6:5647"}, cl.Servers)
	must.Eq(t, "compute", cl.NodeClass)
	must.Eq(t, "batch-pool", cl.NodePool)
	must.Eq(t, "eth0", cl.NetworkInterface)
	must.Eq(t, time.Minute, cl.MaxKillTimeout)
	must.True(t, cl.DisableRemoteExec)
	must.Eq(t, map[string]string{"rack": "r1"}, cl.Meta)
	must.Eq(t, map[string]string{"driver.raw_exec.enable": "1"}, cl.Options)
	must.Eq(t, Reserved{CPU: 500, MemoryMB: 512, DiskMB: 1024, ReservedPorts: "22,8000-8002"}, cl.Reserved)

	must.True(t, c.PluginEnabled("raw_exec"))
	must.False(t, c.PluginEnabled("exec"))
	must.True(t, c.Telemetry.PrometheusMetrics)
	must.Eq(t, 5*time.Second, c.Telemetry.CollectionInterval)
	must.True(t, c.Telemetry.DisableHostname)
}

func TestConfig_Defaults(t *testing.T) {
	c := DefaultConfig()
	must.Eq(t, "global", c.Region)
	must.Eq(t, "dc1", c.Datacenter)
	must.Eq(t, "0.0.0.0", c.BindAddr)
	must.Eq(t, "INFO", c.LogLevel)
	must.Eq(t, Ports{HTTP: 4646, RPC: 4647, Serf: 4648}, c.Ports)
	must.Eq(t, runtime.NumCPU(), c.Server.NumSchedulers)
	must.Eq(t, []string{"service", "batch", "system", "sysbatch", "_core"}, c.Server.EnabledSchedulers)
	must.Eq(t, 10*time.Second, c.Server.HeartbeatGrace)
	must.Eq(t, 10*time.Second, c.Server.MinHeartbeatTTL)
	must.Eq(t, 50.0, c.Server.MaxHeartbeatsPerSecond)
	must.Eq(t, 5*time.Minute, c.Server.FailoverHeartbeatTTL)
	must.Eq(t, time.Hour, c.Server.EvalGCThreshold)
	must.Eq(t, 24*time.Hour, c.Server.BatchEvalGCThreshold)
	must.Eq(t, 5*time.Minute, c.Server.JobGCInterval)
	must.Eq(t, 4*time.Hour, c.Server.JobGCThreshold)
	must.Eq(t, 24*time.Hour, c.Server.NodeGCThreshold)
	must.Eq(t, time.Hour, c.Server.DeploymentGCThreshold)
	must.Eq(t, 30*time.Second, c.Server.ServerJoin.RetryInterval)
	must.Eq(t, 100, c.Server.EventBufferSize)
	must.Eq(t, structs.DefaultSchedulerConfiguration(), c.Server.DefaultSchedulerConfig.SchedulerConfiguration())
	must.Eq(t, "default", c.Client.NodePool)
	must.Eq(t, 30*time.Second, c.Client.MaxKillTimeout)
	must.Eq(t, time.Second, c.Telemetry.CollectionInterval)
}

func TestConfig_JSONFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.json": `{
  "data_dir": "/tmp/n",
  "server": {"enabled": true, "bootstrap_expect": 1, "heartbeat_grace": "30s"},
  "client": {"enabled": true, "meta": {"a": "b"}},
  "plugin": {"raw_exec": {"config": {"enabled": true, "nested": {"x": 1}}}}
}`})
	c, err := LoadConfig([]string{"-config", dir}, io.Discard)
	must.NoError(t, err)
	must.Eq(t, "/tmp/n", c.DataDir)
	must.True(t, c.Server.Enabled)
	must.Eq(t, 30*time.Second, c.Server.HeartbeatGrace)
	must.Eq(t, map[string]string{"a": "b"}, c.Client.Meta)
	must.True(t, c.PluginEnabled("raw_exec"))
	must.Eq[any](t, map[string]any{"x": int64(1)}, c.Plugins["raw_exec"].Config["nested"])
}

// TestConfig_JSONWithoutExtension loads the file Nomad's api package test
// harness writes: JSON in a file without an extension, with the blocks it
// always sends (vault and acl disabled, client options, telemetry).
func TestConfig_JSONWithoutExtension(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		content string
	}{
		{"no extension", "nomad123", `{"name":"node-1","data_dir":"/tmp/n","disable_update_check":true,` +
			`"log_level":"ERROR","ports":{"http":1,"rpc":2,"serf":3},` +
			`"server":{"enabled":true,"bootstrap_expect":1},` +
			`"client":{"enabled":false,"options":{"test.tighten_network_timeouts":"true"}},` +
			`"vault":{"enabled":false},"acl":{"enabled":false},"telemetry":{"prometheus_metrics":true}}`},
		{"leading blank lines and a byte order mark", "agent.conf", "\ufeff\n\n  " +
			`{"name":"node-1","data_dir":"/tmp/n","ports":{"http":1,"rpc":2,"serf":3},"server":{"enabled":true,"bootstrap_expect":1},"telemetry":{"prometheus_metrics":true},"client":{"options":{"test.tighten_network_timeouts":"true"}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{tc.file: tc.content})
			c, err := LoadConfig([]string{"-config", filepath.Join(dir, tc.file)}, io.Discard)
			must.NoError(t, err)
			must.Eq(t, "node-1", c.Name)
			must.Eq(t, Ports{HTTP: 1, RPC: 2, Serf: 3}, c.Ports)
			must.True(t, c.Server.Enabled)
			must.True(t, c.Telemetry.PrometheusMetrics)
			must.Eq(t, "true", c.Client.Options["test.tighten_network_timeouts"])
		})
	}

	// A file without an extension that is not JSON is HCL.
	dir := writeFiles(t, map[string]string{"agent": "name = \"node-2\"\ndata_dir = \"/tmp/n\"\nserver { enabled = true }\n"})
	c, err := LoadConfig([]string{"-config", filepath.Join(dir, "agent")}, io.Discard)
	must.NoError(t, err)
	must.Eq(t, "node-2", c.Name)
}

func TestConfig_PluginNestedBlocks(t *testing.T) {
	c := DefaultConfig()
	err := ParseConfig(c, "p.hcl", []byte(`
plugin "docker" {
  args = ["-v"]
  config {
    volumes {
      enabled = true
    }
    allow_caps = ["net_raw"]
  }
}`))
	must.NoError(t, err)
	p := c.Plugins["docker"]
	must.Eq(t, []string{"-v"}, p.Args)
	must.Eq[any](t, []map[string]any{{"enabled": true}}, p.Config["volumes"])
	must.Eq[any](t, []any{"net_raw"}, p.Config["allow_caps"])
}

func TestConfig_MergeOrder(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		// A directory is read in lexical order; other extensions and
		// subdirectories are skipped.
		"conf.d/10-base.hcl": `
data_dir = "/a"
log_level = "DEBUG"
server {
  enabled        = true
  num_schedulers = 1
}
client {
  meta {
    rack = "r1"
    zone = "z1"
  }
}
`,
		"conf.d/20-override.json": `{"server": {"num_schedulers": 3}, "client": {"meta": {"zone": "z2"}}}`,
		"conf.d/README.md":        `not a config file`,
		"conf.d/sub/30-skip.hcl":  `data_dir = "/never"`,
		"last.hcl":                `data_dir = "/b"`,
	})
	c, err := LoadConfig([]string{
		"-config", filepath.Join(dir, "conf.d"),
		"-config", filepath.Join(dir, "last.hcl"),
	}, io.Discard)
	must.NoError(t, err)
	must.Eq(t, "/b", c.DataDir)
	must.Eq(t, "DEBUG", c.LogLevel)
	must.True(t, c.Server.Enabled)
	must.Eq(t, 3, c.Server.NumSchedulers)
	must.Eq(t, map[string]string{"rack": "r1", "zone": "z2"}, c.Client.Meta)
	must.Eq(t, []string{
		filepath.Join(dir, "conf.d", "10-base.hcl"),
		filepath.Join(dir, "conf.d", "20-override.json"),
		filepath.Join(dir, "last.hcl"),
	}, c.Files)
}

func TestConfig_FlagsOverrideFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.hcl": `
data_dir = "/file"
region = "file-region"
server {
  enabled = true
  bootstrap_expect = 5
  retry_join = ["legacy:4648"]
}
client { servers = ["file:4647"] }
`})
	c, err := LoadConfig([]string{
		"-config", filepath.Join(dir, "a.hcl"),
		"-data-dir", "/flag",
		"-bootstrap-expect", "3",
		"-retry-join", "s1", "-retry-join", "s2",
		"-client", "-servers", "a:4647, b:4647",
		"-node", "n9", "-dc", "dc9", "-log-level", "error",
		"-bind", "127.0.0.2", "-num-schedulers", "0",
		"-node-class", "gpu", "-node-pool", "p1", "-meta", "k=v",
	}, io.Discard)
	must.NoError(t, err)
	must.Eq(t, "/flag", c.DataDir)
	must.Eq(t, "file-region", c.Region)
	must.Eq(t, 3, c.Server.BootstrapExpect)
	// The legacy server.retry_join is folded into server_join.
	must.Eq(t, []string{"s1", "s2", "legacy:4648"}, c.Server.ServerJoin.RetryJoin)
	must.Nil(t, c.Server.RetryJoin)
	must.True(t, c.Client.Enabled)
	must.Eq(t, []string{"a:4647", "b:4647"}, c.Client.Servers)
	must.Eq(t, "n9", c.Name)
	must.Eq(t, "dc9", c.Datacenter)
	must.Eq(t, "ERROR", c.LogLevel)
	must.Eq(t, "127.0.0.2", c.BindAddr)
	must.Eq(t, 0, c.Server.NumSchedulers)
	must.Eq(t, "gpu", c.Client.NodeClass)
	must.Eq(t, "p1", c.Client.NodePool)
	must.Eq(t, map[string]string{"k": "v"}, c.Client.Meta)
}

func TestConfig_Dev(t *testing.T) {
	c, err := LoadConfig([]string{"-dev"}, io.Discard)
	must.NoError(t, err)
	must.True(t, c.DevMode)
	must.True(t, c.Server.Enabled)
	must.True(t, c.Client.Enabled)
	must.Eq(t, 1, c.Server.BootstrapExpect)
	must.Eq(t, "127.0.0.1", c.BindAddr)
	must.Eq(t, "DEBUG", c.LogLevel)
	must.Eq(t, "", c.DataDir)
	must.True(t, c.PluginEnabled("raw_exec"))
	must.True(t, c.EnableDebug)
	must.True(t, c.Telemetry.PrometheusMetrics)

	// -dev combines with a file and flags; both win over the dev defaults.
	dir := writeFiles(t, map[string]string{"dev.hcl": `
log_level = "INFO"
ports { http = 0 }
client { node_class = "laptop" }
`})
	c, err = LoadConfig([]string{"-dev", "-config", filepath.Join(dir, "dev.hcl"), "-region", "r2"}, io.Discard)
	must.NoError(t, err)
	must.True(t, c.DevMode)
	must.Eq(t, "INFO", c.LogLevel)
	must.Eq(t, 0, c.Ports.HTTP)
	must.Eq(t, "laptop", c.Client.NodeClass)
	must.Eq(t, "r2", c.Region)
	must.True(t, c.PluginEnabled("raw_exec"))

	// A file cannot turn off the server or client of a dev agent, as in
	// Nomad (the api package's harness writes enabled = false beside -dev).
	dir = writeFiles(t, map[string]string{"harness": `{"server": {"enabled": true}, "client": {"enabled": false}}`})
	c, err = LoadConfig([]string{"-dev", "-config", filepath.Join(dir, "harness")}, io.Discard)
	must.NoError(t, err)
	must.True(t, c.Client.Enabled)
	must.True(t, c.Server.Enabled)
}

// TestConfig_FileErrors checks that every decode error names file,
// line and column.
func TestConfig_FileErrors(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		content string
		want    []string
	}{
		{
			name:    "unknown top-level key",
			file:    "a.hcl",
			content: "data_dir = \"/x\"\ndatacentre = \"dc1\"\n",
			want:    []string{`a.hcl:2:1: Unsupported argument: An argument named "datacentre" is not expected here.`},
		},
		{
			name:    "unknown key in server block",
			file:    "a.hcl",
			content: "server {\n  enabled = true\n  num_scheduler = 2\n}\n",
			want:    []string{`a.hcl:3:3: Unsupported argument: An argument named "num_scheduler" is not expected here. Did you mean "num_schedulers"?`},
		},
		{
			name:    "unknown block",
			file:    "a.hcl",
			content: "sentinel {\n  enabled = true\n}\n",
			want:    []string{`a.hcl:1:1: Unsupported block type: Blocks of type "sentinel" are not expected here.`},
		},
		{
			name:    "unknown key in nested block",
			file:    "a.hcl",
			content: "server {\n  default_scheduler_config {\n    preemption_config {\n      gpu_scheduler_enabled = true\n    }\n  }\n}\n",
			want:    []string{`a.hcl:4:7: Unsupported argument: An argument named "gpu_scheduler_enabled" is not expected here.`},
		},
		{
			name:    "bad duration",
			file:    "a.hcl",
			content: "server {\n  heartbeat_grace = \"10 seconds\"\n}\n",
			want:    []string{`a.hcl:2:21: Invalid value for server.heartbeat_grace: invalid duration "10 seconds": unknown unit " seconds" in duration "10 seconds"`},
		},
		{
			name:    "duration given as a number",
			file:    "a.hcl",
			content: "client {\n  max_kill_timeout = 30\n}\n",
			want:    []string{`a.hcl:2:22: Invalid value for client.max_kill_timeout: a duration string such as "10s" is required, got number`},
		},
		{
			name:    "not a number",
			file:    "a.hcl",
			content: "server {\n  num_schedulers = \"many\"\n}\n",
			want:    []string{`a.hcl:2:20: Invalid value for server.num_schedulers: a whole number is required, got string`},
		},
		{
			name:    "fraction for an integer",
			file:    "a.hcl",
			content: "ports {\n  http = 80.5\n}\n",
			want:    []string{`a.hcl:2:10: Invalid value for ports.http: a whole number is required, got 80.5`},
		},
		{
			name:    "list expected",
			file:    "a.hcl",
			content: "client {\n  servers = \"a:4647\"\n}\n",
			want:    []string{`a.hcl:2:13: Invalid value for client.servers: a list of strings is required, got string`},
		},
		{
			name:    "bool expected",
			file:    "a.hcl",
			content: "server {\n  enabled = \"yes\"\n}\n",
			want:    []string{`a.hcl:2:13: Invalid value for server.enabled: a bool is required, got string`},
		},
		{
			name:    "duplicate block",
			file:    "a.hcl",
			content: "server {\n}\nserver {\n}\n",
			want:    []string{`a.hcl:3:1: Duplicate server block: Only one server block is allowed per file; the first is on line 1.`},
		},
		{
			name:    "map both as attribute and block",
			file:    "a.hcl",
			content: "client {\n  meta = { a = \"b\" }\n  meta {\n    c = \"d\"\n  }\n}\n",
			want:    []string{`a.hcl:3:3: Duplicate client.meta: client.meta is already set as an attribute on line 2.`},
		},
		{
			name:    "variables are not allowed",
			file:    "a.hcl",
			content: "data_dir = var.dir\n",
			want:    []string{`a.hcl:1:12: Variables not allowed: Variables may not be used here.`},
		},
		{
			name:    "syntax error",
			file:    "a.hcl",
			content: "server {\n  enabled = \n}\n",
			want:    []string{`a.hcl:2:13: Invalid expression: Expected the start of an expression, but found an invalid expression token.`},
		},
		{
			name:    "json unknown key",
			file:    "a.json",
			content: "{\n  \"server\": {\n    \"enabeld\": true\n  }\n}\n",
			want:    []string{`a.json:3:5: Extraneous JSON object property: No argument or block type is named "enabeld". Did you mean "enabled"?`},
		},
		{
			name:    "every problem is reported, in file order",
			file:    "a.hcl",
			content: "bogus = 1\nserver {\n  heartbeat_grace = \"x\"\n  num_schedulers = \"y\"\n}\n",
			want: []string{
				`a.hcl:1:1: Unsupported argument`,
				`a.hcl:3:21: Invalid value for server.heartbeat_grace`,
				`a.hcl:4:20: Invalid value for server.num_schedulers`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{tc.file: tc.content})
			path := filepath.Join(dir, tc.file)
			_, err := LoadConfig([]string{"-dev", "-config", path}, io.Discard)
			must.Error(t, err)
			var cerr *ConfigError
			must.True(t, errors.As(err, &cerr), must.Sprint(err))
			must.Len(t, len(tc.want), cerr.Problems, must.Sprint(cerr.Problems))
			for i, w := range tc.want {
				want := filepath.Join(dir, w)
				must.StrHasPrefix(t, want, cerr.Problems[i])
			}
		})
	}
}

// TestConfig_ValidationErrors checks the merged configuration and that a
// problem names the file:line or flag that set the key.
func TestConfig_ValidationErrors(t *testing.T) {
	cases := []struct {
		name    string
		content string
		args    []string
		want    []string
	}{
		{
			name: "neither server nor client",
			args: []string{"-data-dir", "/x"},
			want: []string{"must enable the server"},
		},
		{
			name: "data dir required outside dev",
			args: []string{"-server"},
			want: []string{"data_dir: required unless running -dev"},
		},
		{
			name:    "bad log level from a file",
			content: "log_level = \"LOUD\"\n",
			args:    []string{"-dev"},
			want:    []string{`FILE:1:1: log_level: unknown level "LOUD"`},
		},
		{
			name: "bad log level from a flag",
			args: []string{"-dev", "-log-level", "loud"},
			want: []string{`flag -log-level: log_level: unknown level "LOUD"`},
		},
		{
			name:    "enabled schedulers without _core",
			content: "server {\n  enabled_schedulers = [\"service\", \"gpu\"]\n}\n",
			args:    []string{"-dev"},
			want: []string{
				`FILE:2:3: server.enabled_schedulers: must include "_core"`,
				`FILE:2:3: server.enabled_schedulers: unknown scheduler "gpu"`,
			},
		},
		{
			name:    "memory limit not a size",
			content: "server {\n  memory_limit = \"lots\"\n}\n",
			args:    []string{"-dev"},
			want:    []string{`FILE:2:3: server.memory_limit: must be a size such as "2GB" or "1536MiB", got "lots"`},
		},
		{
			name:    "bad values across blocks",
			content: "server {\n  num_schedulers = -1\n  max_heartbeats_per_second = 0\n  default_scheduler_config {\n    scheduler_algorithm = \"random\"\n  }\n}\nclient {\n  reserved {\n    reserved_ports = \"22,90-80\"\n  }\n  node_pool = \"bad pool\"\n}\n",
			args:    []string{"-dev"},
			want: []string{
				`FILE:2:3: server.num_schedulers: must be >= 0, got -1`,
				`FILE:3:3: server.max_heartbeats_per_second: must be > 0, got 0`,
				`FILE:5:5: server.default_scheduler_config.scheduler_algorithm: must be "binpack" or "spread", got "random"`,
				`FILE:12:3: client.node_pool: "bad pool" is not a valid node pool name`,
				`FILE:10:5: client.reserved.reserved_ports: port range "90-80" ends before it starts`,
			},
		},
		{
			name:    "client in the all pool",
			content: "client {\n  node_pool = \"all\"\n}\n",
			args:    []string{"-dev"},
			want:    []string{`FILE:2:3: client.node_pool: node is not allowed to register in node pool "all"`},
		},
		{
			name:    "client-only agent needs servers",
			content: "data_dir = \"/x\"\nclient {\n  enabled = true\n}\n",
			want:    []string{"client.servers: a client without a local server needs servers"},
		},
		{
			name:    "acl token ttl bounds",
			content: "acl {\n  enabled = true\n  token_min_expiration_ttl = \"2h\"\n  token_max_expiration_ttl = \"1h\"\n}\n",
			args:    []string{"-dev"},
			want:    []string{"FILE:4:3: acl.token_max_expiration_ttl: must be greater than token_min_expiration_ttl (2h0m0s), got 1h0m0s"},
		},
		{
			name:    "vault enabled",
			content: "vault {\n  enabled = true\n}\n",
			args:    []string{"-dev"},
			want:    []string{"FILE:2:3: vault.enabled: Vault integration is not built"},
		},
		{
			name:    "dev requires bootstrap_expect 1",
			content: "server {\n  bootstrap_expect = 3\n}\n",
			args:    []string{"-dev"},
			want:    []string{"FILE:2:3: server.bootstrap_expect: must be 1 in -dev mode, got 3"},
		},
		{
			name:    "bad addresses",
			content: "bind_addr = \"localhost\"\nadvertise {\n  rpc = \"10.0.0.1:99999\"\n}\n",
			args:    []string{"-dev"},
			want: []string{
				`FILE:1:1: bind_addr: "localhost" is not an IP address`,
				`FILE:3:3: advertise.rpc: address "10.0.0.1:99999": "99999" is not a port number in [1, 65535]`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			var file string
			if tc.content != "" {
				dir := writeFiles(t, map[string]string{"a.hcl": tc.content})
				file = filepath.Join(dir, "a.hcl")
				args = append(args, "-config", file)
			}
			_, err := LoadConfig(args, io.Discard)
			var cerr *ConfigError
			must.True(t, errors.As(err, &cerr), must.Sprint(err))
			must.Len(t, len(tc.want), cerr.Problems, must.Sprint(cerr.Problems))
			for i, w := range tc.want {
				must.StrHasPrefix(t, strings.ReplaceAll(w, "FILE", file), cerr.Problems[i])
			}
		})
	}
}

func TestConfig_FlagErrors(t *testing.T) {
	_, err := LoadConfig([]string{"-dev", "-meta", "novalue"}, io.Discard)
	must.ErrorContains(t, err, `flag -meta: "novalue" must be key=value`)
	_, err = LoadConfig([]string{"-dev", "extra"}, io.Discard)
	must.ErrorContains(t, err, "unexpected arguments: extra")
	_, err = LoadConfig([]string{"-bogus"}, io.Discard)
	must.ErrorContains(t, err, "flag provided but not defined: -bogus")
	_, err = LoadConfig([]string{"-config", "/does/not/exist.hcl"}, io.Discard)
	must.ErrorContains(t, err, "/does/not/exist.hcl")
}

func TestParsePortSpec(t *testing.T) {
	cases := []struct {
		spec string
		want []int
		err  string
	}{
		{"", nil, ""},
		{"22", []int{22}, ""},
		{"80, 22,8000-8002,8001", []int{22, 80, 8000, 8001, 8002}, ""},
		{"0", nil, `port "0": "0" is not a port number`},
		{"a-b", nil, `port "a-b": "a" is not a port number`},
		{"10-70000", nil, `port range "10-70000": "70000" is not a port number`},
	}
	for _, tc := range cases {
		got, err := ParsePortSpec(tc.spec)
		if tc.err != "" {
			must.ErrorContains(t, err, tc.err)
			continue
		}
		must.NoError(t, err)
		must.Eq(t, tc.want, got)
	}
}

// The acl block loads with every key Nomad's files use, and reaches the
// server's configuration.
func TestConfig_ACLBlock(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.hcl": `
acl {
  enabled                  = true
  token_ttl                = "30s"
  policy_ttl               = "30s"
  role_ttl                 = "30s"
  replication_token        = "c2a8a1f6-6d4b-4c59-9a53-2a1b0f3c9d10"
  token_min_expiration_ttl = "2m"
  token_max_expiration_ttl = "12h"
}
server {
  authoritative_region = "europe"
}
`})
	c, err := LoadConfig([]string{"-dev", "-config", filepath.Join(dir, "agent.hcl")}, io.Discard)
	must.NoError(t, err)
	must.True(t, c.ACL.Enabled)
	must.Eq(t, 30*time.Second, c.ACL.TokenTTL)
	sc := serverConfig(c)
	must.True(t, sc.ACLEnabled)
	must.Eq(t, 2*time.Minute, sc.ACLTokenMinExpirationTTL)
	must.Eq(t, 12*time.Hour, sc.ACLTokenMaxExpirationTTL)
	must.Eq(t, "europe", sc.AuthoritativeRegion)
	must.Eq(t, "c2a8a1f6-6d4b-4c59-9a53-2a1b0f3c9d10", sc.ReplicationToken)

	// Unset bounds keep the defaults.
	plain, err := LoadConfig([]string{"-dev"}, io.Discard)
	must.NoError(t, err)
	sc = serverConfig(plain)
	must.False(t, sc.ACLEnabled)
	must.Eq(t, structs.DefaultACLTokenMinExpirationTTL, sc.ACLTokenMinExpirationTTL)
	must.Eq(t, structs.DefaultACLTokenMaxExpirationTTL, sc.ACLTokenMaxExpirationTTL)
}
