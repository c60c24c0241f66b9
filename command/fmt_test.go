package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	unformattedHCL = "job \"web\" {\ndatacenters = [\"dc1\"]\n  type=\"service\"\n}\n"
	formattedHCL   = "job \"web\" {\n  datacenters = [\"dc1\"]\n  type        = \"service\"\n}\n"
)

func TestFormat(t *testing.T) {
	cases := []struct {
		name     string
		files    map[string]string // relative path -> content
		args     []string          // "{dir}" is the case's directory
		stdin    string
		wantCode int
		outHas   []string
		outNot   []string
		errHas   []string
		// after is what files must hold after the run.
		after map[string]string
	}{
		{name: "a directory is formatted and the changed files listed",
			files: map[string]string{"a.nomad": unformattedHCL, "b.hcl": formattedHCL, "c.txt": unformattedHCL, "sub/d.hcl": unformattedHCL},
			args:  []string{"fmt", "{dir}"}, outHas: []string{"a.nomad"}, outNot: []string{"b.hcl", "c.txt", "d.hcl"},
			after: map[string]string{"a.nomad": formattedHCL, "c.txt": unformattedHCL, "sub/d.hcl": unformattedHCL}},
		{name: "-recursive descends", files: map[string]string{"sub/d.hcl": unformattedHCL},
			args: []string{"fmt", "-recursive", "{dir}"}, outHas: []string{"d.hcl"}, after: map[string]string{"sub/d.hcl": formattedHCL}},
		{name: "-check changes nothing and fails", files: map[string]string{"a.nomad": unformattedHCL},
			args: []string{"fmt", "-check", "{dir}/a.nomad"}, wantCode: 1, outHas: []string{"a.nomad"},
			after: map[string]string{"a.nomad": unformattedHCL}},
		{name: "-check passes on formatted files", files: map[string]string{"b.hcl": formattedHCL},
			args: []string{"fmt", "-check", "{dir}"}},
		{name: "-write=false -list=false", files: map[string]string{"a.nomad": unformattedHCL},
			args: []string{"fmt", "-write=false", "-list=false", "{dir}"}, outNot: []string{"a.nomad"},
			after: map[string]string{"a.nomad": unformattedHCL}},
		{name: "a syntax error is reported and the file left alone", files: map[string]string{"bad.hcl": "job \"x\" {\n  a = \n"},
			args: []string{"fmt", "{dir}"}, wantCode: 1, errHas: []string{"Error parsing", "bad.hcl:"},
			after: map[string]string{"bad.hcl": "job \"x\" {\n  a = \n"}},
		{name: "standard input", args: []string{"fmt", "-"}, stdin: unformattedHCL, outHas: []string{strings.TrimSuffix(formattedHCL, "\n")}},
		{name: "a missing path", args: []string{"fmt", "{dir}/nope.hcl"}, wantCode: 1, errHas: []string{"nope.hcl"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				path := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, path, content)
			}
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.ReplaceAll(a, "{dir}", dir)
			}
			res := runCommand(t, "http://127.0.0.1:1", runOpts{stdin: tc.stdin}, args...)
			if res.code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:%s\nstderr:%s", res.code, tc.wantCode, res.stdout, res.stderr)
			}
			for _, want := range tc.outHas {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
				}
			}
			for _, not := range tc.outNot {
				if strings.Contains(res.stdout, not) {
					t.Errorf("stdout has %q:\n%s", not, res.stdout)
				}
			}
			for _, want := range tc.errHas {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
				}
			}
			for name, want := range tc.after {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != want {
					t.Errorf("%s = %q (%v), want %q", name, got, err, want)
				}
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.hcl")
	writeFile(t, good, "data_dir = \"/tmp/nomad\"\nserver {\n  enabled = true\n  bootstrap_expect = 1\n}\n")
	bad := filepath.Join(dir, "bad.hcl")
	writeFile(t, bad, "data_dir = \"/tmp/nomad\"\nlog_level = \"LOUD\"\nbind_addr = \"nowhere\"\nserver {\n  enabled = true\n}\n")
	broken := filepath.Join(dir, "broken.hcl")
	writeFile(t, broken, "server {\n  enabled = \n")
	cases := []struct {
		name     string
		args     []string
		wantCode int
		outHas   []string
		errHas   []string
	}{
		{name: "valid", args: []string{"config", "validate", good}, outHas: []string{"Configuration is valid!"}},
		{name: "every problem listed", args: []string{"config", "validate", bad}, wantCode: 1,
			errHas: []string{"Configuration is invalid (2 problems):", "bad.hcl:2", "log_level", "bad.hcl:3", "bind_addr"}},
		{name: "a syntax error", args: []string{"config", "validate", broken}, wantCode: 1, errHas: []string{"broken.hcl:"}},
		{name: "files merge in order", args: []string{"config", "validate", bad, good}, wantCode: 1, errHas: []string{"bind_addr"}},
		{name: "a missing path", args: []string{"config", "validate", filepath.Join(dir, "nope")}, wantCode: 1, errHas: []string{"nope"}},
		{name: "no path", args: []string{"config", "validate"}, wantCode: 1, errHas: []string{"at least one argument"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, "http://127.0.0.1:1", runOpts{}, tc.args...)
			if res.code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:%s\nstderr:%s", res.code, tc.wantCode, res.stdout, res.stderr)
			}
			for _, want := range tc.outHas {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
				}
			}
			for _, want := range tc.errHas {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
				}
			}
		})
	}
}
