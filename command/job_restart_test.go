package command

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/opennomad/nomad/api"
)

// restartAgent is the part of an agent job restart talks to: one job
// "web" with groups "web" (task "server") and "db" (task "pg"), its
// allocations, the client's restart endpoint and alloc stop, which
// places a running replacement at once. Allocations whose ID is in fail
// refuse to restart.
type restartAgent struct {
	mu       sync.Mutex
	srv      *httptest.Server
	jobType  string
	allocs   map[string]*api.Allocation
	fail     map[string]bool
	restarts []string // "<alloc>:<body>" in the order received
	stops    []string
}

func newRestartAgent(t *testing.T, jobType string, allocs ...*api.Allocation) *restartAgent {
	a := &restartAgent{jobType: jobType, allocs: map[string]*api.Allocation{}, fail: map[string]bool{}}
	for _, al := range allocs {
		a.allocs[al.ID] = al
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		a.reply(w, []*api.JobListStub{{ID: "web", Name: "web", Type: jobType}})
	})
	mux.HandleFunc("GET /v1/job/web", func(w http.ResponseWriter, r *http.Request) { a.reply(w, a.job()) })
	mux.HandleFunc("GET /v1/job/web/allocations", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		var stubs []*api.AllocationListStub
		for _, al := range a.allocs {
			stubs = append(stubs, &api.AllocationListStub{ID: al.ID, TaskGroup: al.TaskGroup, DesiredStatus: al.DesiredStatus,
				ClientStatus: al.ClientStatus, CreateIndex: al.CreateIndex})
		}
		a.mu.Unlock()
		a.reply(w, stubs)
	})
	mux.HandleFunc("GET /v1/allocation/{id}", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		al := a.allocs[r.PathValue("id")]
		a.mu.Unlock()
		if al == nil {
			http.Error(w, "alloc not found", http.StatusNotFound)
			return
		}
		a.reply(w, al)
	})
	mux.HandleFunc("PUT /v1/client/allocation/{id}/restart", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := r.PathValue("id")
		a.mu.Lock()
		a.restarts = append(a.restarts, id+":"+strings.TrimSpace(string(body)))
		fail := a.fail[id]
		a.mu.Unlock()
		if fail {
			http.Error(w, "task not running", http.StatusBadRequest)
			return
		}
		a.restarted(id, string(body))
		a.reply(w, map[string]any{})
	})
	mux.HandleFunc("PUT /v1/allocation/{id}/stop", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		a.mu.Lock()
		old := a.allocs[id]
		next := &api.Allocation{ID: "b" + id[1:], TaskGroup: old.TaskGroup, DesiredStatus: "run", ClientStatus: "running", CreateIndex: 100}
		stopped := *old
		stopped.DesiredStatus, stopped.NextAllocation = "stop", next.ID
		a.allocs[id], a.allocs[next.ID] = &stopped, next
		a.stops = append(a.stops, id+"?"+r.URL.RawQuery)
		a.mu.Unlock()
		a.reply(w, api.AllocStopResponse{EvalID: "e"})
	})
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

// restarted records the restart the client made: the tasks it names (or
// all of them) count one more restart and run. The allocation is
// replaced, not changed, so a reply being encoded never sees a write.
func (a *restartAgent) restarted(id, body string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.allocs[id]
	next := *old
	next.TaskStates = map[string]*api.TaskState{}
	for task, st := range old.TaskStates {
		cp := *st
		if !strings.Contains(body, `"TaskName":"`) || strings.Contains(body, `"TaskName":""`) || strings.Contains(body, `"TaskName":"`+task+`"`) {
			cp.Restarts++
			cp.State = "running"
		}
		next.TaskStates[task] = &cp
	}
	a.allocs[id] = &next
}

func (a *restartAgent) job() *api.Job {
	return &api.Job{ID: new("web"), Name: new("web"), Type: new(a.jobType), TaskGroups: []*api.TaskGroup{
		{Name: new("web"), Tasks: []*api.Task{{Name: "server"}}},
		{Name: new("db"), Tasks: []*api.Task{{Name: "pg"}}},
	}}
}

