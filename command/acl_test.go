package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/command/agent"
	"github.com/opennomad/nomad/structs"
)

// TestACLCommands walks the acl commands in order against a real dev
// agent with ACLs on: bootstrap, policies, roles, tokens, with the token
// given by -token or NOMAD_TOKEN.
func TestACLCommands(t *testing.T) {
	c := newRealAgentWith(t, func(cfg *agent.Config) { cfg.ACL.Enabled = true })
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.hcl")
	if err := os.WriteFile(rules, []byte(`node { policy = "read" }`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badRules := filepath.Join(dir, "bad.hcl")
	if err := os.WriteFile(badRules, []byte(`nodes { policy = "read" }`), 0o644); err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(dir, "secret")
	bootSecret := structs.GenerateUUID()
	if err := os.WriteFile(secretFile, []byte(bootSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// Values later steps refer to, filled in as the steps run.
	vars := map[string]string{"{mgmt}": bootSecret, "{rules}": rules, "{bad}": badRules, "{secretfile}": secretFile}
	expand := func(s string) string {
		for k, v := range vars {
			s = strings.ReplaceAll(s, k, v)
		}
		return s
	}
	steps := []struct {
		name     string
		args     []string
		envToken string
		wantCode int
		outHas   []string
		errHas   []string
		after    func(t *testing.T, out string)
	}{
		{name: "bootstrap with a secret file", args: []string{"acl", "bootstrap", "{secretfile}"},
			outHas: []string{"Secret ID      = {mgmt}", "Name           = Bootstrap Token", "Type           = management"}},
		{name: "bootstrap again", args: []string{"acl", "bootstrap"}, wantCode: 1,
			errHas: []string{"Error bootstrapping", "ACL bootstrap already done (reset index: "}},
		{name: "policy apply without a token", args: []string{"acl", "policy", "apply", "readnode", "{rules}"}, wantCode: 1,
			errHas: []string{"403", "Permission denied"}},
		{name: "policy apply with bad rules", args: []string{"acl", "policy", "apply", "-token", "{mgmt}", "readnode", "{bad}"},
			wantCode: 1, errHas: []string{"policy 0 invalid: failed to parse rules"}},
		{name: "policy apply", args: []string{"acl", "policy", "apply", "-description", "reads nodes", "readnode", "{rules}"},
			envToken: "{mgmt}", outHas: []string{`Successfully wrote "readnode" ACL policy!`}},
		{name: "policy list", args: []string{"acl", "policy", "list"}, envToken: "{mgmt}",
			outHas: []string{"Name      Description", "readnode  reads nodes"}},
		{name: "policy info", args: []string{"acl", "policy", "info", "readnode"}, envToken: "{mgmt}",
			outHas: []string{"Name        = readnode", "Rules", `node { policy = "read" }`}},
		{name: "policy info of a missing policy", args: []string{"acl", "policy", "info", "-token", "{mgmt}", "nope"},
			wantCode: 1, errHas: []string{"404", "ACL policy not found"}},
		{name: "role create", args: []string{"acl", "role", "create", "-token", "{mgmt}", "-json", "-name", "ops", "-policy", "readnode"},
			after: func(t *testing.T, out string) {
				var r api.ACLRole
				if err := json.Unmarshal([]byte(out), &r); err != nil || r.ID == "" {
					t.Fatalf("role: %v %s", err, out)
				}
				vars["{role}"] = r.ID
			}},
		{name: "role create without policies", args: []string{"acl", "role", "create", "-token", "{mgmt}", "-name", "x"},
			wantCode: 1, errHas: []string{"At least one policy"}},
		{name: "role info by name", args: []string{"acl", "role", "info", "-token", "{mgmt}", "-by-name", "ops"},
			outHas: []string{"ID           = {role}", "Policies     = readnode"}},
		{name: "role update", args: []string{"acl", "role", "update", "-token", "{mgmt}", "-description", "operators", "{role}"},
			outHas: []string{"Description  = operators"}},
		{name: "role list", args: []string{"acl", "role", "list", "-token", "{mgmt}"}, outHas: []string{"{role}", "ops"}},
		{name: "token create", args: []string{"acl", "token", "create", "-token", "{mgmt}", "-json", "-name", "ci",
			"-policy", "readnode", "-role-name", "ops", "-ttl", "1h"},
			after: func(t *testing.T, out string) {
				var tok api.ACLToken
				if err := json.Unmarshal([]byte(out), &tok); err != nil || tok.SecretID == "" {
					t.Fatalf("token: %v %s", err, out)
				}
				if len(tok.Roles) != 1 || tok.Roles[0].Name != "ops" || tok.ExpirationTime == nil {
					t.Fatalf("token: %+v", tok)
				}
				vars["{ci}"], vars["{ci-accessor}"] = tok.SecretID, tok.AccessorID
			}},
		{name: "token create with a ttl too long", args: []string{"acl", "token", "create", "-token", "{mgmt}",
			"-policy", "readnode", "-ttl", "48h"},
			wantCode: 1, errHas: []string{"expiration time cannot be more than 24h0m0s in the future"}},
		{name: "token self", args: []string{"acl", "token", "self"}, envToken: "{ci}",
			outHas: []string{"Accessor ID    = {ci-accessor}", "Name           = ci", "Expiration TTL = 1h0m0s",
				"Policies       = [readnode]", "{role}  ops"}},
		{name: "policy self of a client token", args: []string{"acl", "policy", "self"}, envToken: "{ci}",
			outHas: []string{"Name      Description", "readnode  reads nodes"}},
		{name: "policy self of a management token", args: []string{"acl", "policy", "self"}, envToken: "{mgmt}",
			outHas: []string{"This is a management token. No individual policies are assigned."}},
		{name: "token info", args: []string{"acl", "token", "info", "-token", "{mgmt}", "{ci-accessor}"},
			outHas: []string{"Secret ID      = {ci}"}},
		{name: "token update", args: []string{"acl", "token", "update", "-token", "{mgmt}", "-name", "renamed", "{ci-accessor}"},
			outHas: []string{"Name           = renamed", "Policies       = [readnode]"}},
		{name: "token list", args: []string{"acl", "token", "list", "-token", "{mgmt}"},
			outHas: []string{"Name", "Accessor ID", "Bootstrap Token", "renamed", "{ci-accessor}"}},
		{name: "token list as a client token", args: []string{"acl", "token", "list", "-token", "{ci}"},
			wantCode: 1, errHas: []string{"403", "Permission denied"}},
		{name: "token delete", args: []string{"acl", "token", "delete", "-token", "{mgmt}", "{ci-accessor}"},
			outHas: []string{"Token {ci-accessor} successfully deleted"}},
		{name: "deleted token", args: []string{"acl", "token", "self", "-token", "{ci}"},
			wantCode: 1, errHas: []string{"403", "Permission denied"}},
		{name: "role delete", args: []string{"acl", "role", "delete", "-token", "{mgmt}", "{role}"},
			outHas: []string{"ACL role {role} successfully deleted"}},
		{name: "auth-method create", args: []string{"acl", "auth-method", "create", "-token", "{mgmt}", "-name", "sso",
			"-type", "oidc", "-token-locality", "local", "-max-token-ttl", "1h", "-default",
			"-config", `{"OIDCDiscoveryURL":"https://idp.example.com","OIDCClientID":"nomad"}`},
			outHas: []string{"Name              = sso", "Type              = OIDC", "Default           = true",
				`"OIDCClientID": "nomad"`}},
		{name: "auth-method create invalid", args: []string{"acl", "auth-method", "create", "-token", "{mgmt}", "-name", "bad",
			"-type", "OIDC", "-token-locality", "moon", "-max-token-ttl", "1h", "-config", `{}`},
			wantCode: 1, errHas: []string{"invalid token locality 'moon'"}},
		{name: "auth-method update", args: []string{"acl", "auth-method", "update", "-token", "{mgmt}",
			"-token-locality", "global", "sso"}, outHas: []string{"Locality          = global"}},
		{name: "auth-method list", args: []string{"acl", "auth-method", "list"}, outHas: []string{"Name  Type  Default", "sso   OIDC  true"}},
		{name: "binding-rule create", args: []string{"acl", "binding-rule", "create", "-token", "{mgmt}", "-json",
			"-auth-method", "sso", "-selector", "engineering in list.groups", "-bind-type", "role", "-bind-name", "ops"},
			after: func(t *testing.T, out string) {
				var r api.ACLBindingRule
				if err := json.Unmarshal([]byte(out), &r); err != nil || r.ID == "" {
					t.Fatalf("binding rule: %v %s", err, out)
				}
				vars["{rule}"] = r.ID
			}},
		{name: "binding-rule update", args: []string{"acl", "binding-rule", "update", "-token", "{mgmt}",
			"-description", "engineers", "{rule}"}, outHas: []string{"Description  = engineers", "Bind Name    = ops"}},
		{name: "binding-rule info", args: []string{"acl", "binding-rule", "info", "-token", "{mgmt}", "{rule}"},
			outHas: []string{"ID           = {rule}", `Selector     = "engineering in list.groups"`}},
		{name: "binding-rule list", args: []string{"acl", "binding-rule", "list", "-token", "{mgmt}"},
			outHas: []string{"{rule}  engineers    sso"}},
		{name: "binding-rule delete", args: []string{"acl", "binding-rule", "delete", "-token", "{mgmt}", "{rule}"},
			outHas: []string{"ACL binding rule {rule} successfully deleted"}},
		{name: "auth-method delete", args: []string{"acl", "auth-method", "delete", "-token", "{mgmt}", "sso"},
			outHas: []string{"ACL auth method sso successfully deleted"}},
		{name: "auth-method info of a missing method", args: []string{"acl", "auth-method", "info", "-token", "{mgmt}", "sso"},
			wantCode: 1, errHas: []string{"404", "ACL auth-method not found"}},
		{name: "policy delete", args: []string{"acl", "policy", "delete", "-token", "{mgmt}", "readnode"},
			outHas: []string{`Successfully deleted "readnode" ACL policy!`}},
		{name: "policy list empty", args: []string{"acl", "policy", "list", "-token", "{mgmt}"},
			outHas: []string{"No policies found"}},
		{name: "group help", args: []string{"acl"}, wantCode: 1, errHas: []string{"Usage: nomad acl <subcommand>"}},
	}
	for _, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
			args := make([]string, len(st.args))
			for i, a := range st.args {
				args[i] = expand(a)
			}
			opts := runOpts{}
			if st.envToken != "" {
				opts.env = map[string]string{api.EnvToken: expand(st.envToken)}
			}
			res := runCommand(t, c.Addr(), opts, args...)
			if res.code != st.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, st.wantCode, res.stdout, res.stderr)
			}
			for _, s := range st.outHas {
				if s = expand(s); !strings.Contains(res.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, res.stdout)
				}
			}
			for _, s := range st.errHas {
				if !strings.Contains(res.stderr, expand(s)) {
					t.Errorf("stderr lacks %q:\n%s", s, res.stderr)
				}
			}
			if st.after != nil {
				st.after(t, res.stdout)
			}
		})
		if !ok {
			t.FailNow()
		}
	}
}
