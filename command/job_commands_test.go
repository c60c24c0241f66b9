package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/jobspec"
)

func TestJobStop(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name:  "stop follows the evaluation that stops the allocations",
			setup: runningJob("web", 1),
			args:  []string{"job", "stop", "web"},
			// The fake lists the stopped allocation under the stopping
			// evaluation; the real servers (as Nomad's) keep it under the
			// evaluation that placed it.
			outHas: []string{`==> <time>: Monitoring evaluation "<id>"
    <time>: Evaluation triggered by job "web"`, `==> <time>: Evaluation "<id>" finished with status "complete"`},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if job := readJob(t, c, "web"); job.Stop == nil || !*job.Stop {
					t.Error("job is not stopped")
				}
			},
		},
		{
			name:    "detach prints the evaluation ID",
			setup:   runningJob("web", 1),
			args:    []string{"stop", "-detach", "web"},
			wantOut: "<id>",
		},
		{
			name:  "purge removes the job",
			setup: runningJob("web", 1),
			args:  []string{"job", "stop", "-purge", "-detach", "web"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				client, _ := api.NewClient(&api.Config{Address: c.Addr()})
				if _, _, err := client.Jobs().Info("web", nil); !api.IsNotFound(err) {
					t.Errorf("purged job still readable: %v", err)
				}
			},
		},
		{
			name:   "a prefix asks for confirmation; no keeps the job",
			setup:  runningJob("web", 1),
			args:   []string{"job", "stop", "we"},
			stdin:  "n\n",
			outHas: []string{`Are you sure you want to stop job "web"? [y/N]`, "Cancelling job stop"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if job := readJob(t, c, "web"); job.Stop != nil && *job.Stop {
					t.Error("job was stopped")
				}
			},
		},
		{
			name:   "a prefix with -yes stops without asking",
			setup:  runningJob("web", 1),
			args:   []string{"job", "stop", "-yes", "-detach", "we"},
			outNot: []string{"Are you sure"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if job := readJob(t, c, "web"); job.Stop == nil || !*job.Stop {
					t.Error("job is not stopped")
				}
			},
		},
		{
			name:  "flags reach the server",
			setup: runningJob("web", 1),
			args:  []string{"job", "stop", "-detach", "-global", "-no-shutdown-delay", "-eval-priority", "80", "web"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if f := c.fake(); f != nil {
					q := f.requestsTo("DELETE", "/v1/job/web")[0].Query
					for _, want := range []string{"global=true", "no_shutdown_delay=true", "eval_priority=80", "purge=false"} {
						if !strings.Contains(q, want) {
							t.Errorf("query %q lacks %s", q, want)
						}
					}
				}
			},
		},
		{name: "unknown job", args: []string{"job", "stop", "nope"}, wantCode: 1, errHas: []string{`No job with prefix or ID "nope" found`}},
		{name: "no argument", args: []string{"job", "stop"}, wantCode: 1, errHas: []string{"This command takes one argument: <job>"}},
		{name: "bad eval priority", args: []string{"job", "stop", "-eval-priority", "0x", "web"}, wantCode: 1,
			errHas: []string{`invalid value "0x" for flag -eval-priority`}},
	})
}

func TestJobInspect(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name:  "prints the stored job wrapped in Job",
			setup: runningJob("web", 1),
			args:  []string{"job", "inspect", "web"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				var out struct{ Job *api.Job }
				if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || out.Job == nil || *out.Job.ID != "web" {
					t.Fatalf("output: %v\n%s", err, res.stdout)
				}
				// Defaults were filled by the servers.
				if out.Job.Priority == nil || *out.Job.Priority != 50 {
					t.Errorf("priority = %v", out.Job.Priority)
				}
			},
		},
		{
			name: "a version",
			setup: func(t *testing.T, c testCluster) {
				registerJob(t, c, testJob("web", 1, 64))
				registerJob(t, c, testJob("web", 5, 64))
			},
			args:    []string{"job", "inspect", "-t", "{{.Version}} {{(index .TaskGroups 0).Count}}", "-version", "0", "web"},
			wantOut: "0 1",
		},
		{name: "missing version", setup: runningJob("web", 1), args: []string{"job", "inspect", "-version", "7", "web"},
			wantCode: 1, errHas: []string{`no such version`}},
		{name: "unknown job", args: []string{"inspect", "nope"}, wantCode: 1, errHas: []string{`No job with prefix or ID "nope" found`}},
	})
}

