package command

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

// logsAgent is the slice of an agent the alloc logs, restart and signal
// commands talk to: one allocation with tasks "web" and "side", whose
// logs are fixed strings served as Nomad's frames.
type logsAgent struct {
	*httptest.Server
	logs map[string]string // "<task>.<type>" -> content

	mu     sync.Mutex
	writes []string // "PUT <path> <body>"
	reads  []string // log queries
}

const logsAllocID = "5f0e2c3a-1111-4222-8333-944455556666"

func newLogsAgent(t *testing.T, logs map[string]string) *logsAgent {
	t.Helper()
	a := &logsAgent{logs: logs}
	name := "web"
	alloc := api.Allocation{
		ID: logsAllocID, TaskGroup: "web",
		Job: &api.Job{TaskGroups: []*api.TaskGroup{{Name: &name, Tasks: []*api.Task{{Name: "web"}, {Name: "side"}}}}},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/allocations", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode([]api.AllocationListStub{{ID: logsAllocID}})
	})
	mux.HandleFunc("/v1/allocation/", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(alloc)
	})
	mux.HandleFunc("/v1/client/fs/logs/", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		a.mu.Lock()
		a.reads = append(a.reads, r.URL.RawQuery)
		a.mu.Unlock()
		content, ok := a.logs[q.Get("task")+"."+q.Get("type")]
		if !ok {
			http.Error(w, "log entry not found", http.StatusNotFound)
			return
		}
		off, _ := strconv.Atoi(q.Get("offset"))
		start := min(off, len(content))
		if q.Get("origin") == "end" {
			start = max(len(content)-off, 0)
		}
		enc := json.NewEncoder(w)
		// Served in two frames with a heartbeat between.
		rest := content[start:]
		half := len(rest) / 2
		enc.Encode(api.StreamFrame{Data: []byte(rest[:half]), File: "alloc/logs/x", Offset: int64(start + half)})
		io.WriteString(w, "{}")
		enc.Encode(api.StreamFrame{Data: []byte(rest[half:]), File: "alloc/logs/x", Offset: int64(len(content))})
	})
	mux.HandleFunc("/v1/client/allocation/", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.writes = append(a.writes, r.Method+" "+r.URL.Path+" "+string(b))
		a.mu.Unlock()
		if strings.Contains(string(b), "SIGNOPE") {
			http.Error(w, `invalid signal "SIGNOPE"`, http.StatusBadRequest)
			return
		}
		io.WriteString(w, "{}")
	})
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	return a
}

