package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
)

// TestVarCommands walks the var commands in order against a real dev
// agent: init, put from arguments, files and standard input, get in its
// formats, list, check-and-set refusals, purge.
func TestVarCommands(t *testing.T) {
	c := newRealAgent(t)
	dir := t.TempDir()
	t.Chdir(dir)
	valueFile := filepath.Join(dir, "cert.pem")
	writeFile(t, valueFile, "-----BEGIN-----\n")
	jsonSpec := filepath.Join(dir, "db.json")
	writeFile(t, jsonSpec, `{"Path":"app/db","Items":{"user":"admin"}}`)

	var current api.Variable
	steps := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		outHas   []string
		errHas   []string
		check    func(t *testing.T, out string)
	}{
		{name: "init", args: []string{"var", "init"}, outHas: []string{"Example variable specification written to spec.nv.hcl"}},
		{name: "init again", args: []string{"var", "init"}, wantCode: 1, errHas: []string{`"spec.nv.hcl" already exists`}},
		{name: "put the example spec", args: []string{"var", "put", "@spec.nv.hcl"},
			outHas: []string{`Created variable "path/to/variable" with modify index`}},
		{name: "put from arguments", args: []string{"var", "put", "secret/creds", "passcode=my-long-passcode", "cert=@" + valueFile},
			outHas: []string{`Created variable "secret/creds" with modify index`}},
		{name: "put from a JSON file, path overridden", args: []string{"var", "put", "app/web", "@" + jsonSpec, "port=80"},
			outHas: []string{`Created variable "app/web"`}},
		{name: "put from standard input", args: []string{"var", "put", "-in", "hcl", "-out", "table", "-", "extra=1"},
			stdin:  "path = \"app/stdin\"\nitems {\n  a = \"b\"\n}\n",
			outHas: []string{`Successfully created variable "app/stdin"!`, "Namespace   = default", "a     = b", "extra = 1"}},
		{name: "get as a table", args: []string{"var", "get", "-out", "table", "secret/creds"},
			outHas: []string{"Path        = secret/creds", "Check Index = ", "Items", "passcode = my-long-passcode"}},
		{name: "get one item", args: []string{"var", "get", "-item", "passcode", "secret/creds"},
			check: func(t *testing.T, out string) {
				if out != "my-long-passcode\n" {
					t.Fatalf("item = %q", out)
				}
			}},
		{name: "get as JSON", args: []string{"var", "get", "-out", "json", "secret/creds"},
			check: func(t *testing.T, out string) {
				if err := json.Unmarshal([]byte(out), &current); err != nil || current.Items["cert"] != "-----BEGIN-----\n" {
					t.Fatalf("get: %v %s", err, out)
				}
			}},
		{name: "get as HCL", args: []string{"var", "get", "-out", "hcl", "secret/creds"},
			outHas: []string{`path      = "secret/creds"`, `passcode = "my-long-passcode"`}},
		{name: "get a missing variable", args: []string{"var", "get", "nope"}, wantCode: 1, errHas: []string{"Variable not found"}},
		{name: "get a missing item", args: []string{"var", "get", "-item", "nope", "secret/creds"}, wantCode: 1,
			errHas: []string{`Variable does not contain "nope" item`}},
		{name: "list", args: []string{"var", "list"},
			outHas: []string{"Namespace  Path", "default    app/web", "default    secret/creds"}},
		{name: "list by prefix", args: []string{"var", "list", "-q", "app/"},
			check: func(t *testing.T, out string) {
				if out != "app/stdin\napp/web\n" {
					t.Fatalf("paths = %q", out)
				}
			}},
		{name: "list nothing", args: []string{"var", "list", "none/"}, outHas: []string{"No matching variables found"}},
		{name: "put create-only on an existing one", args: []string{"var", "put", "-check-index", "0", "secret/creds", "a=b"}, wantCode: 1,
			errHas: []string{"Error writing variable: cas conflict: expected ModifyIndex 0; found"}},
		{name: "put with a bad item", args: []string{"var", "put", "x", "novalue"}, wantCode: 1,
			errHas: []string{`"novalue" is not <key>=<value>`}},
		{name: "put an invalid path", args: []string{"var", "put", "a b", "k=v"}, wantCode: 1,
			errHas: []string{`invalid path "a b"`}},
		{name: "purge with a stale index", args: []string{"var", "purge", "-check-index", "1", "secret/creds"}, wantCode: 1,
			errHas: []string{"Error purging variable: cas conflict: expected ModifyIndex 1"}},
		{name: "purge", args: []string{"var", "purge", "secret/creds"}, outHas: []string{`Successfully purged variable "secret/creds"!`}},
		{name: "lock runs the child holding the lock", args: []string{"var", "lock", "-verbose", "locks/job",
			"echo held > lock.out"},
			outHas: []string{`Lock acquired on "locks/job"`, `Lock on "locks/job" released`},
			check: func(t *testing.T, _ string) {
				if b, err := os.ReadFile(filepath.Join(dir, "lock.out")); err != nil || string(b) != "held\n" {
					t.Fatalf("child output: %q, %v", b, err)
				}
			}},
		{name: "the lock is released after", args: []string{"var", "get", "-out", "json", "locks/job"},
			check: func(t *testing.T, out string) {
				var v api.Variable
				if err := json.Unmarshal([]byte(out), &v); err != nil || v.Lock != nil {
					t.Fatalf("variable: %v %s", err, out)
				}
			}},
		{name: "a failing child", args: []string{"var", "lock", "locks/job", "exit 3"}, wantCode: 1,
			errHas: []string{"Child command failed"}},
		{name: "group help", args: []string{"var"}, wantCode: 1, errHas: []string{"Usage: nomad var <subcommand>"}},
	}
	for _, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
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
	if _, err := os.Stat(filepath.Join(dir, "spec.nv.hcl")); err != nil {
		t.Fatal(err)
	}
}
