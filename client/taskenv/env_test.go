package taskenv

import (
	"reflect"
	"testing"

	"github.com/opennomad/nomad/structs"
)

func fixture() Params {
	job := &structs.Job{
		ID: "web-job", Name: "web-job", Namespace: "default", Region: "global", ParentID: "parent",
		Meta: map[string]string{"owner": "ops", "my-key": "job"},
		TaskGroups: []*structs.TaskGroup{{
			Name: "api",
			Meta: map[string]string{"my-key": "group"},
			Tasks: []*structs.Task{{
				Name: "server",
				Meta: map[string]string{"tier": "front"},
				Env: map[string]string{
					"GREETING": "hello ${node.unique.name} on ${attr.kernel.name}",
					"ADDR":     "${NOMAD_ADDR_http}",
					"RACK":     "${meta.rack}",
					"UNKNOWN":  "${nope} ${attr.nope}",
					"PATH":     "/opt/bin",
				},
				Resources: &structs.Resources{CPU: 500, MemoryMB: 256},
			}},
		}},
	}
	alloc := &structs.Allocation{
		ID: "12345678-aaaa-bbbb-cccc-1234567890ab", Name: "web-job.api[2]", Namespace: "default",
		JobID: "web-job", Job: job, TaskGroup: "api",
		AllocatedResources: &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{"server": {
				Cpu:    structs.AllocatedCpuResources{CpuShares: 750, ReservedCores: []uint16{0, 1}},
				Memory: structs.AllocatedMemoryResources{MemoryMB: 512, MemoryMaxMB: 1024},
			}},
			Shared: structs.AllocatedSharedResources{
				Ports: structs.AllocatedPorts{
					{Label: "http", Value: 23456, HostIP: "10.0.0.5"},
					{Label: "admin-ui", Value: 25000, To: 8080, HostIP: ""},
				},
			},
		},
	}
	node := &structs.Node{
		ID: "node-1", Name: "worker-1", Datacenter: "dc2", NodeClass: "gpu", NodePool: "default",
		Attributes: map[string]string{"kernel.name": "linux", "unique.network.ip-address": "10.0.0.9"},
		Meta:       map[string]string{"rack": "r42"},
	}
	return Params{
		Alloc: alloc, Task: job.TaskGroups[0].Tasks[0], Node: node, Region: "global",
		Dirs:    Dirs{AllocDir: "/data/alloc/x/alloc", TaskDir: "/data/alloc/x/server/local", SecretsDir: "/data/alloc/x/server/secrets"},
		HostEnv: map[string]string{"PATH": "/usr/bin", "HOME": "/root"},
	}
}

func TestBuild(t *testing.T) {
	env := New(fixture()).Map()
	want := map[string]string{
		"NOMAD_ALLOC_ID":           "12345678-aaaa-bbbb-cccc-1234567890ab",
		"NOMAD_SHORT_ALLOC_ID":     "12345678",
		"NOMAD_ALLOC_NAME":         "web-job.api[2]",
		"NOMAD_ALLOC_INDEX":        "2",
		"NOMAD_ALLOC_DIR":          "/data/alloc/x/alloc",
		"NOMAD_TASK_DIR":           "/data/alloc/x/server/local",
		"NOMAD_SECRETS_DIR":        "/data/alloc/x/server/secrets",
		"NOMAD_TASK_NAME":          "server",
		"NOMAD_GROUP_NAME":         "api",
		"NOMAD_JOB_NAME":           "web-job",
		"NOMAD_JOB_ID":             "web-job",
		"NOMAD_JOB_PARENT_ID":      "parent",
		"NOMAD_NAMESPACE":          "default",
		"NOMAD_REGION":             "global",
		"NOMAD_DC":                 "dc2",
		"NOMAD_CPU_LIMIT":          "750",
		"NOMAD_CPU_CORES":          "0,1",
		"NOMAD_MEMORY_LIMIT":       "512",
		"NOMAD_MEMORY_MAX_LIMIT":   "1024",
		"NOMAD_PORT_http":          "23456",
		"NOMAD_HOST_PORT_http":     "23456",
		"NOMAD_IP_http":            "10.0.0.5",
		"NOMAD_ADDR_http":          "10.0.0.5:23456",
		"NOMAD_HOST_IP_http":       "10.0.0.5",
		"NOMAD_HOST_ADDR_http":     "10.0.0.5:23456",
		"NOMAD_PORT_admin_ui":      "8080", // inside port when `to` is set
		"NOMAD_HOST_PORT_admin_ui": "25000",
		"NOMAD_IP_admin_ui":        "10.0.0.9", // node address when the mapping has none
		"NOMAD_ADDR_admin_ui":      "10.0.0.9:25000",
		"NOMAD_HOST_IP_admin_ui":   "10.0.0.9",
		"NOMAD_HOST_ADDR_admin_ui": "10.0.0.9:25000",
		"NOMAD_META_owner":         "ops",
		"NOMAD_META_OWNER":         "ops",
		"NOMAD_META_my_key":        "group", // group meta overrides job meta
		"NOMAD_META_MY_KEY":        "group",
		"NOMAD_META_tier":          "front",
		"NOMAD_META_TIER":          "front",
		"GREETING":                 "hello worker-1 on linux",
		"ADDR":                     "10.0.0.5:23456",
		"RACK":                     "r42",
		"UNKNOWN":                  "${nope} ${attr.nope}",
		"PATH":                     "/opt/bin", // the task's env wins over the host's
		"HOME":                     "/root",
	}
	if !reflect.DeepEqual(env, want) {
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s = %q, want %q", k, env[k], v)
			}
		}
		for k, v := range env {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected %s = %q", k, v)
			}
		}
	}
}

