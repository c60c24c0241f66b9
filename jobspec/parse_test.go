package jobspec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFileResolvesFilesNextToTheJob(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cmd.txt"), []byte("/bin/true"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(dir, "j.nomad.hcl")
	src := "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"raw_exec\"\n      config {\n        command = file(\"cmd.txt\")\n      }\n    }\n  }\n}\n"
	if err := os.WriteFile(job, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ParseFile(job, Options{AllowFS: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Job.TaskGroups[0].Tasks[0].Config["command"]; got != "/bin/true" {
		t.Fatalf("command = %v", got)
	}
}

func TestMissingFilesAreErrors(t *testing.T) {
	if _, err := ParseFile(filepath.Join(t.TempDir(), "nope.hcl"), Options{}); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ParseFile: %v", err)
	}
	if _, err := ReadVarFiles("testdata/vars.hcl", "testdata/nope.hcl"); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadVarFiles: %v", err)
	}
}

func TestErrorRendersOneLinePerProblem(t *testing.T) {
	_, err := Parse("job.hcl", []byte("job \"j\" {\n  a = 1\n  b = 2\n}\n"), Options{})
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "job.hcl:2:3: ") || !strings.HasPrefix(lines[1], "job.hcl:3:3: ") {
		t.Fatalf("error = %q", err)
	}
}