func TestJobHistory(t *testing.T) {
	twoVersions := func(t *testing.T, c testCluster) {
		registerJob(t, c, testJob("web", 1, 64))
		registerJob(t, c, testJob("web", 3, 64))
		if f := c.fake(); f != nil {
			f.versionDiffs = []*api.JobDiff{{Type: edited, ID: "web", TaskGroups: []*api.TaskGroupDiff{{
				Type: edited, Name: "web", Fields: []*api.FieldDiff{fd(edited, "Count", "1", "3")}}}}}
		}
	}
	runCases(t, []cmdCase{
		{
			name:  "versions newest first",
			setup: twoVersions,
			args:  []string{"job", "history", "web"},
			wantOut: `Version     = 1
Stable      = false
Submit Date = <time>

Version     = 0
Stable      = false
Submit Date = <time>`,
		},
		{
			name:     "with diffs",
			fakeOnly: true,
			setup:    twoVersions,
			args:     []string{"job", "history", "-p", "web"},
			wantOut: `Version     = 1
Stable      = false
Submit Date = <time>
Diff        =
+/- Job: "web"
+/- Task Group: "web"
  +/- Count: "1" => "3"

Version     = 0
Stable      = false
Submit Date = <time>`,
		},
		{name: "one version", setup: twoVersions, args: []string{"job", "history", "-version", "0", "web"},
			wantOut: "Version     = 0\nStable      = false\nSubmit Date = <time>"},
		{name: "no such version", setup: twoVersions, args: []string{"job", "history", "-version", "9", "web"},
			wantCode: 1, errHas: []string{`Job "web" has no version 9`}},
		{name: "-p and -full conflict", args: []string{"job", "history", "-p", "-full", "web"}, wantCode: 1,
			errHas: []string{"-full and -p cannot be used together"}},
	})
}

func TestJobEval(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name:  "a new evaluation is followed",
			setup: runningJob("web", 1),
			args:  []string{"job", "eval", "web"},
			outHas: []string{`Evaluation triggered by job "web"`,
				`==> <time>: Evaluation "<id>" finished with status "complete"`},
		},
		{
			name:    "detach",
			setup:   runningJob("web", 1),
			args:    []string{"job", "eval", "-detach", "-force-reschedule", "web"},
			wantOut: "Created eval ID: <id>",
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if f := c.fake(); f != nil {
					body := f.requestsTo("PUT", "/v1/job/web/evaluate")[0].Body
					if !strings.Contains(body, `"ForceReschedule":true`) {
						t.Errorf("body = %s", body)
					}
				}
			},
		},
		{name: "unknown job", args: []string{"job", "eval", "nope"}, wantCode: 1, errHas: []string{"No job with prefix"}},
	})
}

func TestJobValidate(t *testing.T) {
	const hcl = "job.nomad.hcl"
	runCases(t, []cmdCase{
		{name: "valid", files: map[string]string{hcl: testJobHCL("web", 1, 64)}, args: []string{"job", "validate", "{dir}/" + hcl},
			wantOut: "Job validation successful"},
		{
			name: "every problem the servers find is listed",
			files: map[string]string{hcl: `job "web" {
  group "a" {
    task "one" {
      config { command = "x" }
    }
    task "two" {
      config { command = "y" }
    }
  }
}`},
			args:     []string{"validate", "{dir}/" + hcl},
			wantCode: 1,
			// The fake words the problems as Nomad does, the real servers
			// as their validation does; both list each.
			errHas: []string{"Job validation errors:\n* ", "one", "two", "driver"},
		},
		{name: "parse errors stop before the server", files: map[string]string{hcl: "job \"x\" {\n  bogus_attr = 1\n}\n"},
			args: []string{"job", "validate", "{dir}/" + hcl}, wantCode: 1,
			errHas: []string{"{dir}/" + hcl + ":2:"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if f := c.fake(); f != nil && len(f.requestsTo("PUT", "/v1/validate/job")) != 0 {
					t.Error("an unparsable job reached the server")
				}
			}},
		{name: "no argument", args: []string{"job", "validate"}, wantCode: 1, errHas: []string{"This command takes one argument: <path>"}},
	})
}

func TestJobInit(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	res := runCommand(t, "http://127.0.0.1:1", runOpts{}, "job", "init")
	if res.code != 0 || res.stdout != "Example job file written to "+jobspec.ExampleJobFileName+"\n" {
		t.Fatalf("init: %+v", res)
	}
	written, err := os.ReadFile(filepath.Join(dir, jobspec.ExampleJobFileName))
	if err != nil || string(written) != string(jobspec.ExampleJob()) {
		t.Fatalf("written file differs: %v", err)
	}
	// The written example parses.
	if _, err := jobspec.ParseFile(filepath.Join(dir, jobspec.ExampleJobFileName), jobspec.Options{}); err != nil {
		t.Fatalf("example does not parse: %v", err)
	}

	res = runCommand(t, "http://127.0.0.1:1", runOpts{}, "init")
	if res.code != 1 || !strings.Contains(res.stderr, "already exists") {
		t.Fatalf("second init must refuse to overwrite: %+v", res)
	}

	res = runCommand(t, "http://127.0.0.1:1", runOpts{}, "job", "init", "custom.hcl")
	if res.code != 0 {
		t.Fatalf("init with a path: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "custom.hcl")); err != nil {
		t.Fatal(err)
	}

	res = runCommand(t, "http://127.0.0.1:1", runOpts{}, "job", "init", "a", "b")
	if res.code != 1 || !strings.Contains(res.stderr, "zero or one argument") {
		t.Fatalf("two paths: %+v", res)
	}
	res = runCommand(t, "http://127.0.0.1:1", runOpts{}, "job", "init", filepath.Join(dir, "missing-dir", "x.hcl"))
	if res.code != 1 || !strings.Contains(res.stderr, "Failed to create") {
		t.Fatalf("unwritable path: %+v", res)
	}
}
