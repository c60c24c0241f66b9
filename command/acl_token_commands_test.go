package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/command/agent"
)

// TestACLTokenReachesTheAgent runs job and operator commands against a
// real dev agent with ACLs on: without a token they are refused, with
// the token in NOMAD_TOKEN or -token they act as far as the token allows.
func TestACLTokenReachesTheAgent(t *testing.T) {
	c := newRealAgentWith(t, func(cfg *agent.Config) { cfg.ACL.Enabled = true })
	client, err := api.NewClient(&api.Config{Address: c.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	boot, _, err := client.ACLTokens().Bootstrap(nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err = api.NewClient(&api.Config{Address: c.Addr(), SecretID: boot.SecretID})
	if err != nil {
		t.Fatal(err)
	}
	token := func(name, rules string) string {
		t.Helper()
		if _, err := client.ACLPolicies().Upsert(&api.ACLPolicy{Name: name, Rules: rules}, nil); err != nil {
			t.Fatal(err)
		}
		tok, _, err := client.ACLTokens().Create(&api.ACLToken{Name: name, Type: "client", Policies: []string{name}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return tok.SecretID
	}
	writer := token("writer", `namespace "default" { policy = "write" }`)
	reader := token("reader", `namespace "default" { policy = "read" }`)

	dir := t.TempDir()
	jobFile := filepath.Join(dir, "web.nomad.hcl")
	if err := os.WriteFile(jobFile, []byte(`job "web" {
  datacenters = ["nowhere"]
  group "web" {
    task "server" {
      driver = "raw_exec"
      config { command = "/bin/sleep" }
    }
  }
}`), 0o644); err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name     string
		args     []string
		envToken string
		wantCode int
		outHas   string
		errHas   string
	}{
		{name: "run without a token", args: []string{"job", "run", "-detach", jobFile}, wantCode: 1, errHas: "Permission denied"},
		{name: "run with a read token", args: []string{"job", "run", "-detach", jobFile}, envToken: reader, wantCode: 1, errHas: "Permission denied"},
		{name: "run with NOMAD_TOKEN", args: []string{"job", "run", "-detach", jobFile}, envToken: writer, outHas: "Evaluation ID"},
		{name: "status without a token", args: []string{"job", "status", "web"}, wantCode: 1, errHas: "Permission denied"},
		{name: "status with a read token", args: []string{"job", "status", "web"}, envToken: reader, outHas: "ID            = web"},
		{name: "status with -token", args: []string{"job", "status", "-token", reader, "web"}, outHas: "ID            = web"},
		{name: "stop with a read token", args: []string{"job", "stop", "-detach", "web"}, envToken: reader, wantCode: 1, errHas: "Permission denied"},
		{name: "snapshot save without operator rights", args: []string{"operator", "snapshot", "save", filepath.Join(dir, "a.snap")},
			envToken: writer, wantCode: 1, errHas: "Permission denied"},
		{name: "snapshot save with a management token", args: []string{"operator", "snapshot", "save", filepath.Join(dir, "b.snap")},
			envToken: boot.SecretID},
		{name: "stop with NOMAD_TOKEN", args: []string{"job", "stop", "-detach", "web"}, envToken: writer},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			opts := runOpts{}
			if st.envToken != "" {
				opts.env = map[string]string{api.EnvToken: st.envToken}
			}
			res := runCommand(t, c.Addr(), opts, st.args...)
			if res.code != st.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, st.wantCode, res.stdout, res.stderr)
			}
			if !strings.Contains(res.stdout, st.outHas) {
				t.Errorf("stdout lacks %q:\n%s", st.outHas, res.stdout)
			}
			if !strings.Contains(res.stderr, st.errHas) {
				t.Errorf("stderr lacks %q:\n%s", st.errHas, res.stderr)
			}
		})
	}
}
