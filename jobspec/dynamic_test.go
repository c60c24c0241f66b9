package jobspec

import (
	"testing"

	"github.com/opennomad/nomad/api"
)

func TestDynamicBlocks(t *testing.T) {
	res := parseFixture(t, "dynamic.nomad.hcl", Options{})
	j := res.Job
	assertSameJSON(t, j.Constraints, []*api.Constraint{
		{LTarget: "${attr.kernel.name}", RTarget: "windows", Operand: "!="},
		{LTarget: "${attr.kernel.name}", RTarget: "plan9", Operand: "!="},
	})
	if len(j.TaskGroups) != 2 {
		t.Fatalf("groups = %d", len(j.TaskGroups))
	}
	// Map iteration is in key order: api, then web.
	api0, web := j.TaskGroups[0], j.TaskGroups[1]
	if *api0.Name != "api" || *web.Name != "web" || *api0.Count != 2 || *web.Count != 1 {
		t.Fatalf("groups = %s/%d %s/%d", *api0.Name, *api0.Count, *web.Name, *web.Count)
	}
	assertSameJSON(t, web.Networks, []*api.NetworkResource{{
		DynamicPorts: []api.Port{{Label: "http", To: 3000}, {Label: "metrics", To: 3001}},
	}})
	task := web.Tasks[0]
	assertSameJSON(t, task.Config, map[string]any{
		"command": "/srv/web",
		"args":    []any{"--port", "${NOMAD_PORT_http}"},
		"mount": []map[string]any{
			{"bind": []map[string]any{{"source": "/etc/ssl"}}},
			{"bind": []map[string]any{{"source": "/etc/hosts"}}},
		},
	})
	assertSameJSON(t, task.Env, map[string]string{"SERVICE": "web", "PORT": "3000"})
	assertSameJSON(t, task.Meta, map[string]string{"replicas": "1"})
}

func TestDynamicBlockErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{
			name: "for_each over a runtime value",
			src:  "job \"j\" {\n  dynamic \"constraint\" {\n    for_each = attr.x\n    content {}\n  }\n}\n",
			want: `job.hcl:3:16: Unknown variable; There is no variable named "attr".`,
		},
		{
			name: "dynamic block of an unknown type",
			src:  "job \"j\" {\n  dynamic \"bogus\" {\n    for_each = [1]\n    content {}\n  }\n}\n",
			want: `job.hcl:2:11: Unsupported block type; Blocks of type "bogus" are not expected here.`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("job.hcl", []byte(tc.src), Options{})
			if err == nil || !contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
}
