package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// TestNodePoolCommands walks the node pool commands in order against a
// real dev agent: init, apply from HCL, JSON and standard input, list,
// info, nodes, jobs, the refusals, delete.
func TestNodePoolCommands(t *testing.T) {
	c := newRealAgent(t)
	dir := t.TempDir()
	t.Chdir(dir)

	hclSpec := filepath.Join(dir, "prod.nomad.hcl")
	writeFile(t, hclSpec, `
node_pool "prod" {
  description       = "Node pool for production workloads."
  node_identity_ttl = "720h"
  meta {
    env = "prod"
  }
}
`)
	jsonSpec := filepath.Join(dir, "dev.json")
	writeFile(t, jsonSpec, `{"Name":"dev","Description":"dev pool","Meta":{"env":"dev"},"NodeIdentityTTL":"1h"}`)
	noBlock := filepath.Join(dir, "bad.hcl")
	writeFile(t, noBlock, `description = "no block"`)
	governance := filepath.Join(dir, "gov.hcl")
	writeFile(t, governance, `node_pool "gov" {
  scheduler_config {
    scheduler_algorithm = "spread"
  }
}`)

	nodeID := c.AddNode(t, &api.Node{Name: "client-1", NodePool: "prod"})
	client, err := api.NewClient(&api.Config{Address: c.Addr()})
	if err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name     string
		args     []string
		stdin    string
		setup    func(t *testing.T)
		wantCode int
		outHas   []string
		errHas   []string
		check    func(t *testing.T, out string)
	}{
		{name: "init", args: []string{"node", "pool", "init"},
			outHas: []string{"Example node pool specification written to pool.nomad.hcl"}},
		{name: "init refuses to overwrite", args: []string{"node", "pool", "init"}, wantCode: 1,
			errHas: []string{`Node pool specification "pool.nomad.hcl" already exists`}},
		{name: "init json, quiet", args: []string{"node", "pool", "init", "-out", "json", "-quiet"},
			check: func(t *testing.T, out string) {
				if out != "" {
					t.Fatalf("quiet printed %q", out)
				}
				if _, err := os.Stat(filepath.Join(dir, "pool.nomad.json")); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "apply the example", args: []string{"node", "pool", "apply", "pool.nomad.hcl"},
			outHas: []string{`Successfully applied node pool "example"!`}},
		{name: "apply the JSON example", args: []string{"node", "pool", "apply", "-json", "pool.nomad.json"},
			outHas: []string{`Successfully applied node pool "example"!`}},
		{name: "list at start", args: []string{"node", "pool", "list"},
			outHas: []string{"Name     Description", "all      Node pool with all nodes in the cluster.",
				"default  Default node pool.", "example  Example node pool", "prod"}},
		{name: "apply HCL", args: []string{"node", "pool", "apply", hclSpec},
			outHas: []string{`Successfully applied node pool "prod"!`}},
		{name: "apply JSON", args: []string{"node", "pool", "apply", "-json", jsonSpec},
			outHas: []string{`Successfully applied node pool "dev"!`}},
		{name: "apply from stdin", args: []string{"node", "pool", "apply", "-"},
			stdin:  `node_pool "stdin" { description = "from stdin" }`,
			outHas: []string{`Successfully applied node pool "stdin"!`}},
		{name: "apply without a block", args: []string{"node", "pool", "apply", noBlock}, wantCode: 1,
			errHas: []string{"Failed to parse node pool"}},
		{name: "apply governance", args: []string{"node", "pool", "apply", governance}, wantCode: 1,
			errHas: []string{"Error applying node pool", `Feature "Node Pools Governance" is unlicensed`}},
		{name: "apply a built-in", args: []string{"node", "pool", "apply", "-"}, wantCode: 1,
			stdin:  `node_pool "default" { description = "mine" }`,
			errHas: []string{`modifying node pool "default" is not allowed`}},
		{name: "info", args: []string{"node", "pool", "info", "prod"},
			outHas: []string{"Name              = prod", "Description       = Node pool for production workloads.",
				"Node Identity TTL = 720h0m0s", "Metadata", "env = prod"}},
		{name: "info by prefix", args: []string{"node", "pool", "info", "st"},
			outHas: []string{"Name              = stdin", "No metadata"}},
		{name: "info of an ambiguous prefix", args: []string{"node", "pool", "info", "d"}, wantCode: 1,
			errHas: []string{"Prefix matched multiple node pools", "default", "dev"}},
		{name: "info of a missing pool", args: []string{"node", "pool", "info", "nope"}, wantCode: 1,
			errHas: []string{`No node pool with prefix "nope" found`}},
		{name: "info as JSON", args: []string{"node", "pool", "info", "-json", "dev"},
			check: func(t *testing.T, out string) {
				var p api.NodePool
				if err := json.Unmarshal([]byte(out), &p); err != nil || p.Name != "dev" || p.NodeIdentityTTL != time.Hour {
					t.Fatalf("info: %v %s", err, out)
				}
			}},
		{name: "info with a template", args: []string{"node", "pool", "info", "-t", "{{.Name}} [{{.Meta.env}}]", "dev"},
			outHas: []string{"dev [dev]"}},
		{name: "nodes", args: []string{"node", "pool", "nodes", "prod"},
			outHas: []string{"ID        DC   Name      Class   Drain  Eligibility  Status", nodeID[:8] + "  dc1  client-1"}},
		{name: "nodes of all", args: []string{"node", "pool", "nodes", "-verbose", "all"}, outHas: []string{nodeID}},
		{name: "nodes of an empty pool", args: []string{"node", "pool", "nodes", "dev"},
			outHas: []string{`No nodes in node pool "dev"`}},
		{name: "nodes filtered", args: []string{"node", "pool", "nodes", "-filter", `Name == "other"`, "prod"},
			outHas: []string{`No nodes in node pool "prod"`}},
		{name: "jobs", args: []string{"node", "pool", "jobs", "prod"},
			setup: func(t *testing.T) {
				job := testJob("web", 1, 64)
				job.NodePool = new("prod")
				if _, _, err := client.Jobs().Register(job, nil); err != nil {
					t.Fatal(err)
				}
			},
			outHas: []string{"ID   Type     Priority  Status", "web  service  50"}},
		{name: "jobs of all namespaces", args: []string{"node", "pool", "jobs", "-namespace", "*", "prod"},
			outHas: []string{"ID   Namespace  Type", "web  default    service"}},
		{name: "jobs of an empty pool", args: []string{"node", "pool", "jobs", "dev"}, outHas: []string{"No jobs found"}},
		{name: "list paged", args: []string{"node", "pool", "list", "-per-page", "2"},
			outHas: []string{"all", "default", "Results have been paginated. To get the next page run:\n\nnomad node pool list -page-token dev"}},
		{name: "list as JSON", args: []string{"node", "pool", "list", "-json"},
			check: func(t *testing.T, out string) {
				var list []*api.NodePool
				if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 6 {
					t.Fatalf("list: %v %s", err, out)
				}
			}},
		{name: "delete a built-in", args: []string{"node", "pool", "delete", "all"}, wantCode: 1,
			errHas: []string{"Error deleting node pool", `deleting node pool "all" is not allowed`}},
		{name: "delete a pool with nodes", args: []string{"node", "pool", "delete", "prod"}, wantCode: 1,
			errHas: []string{`node pool "prod" has nodes in regions: [global]`}},
		{name: "delete a missing pool", args: []string{"node", "pool", "delete", "nope"}, wantCode: 1,
			errHas: []string{"Error deleting node pool", "node pool not found"}},
		{name: "delete", args: []string{"node", "pool", "delete", "dev"},
			outHas: []string{`Successfully deleted node pool "dev"!`}},
		{name: "list after delete", args: []string{"node", "pool", "list"},
			check: func(t *testing.T, out string) {
				if strings.Contains(out, "dev ") || !strings.Contains(out, "stdin") {
					t.Fatalf("list:\n%s", out)
				}
			}},
		{name: "group help", args: []string{"node", "pool"}, wantCode: 1, errHas: []string{"Usage: nomad node pool <subcommand>"}},
	}
	for _, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
			if st.setup != nil {
				st.setup(t)
			}
			res := runCommand(t, c.Addr(), runOpts{stdin: st.stdin}, st.args...)
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
