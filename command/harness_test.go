package command

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/cli"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/client/driver/executor"
)

// Command tests run the real dispatch (Run) with a mock UI against an
// agent reached over HTTP at an address, exactly as the binary does.
//
// The agent behind the address is a testCluster: the fake (httptest +
// api types), the fake seen as opaque, and a real in-process dev agent
// without a client (real_agent_test.go). Every case not marked fakeOnly
// runs against all three, so cases set state up only through testCluster
// (the HTTP API and node registration) and compare output with IDs and
// times normalized. Cases marked fakeOnly script scheduler outcomes
// (specific placement metrics, blocked and chained evaluations) that a
// real scheduler would have to be driven into, or depend on the fake's
// indexes.

// testCluster is an agent a command test talks to.
type testCluster interface {
	// Addr is the agent's HTTP address.
	Addr() string
	// AddNode makes a client node known to the servers and returns its ID;
	// unset fields get defaults (ready, eligible, dc1, 4000 MHz, 8 GiB).
	AddNode(t testing.TB, n *api.Node) string
	// Settle returns once the servers have processed every evaluation
	// created so far.
	Settle(t testing.TB)
	// fake returns the scriptable fake, or nil for a real agent.
	fake() *fakeAgent
}

// testClusters are the agents every non-fakeOnly case runs against.
var testClusters = map[string]func(t testing.TB) testCluster{
	"fake": func(t testing.TB) testCluster { return newFakeAgent(t) },
	// opaque is the fake seen as a real agent would be: not scriptable,
	// with IDs no test constant knows. It keeps the agent-agnostic cases
	// honest until a real agent takes its place.
	"opaque": func(t testing.TB) testCluster {
		f := newFakeAgent(t)
		f.opaqueIDs = true
		f.resetWorkers()
		return opaqueAgent{f}
	},
	"real": newRealAgent,
}

// opaqueAgent hides the fake's scripting hooks.
type opaqueAgent struct{ *fakeAgent }

func (opaqueAgent) fake() *fakeAgent { return nil }

// cmdResult is what a command printed and returned.
type cmdResult struct {
	code   int
	stdout string
	stderr string
}

// runOpts tunes one command run.
type runOpts struct {
	stdin string
	now   func() time.Time
	// timeout bounds the command's context (default 20s), standing in
	// for the user pressing Ctrl-C.
	timeout time.Duration
	// env sets NOMAD_* variables after the defaults are cleared.
	env map[string]string
}

// runCommand runs `nomad <args>` against addr and returns its output.
func runCommand(t testing.TB, addr string, opts runOpts, args ...string) cmdResult {
	t.Helper()
	t.Setenv(api.EnvAddress, addr)
	t.Setenv(api.EnvToken, "")
	t.Setenv(api.EnvRegion, "")
	t.Setenv(api.EnvNamespace, "")
	for _, k := range []string{api.EnvCACert, api.EnvCAPath, api.EnvClientCert, api.EnvClientKey, api.EnvTLSServerName, api.EnvSkipVerify} {
		t.Setenv(k, "")
	}
	for k, v := range opts.env {
		t.Setenv(k, v)
	}
	ui := cli.NewMockUi()
	ui.InputReader = strings.NewReader(opts.stdin)
	now := opts.now
	if now == nil {
		now = func() time.Time { return fakeEpoch.Add(time.Hour) }
	}
	timeout := opts.timeout
	if timeout == 0 {
		timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	meta := Meta{
		Ui: ui, Ctx: ctx, Now: now,
		Environ:   func() []string { return nil },
		Stdin:     strings.NewReader(opts.stdin),
		waitBound: 200 * time.Millisecond,
	}
	code := Run(args, meta, ui.OutputWriter, ui.ErrorWriter)
	return cmdResult{code: code, stdout: ui.OutputWriter.String(), stderr: ui.ErrorWriter.String()}
}

var (
	uuidRe  = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	shortRe = regexp.MustCompile(`\b[0-9a-f]{8}\b`)
	timeRe  = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
)

// normalize replaces IDs with <id> and times with <time>, so expected
// output does not depend on which agent generated them.
func normalize(s string) string {
	s = timeRe.ReplaceAllString(s, "<time>")
	s = uuidRe.ReplaceAllString(s, "<id>")
	return shortRe.ReplaceAllString(s, "<id>")
}

// cmdCase is one command run and what it must print and return.
type cmdCase struct {
	name string
	// fakeOnly marks cases that script the fake's scheduler.
	fakeOnly bool
	setup    func(t *testing.T, c testCluster)
	// args are the command words and flags. "{dir}" is replaced by a
	// temporary directory holding the case's files, "{node:NAME}" by the
	// ID of the node named NAME and "{node8:NAME}" by its first 8
	// characters, so cases do not depend on how an agent makes IDs.
	args  []string
	files map[string]string
	stdin string
	now   func() time.Time

	wantCode int
	// wantOut is the whole normalized stdout ("" means not checked).
	wantOut string
	// outHas and errHas must each appear in normalized stdout / stderr.
	outHas []string
	errHas []string
	// outNot must not appear in normalized stdout.
	outNot []string
	check  func(t *testing.T, c testCluster, res cmdResult)
}

// runCases runs each case against each test cluster.
func runCases(t *testing.T, cases []cmdCase) {
	t.Helper()
	runCasesOn(t, testClusters, cases)
}

// runCasesOn runs each case against each of clusters.
func runCasesOn(t *testing.T, clusters map[string]func(t testing.TB) testCluster, cases []cmdCase) {
	t.Helper()
	for kind, newCluster := range clusters {
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				c := newCluster(t)
				if tc.fakeOnly && c.fake() == nil {
					t.Skip("needs a scripted scheduler")
				}
				dir := t.TempDir()
				for name, content := range tc.files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if tc.setup != nil {
					tc.setup(t, c)
				}
				args := make([]string, len(tc.args))
				for i, a := range tc.args {
					args[i] = resolvePlaceholders(t, c, strings.ReplaceAll(a, "{dir}", dir))
				}
				res := runCommand(t, c.Addr(), runOpts{stdin: tc.stdin, now: tc.now}, args...)
				assertResult(t, tc, res, dir, c.fake() != nil)
				if tc.check != nil {
					tc.check(t, c, res)
				}
			})
		}
	}
}