func TestAllocLogs(t *testing.T) {
	logs := map[string]string{
		"web.stdout":  "one\ntwo\nthree\nfour\n",
		"web.stderr":  "oops\n",
		"side.stdout": "side output",
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "whole log", args: []string{"5f0e", "web"}, stdout: "one\ntwo\nthree\nfour\n"},
		{name: "task flag wins", args: []string{"-task", "side", "5f0e", "web"}, stdout: "side output"},
		{name: "stderr", args: []string{"-stderr", "5f0e", "web"}, stdout: "oops\n"},
		{name: "tail lines", args: []string{"-tail", "-n", "2", "5f0e", "web"}, stdout: "three\nfour\n"},
		{name: "tail more lines than there are", args: []string{"-tail", "-n", "9", "5f0e", "web"}, stdout: "one\ntwo\nthree\nfour\n"},
		{name: "tail bytes", args: []string{"-tail", "-c", "6", "5f0e", "web"}, stdout: "\nfour\n"},
		{name: "tail a last line without newline", args: []string{"-tail", "-n", "1", "5f0e", "side"}, stdout: "side output"},
		{name: "two tasks need a choice", args: []string{"5f0e"}, code: 1,
			stderr: "Allocation \"5f0e2c3a\" is running the following tasks:\n  * side\n  * web\n\nPlease select the task to view its logs."},
		{name: "unknown task", args: []string{"5f0e", "db"}, code: 1,
			stderr: "Could not find task named: db. Valid tasks are: side, web"},
		{name: "-n without -tail", args: []string{"-n", "3", "5f0e", "web"}, code: 1, stderr: "-n and -c apply to -tail only"},
		{name: "-n and -c", args: []string{"-tail", "-n", "3", "-c", "4", "5f0e", "web"}, code: 1, stderr: "Both -n and -c are set; use one"},
		{name: "no log", args: []string{"-stderr", "5f0e", "side"}, code: 1,
			stderr: `Error reading the stderr log of task "side"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newLogsAgent(t, logs)
			res := runCommand(t, a.URL, runOpts{}, append([]string{"alloc", "logs"}, tc.args...)...)
			must.Eq(t, tc.code, res.code, must.Sprint(res.stderr))
			must.Eq(t, tc.stdout, res.stdout)
			must.StrContains(t, res.stderr, tc.stderr)
		})
	}
}

func TestAllocLogs_AliasAndFollowFlag(t *testing.T) {
	a := newLogsAgent(t, map[string]string{"web.stdout": "a\nb\n", "side.stdout": ""})
	res := runCommand(t, a.URL, runOpts{}, "logs", "-f", "-tail", "-n", "1", "5f0e", "web")
	must.Eq(t, 0, res.code, must.Sprint(res.stderr))
	must.Eq(t, "b\n", res.stdout)
	last := a.reads[len(a.reads)-1]
	must.StrContains(t, last, "follow=true")
	must.StrContains(t, last, "origin=end")
	must.StrContains(t, last, "offset=2")
}

func TestLastLines(t *testing.T) {
	cases := []struct {
		data string
		n    int64
		off  int64
		ok   bool
	}{
		{"a\nb\nc\n", 1, 2, true},
		{"a\nb\nc\n", 2, 4, true},
		{"a\nb\nc\n", 3, 6, false}, // all of it, and maybe more before
		{"a\nb\nc", 1, 1, true},    // an unfinished last line
		{"", 1, 0, false},
		{"\n\n", 1, 1, true},
	}
	for _, tc := range cases {
		off, ok := lastLines([]byte(tc.data), tc.n)
		if off != tc.off || ok != tc.ok {
			t.Errorf("lastLines(%q, %d) = %d, %v; want %d, %v", tc.data, tc.n, off, ok, tc.off, tc.ok)
		}
	}
}

func TestAllocRestartAndSignal(t *testing.T) {
	a := newLogsAgent(t, nil)
	for _, tc := range []struct {
		args  []string
		code  int
		write string
		err   string
	}{
		{args: []string{"alloc", "restart", "5f0e", "web"}, write: `PUT /v1/client/allocation/` + logsAllocID + `/restart {"TaskName":"web"}`},
		{args: []string{"alloc", "restart", "5f0e"}, write: `PUT /v1/client/allocation/` + logsAllocID + `/restart {"TaskName":""}`},
		{args: []string{"alloc", "restart", "-all-tasks", "5f0e"}, write: `PUT /v1/client/allocation/` + logsAllocID + `/restart {"AllTasks":true}`},
		{args: []string{"alloc", "restart", "-all-tasks", "5f0e", "web"}, code: 1, err: "cannot be used with a task name"},
		{args: []string{"alloc", "restart", "5f0e", "db"}, code: 1, err: "Could not find task named: db"},
		{args: []string{"alloc", "signal", "-s", "sighup", "5f0e", "web"}, write: `PUT /v1/client/allocation/` + logsAllocID + `/signal {"Signal":"SIGHUP","Task":"web"}`},
		{args: []string{"alloc", "signal", "5f0e"}, write: `PUT /v1/client/allocation/` + logsAllocID + `/signal {"Signal":"","Task":""}`},
		{args: []string{"alloc", "signal", "-s", "SIGNOPE", "5f0e"}, code: 1, err: `invalid signal "SIGNOPE"`},
	} {
		a.mu.Lock()
		a.writes = nil
		a.mu.Unlock()
		res := runCommand(t, a.URL, runOpts{}, tc.args...)
		must.Eq(t, tc.code, res.code, must.Sprint(tc.args, res.stderr))
		must.StrContains(t, res.stderr, tc.err)
		if tc.write != "" {
			must.Eq(t, []string{tc.write}, a.writes, must.Sprint(tc.args))
		}
	}
}