func TestResourcesFromTaskWhenNotAllocated(t *testing.T) {
	p := fixture()
	p.Alloc.AllocatedResources = nil
	env := New(p).Map()
	if env["NOMAD_CPU_LIMIT"] != "500" || env["NOMAD_MEMORY_LIMIT"] != "256" {
		t.Fatalf("cpu %s memory %s, want the task's asks", env["NOMAD_CPU_LIMIT"], env["NOMAD_MEMORY_LIMIT"])
	}
	if _, ok := env["NOMAD_MEMORY_MAX_LIMIT"]; ok {
		t.Fatal("NOMAD_MEMORY_MAX_LIMIT set without a max")
	}
}

func TestReplace(t *testing.T) {
	e := New(fixture())
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"${NOMAD_TASK_NAME}", "server"},
		{"a-${NOMAD_ALLOC_INDEX}-${node.datacenter}-${node.class}-${node.pool}-${node.region}", "a-2-dc2-gpu-default-global"},
		{"${node.unique.id}", "node-1"},
		{"${ NOMAD_TASK_NAME }", "server"},
		{"unterminated ${NOMAD_TASK_NAME", "unterminated ${NOMAD_TASK_NAME"},
		{"$NOMAD_TASK_NAME stays", "$NOMAD_TASK_NAME stays"},
		{"${}", "${}"},
	}
	for _, tc := range cases {
		if got := e.Replace(tc.in); got != tc.want {
			t.Errorf("Replace(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReplaceConfig(t *testing.T) {
	e := New(fixture())
	in := map[string]interface{}{
		"command": "${NOMAD_TASK_DIR}/bin/server",
		"args":    []interface{}{"-port", "${NOMAD_PORT_http}", int64(3)},
		"nested":  map[string]interface{}{"dc": "${node.datacenter}"},
		"list":    []string{"${attr.kernel.name}"},
		"n":       1.5,
	}
	got := e.ReplaceConfig(in)
	want := map[string]interface{}{
		"command": "/data/alloc/x/server/local/bin/server",
		"args":    []interface{}{"-port", "23456", int64(3)},
		"nested":  map[string]interface{}{"dc": "dc2"},
		"list":    []string{"linux"},
		"n":       1.5,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ReplaceConfig = %#v, want %#v", got, want)
	}
	if in["command"] != "${NOMAD_TASK_DIR}/bin/server" {
		t.Fatal("ReplaceConfig modified its input")
	}
}

func TestHostEnv(t *testing.T) {
	got := HostEnv([]string{"A=1", "VAULT_TOKEN=secret", "B=x=y", "broken", "=nokey"}, DefaultEnvDenylist)
	want := map[string]string{"A": "1", "B": "x=y"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("HostEnv = %v, want %v", got, want)
	}
}

func BenchmarkBuild(b *testing.B) {
	p := fixture()
	for i := 0; i < b.N; i++ {
		New(p)
	}
}
