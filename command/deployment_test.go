package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
)

// canaryJob is a service job of two allocations whose update asks for
// one canary: its first version's rollout is a deployment, and a second
// version's waits for the canary's promotion.
func canaryJob(cmd string) string {
	return `job "web" {
  datacenters = ["dc1"]
  group "web" {
    count = 2
    update {
      canary       = 1
      max_parallel = 1
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "` + cmd + `"
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`
}

// TestDeploymentCommands walks the deployment commands against a real
// dev agent (its allocations stay pending: no client runs them, so the
// canary never turns healthy): list, status, the job's deployments,
// pause, resume, a promotion refused for want of healthy canaries, fail.
func TestDeploymentCommands(t *testing.T) {
	c := newRealAgent(t)
	c.AddNode(t, &api.Node{})
	dir := t.TempDir()
	v1, v2 := filepath.Join(dir, "v1.hcl"), filepath.Join(dir, "v2.hcl")
	if err := os.WriteFile(v1, []byte(canaryJob("/bin/true")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v2, []byte(canaryJob("/bin/sleep")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{v1, v2} {
		if res := runCommand(t, c.Addr(), runOpts{}, "job", "run", "-detach", f); res.code != 0 {
			t.Fatalf("job run %s: %d\n%s%s", f, res.code, res.stdout, res.stderr)
		}
		c.Settle(t)
	}
	client, err := api.NewClient(&api.Config{Address: c.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	latest, _, err := client.Jobs().LatestDeployment("web", nil)
	if err != nil || latest == nil {
		t.Fatalf("latest deployment: %v %v", latest, err)
	}
	id := latest.ID
	short := id[:8]

	steps := []struct {
		name     string
		args     []string
		wantCode int
		outHas   []string
		errHas   []string
		check    func(t *testing.T, out string)
	}{
		{name: "list", args: []string{"deployment", "list"},
			outHas: []string{"ID        Job ID  Job Version  Status", short + "  web     1            running"}},
		{name: "status by prefix", args: []string{"deployment", "status", id[:6]},
			outHas: []string{"ID          = " + short, "Job ID      = web", "Job Version = 1", "Status      = running",
				"Deployed", "Task Group  Promoted  Desired  Canaries  Placed  Healthy  Unhealthy", "web         false     2        1"}},
		{name: "status as JSON", args: []string{"deployment", "status", "-json", short},
			check: func(t *testing.T, out string) {
				var d api.Deployment
				if err := json.Unmarshal([]byte(out), &d); err != nil || d.ID != id {
					t.Fatalf("status -json: %v %s", err, out)
				}
			}},
		{name: "job deployments", args: []string{"job", "deployments", "web"},
			outHas: []string{short + "  web     1            running"}},
		{name: "job deployments -latest", args: []string{"job", "deployments", "-latest", "web"},
			outHas: []string{"ID          = " + short, "Deployed"}},
		{name: "pause", args: []string{"deployment", "pause", short},
			outHas: []string{`Deployment "` + short + `" paused`}},
		{name: "paused", args: []string{"deployment", "status", short},
			outHas: []string{"Status      = paused"}},
		{name: "resume", args: []string{"deployment", "resume", "-detach", short},
			outHas: []string{`Deployment "` + short + `" resumed`}},
		{name: "promotion needs healthy canaries", args: []string{"job", "promote", "-detach", "web"}, wantCode: 1,
			errHas: []string{"Error promoting deployment", "healthy"}},
		{name: "fail", args: []string{"deployment", "fail", "-detach", short},
			outHas: []string{`Deployment "` + short + `" failed`}},
		{name: "failed", args: []string{"deployment", "status", short},
			outHas: []string{"Status      = failed", "Deployment marked as failed"}},
		{name: "unknown prefix", args: []string{"deployment", "status", "ffff"}, wantCode: 1,
			errHas: []string{`No deployment with prefix or ID "ffff" found`}},
		{name: "no argument", args: []string{"deployment", "pause"}, wantCode: 1,
			errHas: []string{"This command takes one argument"}},
		{name: "group help", args: []string{"deployment"}, wantCode: 1,
			errHas: []string{"Usage: nomad deployment <subcommand>", "promote"}},
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