func (a *restartAgent) reply(w http.ResponseWriter, v any) {
	w.Header().Set("X-Nomad-Index", "10")
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// restartAlloc is a running allocation of group in the restart agent.
func restartAlloc(id, group string, createIndex uint64) *api.Allocation {
	task := map[string]string{"web": "server", "db": "pg"}[group]
	return &api.Allocation{ID: id, TaskGroup: group, DesiredStatus: "run", ClientStatus: "running", CreateIndex: createIndex,
		TaskStates: map[string]*api.TaskState{task: {State: "running"}},
		Job: &api.Job{TaskGroups: []*api.TaskGroup{
			{Name: new("web"), Tasks: []*api.Task{{Name: "server"}}},
			{Name: new("db"), Tasks: []*api.Task{{Name: "pg"}}},
		}}}
}

const (
	allocA = "a1111111-0000-0000-0000-000000000000"
	allocB = "a2222222-0000-0000-0000-000000000000"
	allocC = "a3333333-0000-0000-0000-000000000000"
)

func TestJobRestart(t *testing.T) {
	cases := []struct {
		name     string
		jobType  string
		args     []string
		fail     []string
		stdin    string
		wantCode int
		outHas   []string
		errHas   []string
		// restarts and stops are the requests the agent must have seen,
		// in order ("" entries are not compared).
		restarts []string
		stops    []string
	}{
		{name: "in place, one at a time, oldest first", args: []string{"job", "restart", "web"},
			outHas: []string{"Restarting 3 allocations in batches of 1", `Restarting allocation "a1111111"`,
				"Finished job restart", "All allocations restarted successfully!"},
			restarts: []string{allocA + `:{"TaskName":""}`, allocB + `:{"TaskName":""}`, allocC + `:{"TaskName":""}`}},
		{name: "a group's allocations", args: []string{"job", "restart", "-group", "db", "web"},
			outHas:   []string{"Restarting 1 allocation in batches of 1"},
			restarts: []string{allocC + `:{"TaskName":""}`}},
		{name: "a task", args: []string{"job", "restart", "-task", "pg", "web"},
			restarts: []string{allocC + `:{"TaskName":"pg"}`}},
		{name: "all tasks, batches by percentage", args: []string{"job", "restart", "-all-tasks", "-batch-size", "50%", "web"},
			outHas:   []string{"in batches of 1"},
			restarts: []string{allocA + `:{"AllTasks":true}`, allocB + `:{"AllTasks":true}`, allocC + `:{"AllTasks":true}`}},
		{name: "a batch of all", args: []string{"job", "restart", "-batch-size", "3", "web"},
			outHas: []string{"in batches of 3"}, restarts: []string{"", "", ""}},
		{name: "wait between batches", args: []string{"job", "restart", "-batch-size", "2", "-batch-wait", "1ms", "web"},
			outHas: []string{"Waiting 1ms before restarting the next batch"}, restarts: []string{"", "", ""}},
		{name: "ask between batches, answered no", args: []string{"job", "restart", "-batch-wait", "ask", "web"}, stdin: "n\n",
			wantCode: 1, errHas: []string{"stopped by the user"}, restarts: []string{allocA + `:{"TaskName":""}`}},
		{name: "ask between batches, answered by -yes", args: []string{"job", "restart", "-batch-wait", "ask", "-yes", "web"},
			restarts: []string{"", "", ""}},
		{name: "a failure stops with -on-error=fail", args: []string{"job", "restart", "-on-error", "fail", "web"}, fail: []string{allocA},
			wantCode: 1, errHas: []string{`Error restarting allocation "a1111111": Unexpected response code: 400 (task not running)`, "Job restart stopped"},
			restarts: []string{allocA + `:{"TaskName":""}`}},
		{name: "a failure, go on when asked", args: []string{"job", "restart", "web"}, fail: []string{allocA}, stdin: "y\n",
			wantCode: 1, errHas: []string{"Some allocations failed to restart"}, restarts: []string{"", "", ""}},
		{name: "reschedule", args: []string{"job", "restart", "-reschedule", "-no-shutdown-delay", "-group", "web", "web"},
			outHas: []string{"Rescheduling 2 allocations", `Allocation "a1111111" replaced by "b1111111"`, `Allocation "a2222222" replaced by "b2222222"`},
			stops:  []string{allocA + "?no_shutdown_delay=true", allocB + "?no_shutdown_delay=true"}},
		{name: "reschedule a sysbatch job", jobType: "sysbatch", args: []string{"job", "restart", "-reschedule", "web"},
			wantCode: 1, errHas: []string{"sysbatch job"}},
		{name: "an unknown group", args: []string{"job", "restart", "-group", "nope", "web"}, wantCode: 1, errHas: []string{`no task group "nope"`}},
		{name: "an unknown task", args: []string{"job", "restart", "-group", "web", "-task", "pg", "web"}, wantCode: 1, errHas: []string{`no task "pg"`}},
		{name: "-all-tasks with -task", args: []string{"job", "restart", "-all-tasks", "-task", "x", "web"}, wantCode: 1, errHas: []string{"cannot be used with -task"}},
		{name: "-reschedule with -task", args: []string{"job", "restart", "-reschedule", "-task", "x", "web"}, wantCode: 1, errHas: []string{"-reschedule option cannot"}},
		{name: "a bad batch size", args: []string{"job", "restart", "-batch-size", "0", "web"}, wantCode: 1, errHas: []string{"Invalid -batch-size"}},
		{name: "a bad batch wait", args: []string{"job", "restart", "-batch-wait", "soon", "web"}, wantCode: 1, errHas: []string{"Invalid -batch-wait"}},
		{name: "a bad -on-error", args: []string{"job", "restart", "-on-error", "retry", "web"}, wantCode: 1, errHas: []string{"Invalid -on-error"}},
		{name: "no job", args: []string{"job", "restart"}, wantCode: 1, errHas: []string{"one argument: <job>"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			jobType := tc.jobType
			if jobType == "" {
				jobType = "service"
			}
			a := newRestartAgent(t, jobType, restartAlloc(allocA, "web", 5), restartAlloc(allocB, "web", 6), restartAlloc(allocC, "db", 7),
				&api.Allocation{ID: "a4444444-0000-0000-0000-000000000000", TaskGroup: "web", DesiredStatus: "stop", ClientStatus: "complete"})
			for _, id := range tc.fail {
				a.fail[id] = true
			}
			res := runCommand(t, a.srv.URL, runOpts{stdin: tc.stdin}, tc.args...)
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
			compareRequests(t, "restarts", a.restarts, tc.restarts)
			compareRequests(t, "stops", a.stops, tc.stops)
		})
	}
}

// compareRequests checks the requests seen against want, skipping the
// "" entries of want.
func compareRequests(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
	for i := range want {
		if want[i] != "" && got[i] != want[i] {
			t.Errorf("%s[%d] = %q, want %q", what, i, got[i], want[i])
		}
	}
}