var placeholderRe = regexp.MustCompile(`\{node(8?):([^}]+)\}`)

// resolvePlaceholders replaces node placeholders with IDs looked up
// through the API.
func resolvePlaceholders(t *testing.T, c testCluster, arg string) string {
	return placeholderRe.ReplaceAllStringFunc(arg, func(m string) string {
		sub := placeholderRe.FindStringSubmatch(m)
		id := nodeByName(t, c, sub[2])
		if sub[1] == "8" {
			return id[:8]
		}
		return id
	})
}

// timingLines match output that depends on when a monitor first looked:
// a real agent may finish an evaluation before the first read, so the
// "pending" state is never seen. They are compared only on the fake.
var timingLines = regexp.MustCompile(`(?m)^.*Evaluation status changed: "pending" -> .*\n?`)

func assertResult(t *testing.T, tc cmdCase, res cmdResult, dir string, fake bool) {
	t.Helper()
	out := strings.ReplaceAll(normalize(res.stdout), dir, "{dir}")
	if !fake {
		out = timingLines.ReplaceAllString(out, "")
		tc.wantOut = timingLines.ReplaceAllString(tc.wantOut, "")
	}
	errOut := strings.ReplaceAll(normalize(res.stderr), dir, "{dir}")
	if res.code != tc.wantCode {
		t.Errorf("exit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, tc.wantCode, res.stdout, res.stderr)
	}
	if tc.wantOut != "" && strings.TrimRight(out, "\n") != strings.TrimRight(tc.wantOut, "\n") {
		t.Errorf("stdout differs\n--- got:\n%s\n--- want:\n%s\n--- stderr:\n%s", out, tc.wantOut, res.stderr)
	}
	for _, s := range tc.outHas {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q\n--- got:\n%s\n--- stderr:\n%s", s, out, res.stderr)
		}
	}
	for _, s := range tc.outNot {
		if strings.Contains(out, s) {
			t.Errorf("stdout has %q\n--- got:\n%s", s, out)
		}
	}
	for _, s := range tc.errHas {
		if !strings.Contains(errOut, s) {
			t.Errorf("stderr lacks %q\n--- got:\n%s", s, errOut)
		}
	}
}

// TestMain pins the local time zone so printed times are stable, and
// lets this binary supervise the raw_exec tasks of the agents tests run.
func TestMain(m *testing.M) {
	executor.Init()
	time.Local = time.UTC
	os.Exit(m.Run())
}

// ---- fixtures ----

// testJob is a service job with one group of count tasks asking for
// memMB each.
func testJob(id string, count, memMB int) *api.Job {
	return &api.Job{
		ID: new(id), Name: new(id), Type: new(api.JobTypeService), Datacenters: []string{"dc1"},
		TaskGroups: []*api.TaskGroup{{
			Name: new("web"), Count: new(count),
			Tasks: []*api.Task{{
				Name: "server", Driver: "raw_exec",
				Config:    map[string]any{"command": "/bin/sleep", "args": []any{"1000"}},
				Resources: &api.Resources{CPU: new(100), MemoryMB: new(memMB)},
			}},
		}},
	}
}

// testJobHCL is testJob as a job file.
func testJobHCL(id string, count, memMB int) string {
	return `job "` + id + `" {
  datacenters = ["dc1"]
  group "web" {
    count = ` + strconv.Itoa(count) + `
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["1000"]
      }
      resources {
        cpu    = 100
        memory = ` + strconv.Itoa(memMB) + `
      }
    }
  }
}
`
}
