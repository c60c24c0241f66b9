package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
)

// TestNamespaceCommands walks the namespace commands in order against a
// real dev agent: apply by name and from HCL and JSON files, list,
// status, inspect, the refusals, delete.
func TestNamespaceCommands(t *testing.T) {
	c := newRealAgent(t)
	dir := t.TempDir()
	hclSpec := filepath.Join(dir, "team-b.hcl")
	writeFile(t, hclSpec, `
name        = "team-b"
description = "team B"
capabilities {
  enabled_task_drivers = ["exec", "raw_exec"]
}
node_pool_config {
  default = "default"
}
meta {
  owner = "b"
}
`)
	jsonSpec := filepath.Join(dir, "team-c.json")
	writeFile(t, jsonSpec, `{"Name":"team-c","Description":"team C","Meta":{"owner":"c"}}`)
	badSpec := filepath.Join(dir, "bad.hcl")
	writeFile(t, badSpec, `description = "no name"`)

	steps := []struct {
		name     string
		args     []string
		wantCode int
		outHas   []string
		errHas   []string
		check    func(t *testing.T, out string)
	}{
		{name: "list at start", args: []string{"namespace", "list"},
			outHas: []string{"Name     Description", "default  Default shared namespace"}},
		{name: "apply by name", args: []string{"namespace", "apply", "-description", "team A", "-meta", "owner=a", "team-a"},
			outHas: []string{`Successfully applied namespace "team-a"!`}},
		{name: "apply by name keeps what the flags do not change", args: []string{"namespace", "apply", "-meta", "tier=1", "team-a"},
			outHas: []string{`Successfully applied namespace "team-a"!`}},
		{name: "status", args: []string{"namespace", "status", "team-a"},
			outHas: []string{"Name        = team-a", "Description = team A", "Quota       = <none>", "Metadata", "owner = a", "tier  = 1"}},
		{name: "apply an HCL file", args: []string{"namespace", "apply", hclSpec},
			outHas: []string{`Successfully applied namespace "team-b"!`}},
		{name: "status of the HCL one", args: []string{"namespace", "status", "team-b"},
			outHas: []string{"EnabledDrivers       = exec,raw_exec", "NodePoolDefault      = default", "owner = b"}},
		{name: "apply a JSON file", args: []string{"namespace", "apply", "-json", jsonSpec},
			outHas: []string{`Successfully applied namespace "team-c"!`}},
		{name: "apply a file without a name", args: []string{"namespace", "apply", badSpec}, wantCode: 1,
			errHas: []string{"Error parsing the namespace specification", `"name" is required`}},
		{name: "apply an invalid name", args: []string{"namespace", "apply", "bad*name"}, wantCode: 1,
			errHas: []string{"Error applying namespace specification", `invalid name "bad*name".`}},
		{name: "apply a bad -meta", args: []string{"namespace", "apply", "-meta", "novalue", "team-a"}, wantCode: 1,
			errHas: []string{`-meta "novalue" is not <key>=<value>`}},
		{name: "inspect", args: []string{"namespace", "inspect", "team-c"},
			check: func(t *testing.T, out string) {
				var ns api.Namespace
				if err := json.Unmarshal([]byte(out), &ns); err != nil || ns.Name != "team-c" || ns.Meta["owner"] != "c" || ns.CreateIndex == 0 {
					t.Fatalf("inspect: %v %s", err, out)
				}
			}},
		{name: "list as JSON", args: []string{"namespace", "list", "-json"},
			check: func(t *testing.T, out string) {
				var list []*api.Namespace
				if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 4 {
					t.Fatalf("list: %v %s", err, out)
				}
			}},
		{name: "status of a missing namespace", args: []string{"namespace", "status", "nope"}, wantCode: 1,
			errHas: []string{"Error retrieving namespace", "404", "Namespace not found"}},
		{name: "delete default", args: []string{"namespace", "delete", "default"}, wantCode: 1,
			errHas: []string{"Error deleting namespace", "can not delete default namespace"}},
		{name: "delete", args: []string{"namespace", "delete", "team-c"},
			outHas: []string{`Successfully deleted namespace "team-c"!`}},
		{name: "list after delete", args: []string{"namespace", "list"},
			outHas: []string{"default", "team-a", "team-b"}},
		{name: "group help", args: []string{"namespace"}, wantCode: 1, errHas: []string{"Usage: nomad namespace <subcommand>"}},
	}
	for _, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
			res := runCommand(t, c.Addr(), runOpts{}, st.args...)
			if res.code != st.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, st.wantCode, res.stdout, res.stderr)
			}
			for _, s := range st.outHas {
				if !strings.Contains(res.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, res.stdout)
				}
			}
			for _, s := range st.errHas {
				if !strings.Contains(res.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, res.stderr)
				}
			}
			if st.check != nil {
				st.check(t, res.stdout)
			}
		})
		if !ok {
			t.FailNow()
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
