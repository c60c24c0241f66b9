package command

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
)

// TestJobAllocsStartAndEvalDelete walks job allocs, job start and eval
// delete in order against a real dev agent: a job placed on one node,
// listed, stopped, started again, and a finished evaluation deleted.
func TestJobAllocsStartAndEvalDelete(t *testing.T) {
	c := newRealAgent(t)
	c.AddNode(t, &api.Node{Name: "n1"})
	reg := registerJob(t, c, testJob("web", 2, 64))
	c.Settle(t)
	client, _ := api.NewClient(&api.Config{Address: c.Addr()})

	var stopEval string
	steps := []struct {
		name     string
		args     func() []string
		wantCode int
		outHas   []string
		errHas   []string
		check    func(t *testing.T, out string)
	}{
		{name: "allocs", args: func() []string { return []string{"job", "allocs", "web"} },
			outHas: []string{"web         0        run      pending"}},
		{name: "allocs by prefix, verbose", args: func() []string { return []string{"job", "allocs", "-verbose", "we"} },
			outHas: []string{"Eval ID", "Node Name", reg.EvalID, "n1"}},
		{name: "allocs as JSON", args: func() []string { return []string{"job", "allocs", "-json", "web"} },
			check: func(t *testing.T, out string) {
				var stubs []*api.AllocationListStub
				if err := json.Unmarshal([]byte(out), &stubs); err != nil || len(stubs) != 2 {
					t.Fatalf("allocs -json: %v %s", err, out)
				}
			}},
		{name: "allocs with a template", args: func() []string { return []string{"job", "allocs", "-t", "{{len .}}", "web"} },
			outHas: []string{"2"}},
		{name: "allocs of a missing job", args: func() []string { return []string{"job", "allocs", "nope"} }, wantCode: 1,
			errHas: []string{`No job with prefix or ID "nope" found`}},
		{name: "start a running job", args: func() []string { return []string{"job", "start", "web"} }, wantCode: 1,
			errHas: []string{`Job "web" has not been stopped`}},
		{name: "stop", args: func() []string { return []string{"job", "stop", "-detach", "web"} },
			check: func(t *testing.T, out string) { stopEval = strings.TrimSpace(out) }},
		{name: "start the stopped job", args: func() []string { return []string{"job", "start", "web"} },
			outHas: []string{"Monitoring evaluation", `Evaluation triggered by job "web"`, "finished with status \"complete\""}},
		{name: "the job runs a new version", args: func() []string { return []string{"job", "status", "web"} },
			outHas: []string{"Status        = running", "web         2        run      pending"}},
		{name: "eval delete with an argument and -filter", args: func() []string {
			return []string{"eval", "delete", "-filter", "x", stopEval}
		}, wantCode: 1, errHas: []string{"not both"}},
		{name: "eval delete by filter", args: func() []string { return []string{"eval", "delete", "-filter", `Status == "complete"`} },
			wantCode: 1, errHas: []string{"not supported by this server"}},
		{name: "eval delete", args: func() []string { return []string{"eval", "delete", stopEval[:8]} },
			outHas: []string{"Successfully deleted 1 evaluation"}},
		{name: "the deleted eval is gone", args: func() []string { return []string{"eval", "status", stopEval} }, wantCode: 1},
		{name: "the eval broker runs again", args: func() []string { return []string{"operator", "scheduler", "get-config"} },
			outHas: []string{"Pause Eval Broker                 = false"}},
	}
	for _, s := range steps {
		res := runCommand(t, c.Addr(), runOpts{}, s.args()...)
		if res.code != s.wantCode {
			t.Fatalf("%s: exit %d, want %d\nstdout:%s\nstderr:%s", s.name, res.code, s.wantCode, res.stdout, res.stderr)
		}
		for _, want := range s.outHas {
			if !strings.Contains(res.stdout, want) {
				t.Errorf("%s: stdout lacks %q:\n%s", s.name, want, res.stdout)
			}
		}
		for _, want := range s.errHas {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", s.name, want, res.stderr)
			}
		}
		if s.check != nil {
			s.check(t, res.stdout)
		}
	}
	if _, _, err := client.Evaluations().Info(stopEval, nil); err == nil {
		t.Errorf("eval %s still exists", stopEval)
	}
}

// TestSystemReconcileAndOperatorMetrics: the maintenance commands that
// only call one endpoint.
func TestSystemReconcileAndOperatorMetrics(t *testing.T) {
	c := newRealAgent(t)
	registerJob(t, c, testJob("web", 1, 64))
	cases := []struct {
		name     string
		args     []string
		wantCode int
		outHas   []string
		errHas   []string
	}{
		{name: "reconcile summaries", args: []string{"system", "reconcile", "summaries"},
			outHas: []string{"Successfully reconciled job summaries"}},
		{name: "reconcile takes no arguments", args: []string{"system", "reconcile", "summaries", "x"}, wantCode: 1,
			errHas: []string{"no arguments"}},
		{name: "metrics as JSON", args: []string{"operator", "metrics"}, outHas: []string{`"Gauges"`, `"Timestamp"`}},
		{name: "metrics with a template", args: []string{"operator", "metrics", "-t", "{{if .Timestamp}}ok{{end}}"}, outHas: []string{"ok"}},
		{name: "metrics in a bad format", args: []string{"operator", "metrics", "-format", "xml"}, wantCode: 1,
			errHas: []string{`-format must be "json" or "prometheus"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, c.Addr(), runOpts{}, tc.args...)
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

// TestStatus: nomad status finds what kind of object an identifier names.
func TestStatus(t *testing.T) {
	c := newRealAgent(t)
	nodeID := c.AddNode(t, &api.Node{Name: "n1"})
	reg := registerJob(t, c, testJob("web", 1, 64))
	c.Settle(t)
	client, _ := api.NewClient(&api.Config{Address: c.Addr()})
	allocs, _, _ := client.Jobs().Allocations("web", false, nil)
	if len(allocs) != 1 {
		t.Fatalf("allocs: %v", allocs)
	}
	cases := []struct {
		name     string
		args     []string
		wantCode int
		outHas   string
		errHas   string
	}{
		{name: "no identifier lists the jobs", args: []string{"status"}, outHas: "ID   Type     Priority  Status"},
		{name: "a job", args: []string{"status", "web"}, outHas: "ID            = web"},
		{name: "a node by prefix", args: []string{"status", nodeID[:8]}, outHas: "Name               = n1"},
		{name: "an allocation, verbose", args: []string{"status", "-verbose", allocs[0].ID[:8]}, outHas: "ID                  = " + allocs[0].ID},
		{name: "an evaluation", args: []string{"status", reg.EvalID}, outHas: "ID                 = " + reg.EvalID[:8]},
		{name: "a namespace", args: []string{"status", "default"}, outHas: "Name        = default"},
		{name: "nothing", args: []string{"status", "zzzz"}, wantCode: 1, errHas: `No matches returned for query: "zzzz"`},
		{name: "two arguments", args: []string{"status", "a", "b"}, wantCode: 1, errHas: "at most one argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, c.Addr(), runOpts{}, tc.args...)
			if res.code != tc.wantCode || !strings.Contains(res.stdout, tc.outHas) || !strings.Contains(res.stderr, tc.errHas) {
				t.Errorf("exit %d\nstdout:%s\nstderr:%s", res.code, res.stdout, res.stderr)
			}
		})
	}
}
