//go:build unix

package allocrunner

import (
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/driver/executor"
	"github.com/opennomad/nomad/client/driver/mock"
	"github.com/opennomad/nomad/client/driver/rawexec"
	"github.com/opennomad/nomad/client/state"
	"github.com/opennomad/nomad/structs"
)

func TestMain(m *testing.M) {
	executor.Init()
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}

// task builds a task for the mock driver (or raw_exec when cfg has a
// command). A mock task without run_for runs for an hour: until the test
// stops it.
func task(name string, cfg map[string]interface{}) *structs.Task {
	drv := mock.Name
	if _, ok := cfg["command"]; ok {
		drv = rawexec.Name
	} else if _, ok := cfg["run_for"]; !ok {
		cfg = maps.Clone(cfg)
		if cfg == nil {
			cfg = map[string]interface{}{}
		}
		cfg["run_for"] = "1h"
	}
	return &structs.Task{Name: name, Driver: drv, Config: cfg, KillTimeout: time.Second, LogConfig: structs.DefaultLogConfig()}
}

func withLifecycle(t *structs.Task, hook string, sidecar bool) *structs.Task {
	t.Lifecycle = &structs.TaskLifecycleConfig{Hook: hook, Sidecar: sidecar}
	return t
}

func makeAlloc(jobType string, tasks ...*structs.Task) *structs.Allocation {
	job := &structs.Job{ID: "job", Name: "job", Type: jobType, Region: "global", Namespace: "default",
		TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: tasks,
			RestartPolicy: &structs.RestartPolicy{Attempts: 0, Interval: time.Hour, Mode: structs.RestartPolicyModeFail}}}}
	return &structs.Allocation{ID: structs.GenerateUUID(), NodeID: "node1", Name: "job.g[0]", Namespace: "default",
		JobID: "job", Job: job, TaskGroup: "g", DesiredStatus: structs.AllocDesiredStatusRun}
}

// env is one client's worth of dependencies shared across "restarts".
type env struct {
	t       *testing.T
	root    string
	db      state.DB
	mu      sync.Mutex
	updates []*structs.Allocation
}

func newEnv(t *testing.T) *env {
	return &env{t: t, root: t.TempDir(), db: state.NewMemDB()}
}

func (e *env) runner(a *structs.Allocation) *AllocRunner {
	e.t.Helper()
	cat, err := driver.NewCatalog(mock.New(), rawexec.New(rawexec.Config{Enabled: true}))
	if err != nil {
		e.t.Fatal(err)
	}
	ar, err := New(&Config{
		Alloc: a, AllocDirRoot: filepath.Join(e.root, "alloc"), StateDirRoot: filepath.Join(e.root, "tasks"),
		Drivers: cat, StateDB: e.db, Node: &structs.Node{ID: "node1", Datacenter: "dc1"},
		Updated: func(u *structs.Allocation) {
			e.mu.Lock()
			e.updates = append(e.updates, u)
			e.mu.Unlock()
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return ar
}

// start runs a new alloc; it is destroyed when the test ends.
func (e *env) start(a *structs.Allocation) *AllocRunner {
	ar := e.runner(a)
	go ar.Run()
	e.t.Cleanup(func() {
		ar.Destroy()
		select {
		case <-ar.DestroyedCh():
		case <-time.After(20 * time.Second):
			e.t.Error("alloc not destroyed within 20s")
		}
	})
	return ar
}

func (e *env) statuses() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, u := range e.updates {
		if len(out) == 0 || out[len(out)-1] != u.ClientStatus {
			out = append(out, u.ClientStatus)
		}
	}
	return out
}

func waitDone(t *testing.T, ar *AllocRunner) *structs.Allocation {
	t.Helper()
	select {
	case <-ar.WaitCh():
	case <-time.After(20 * time.Second):
		t.Fatalf("alloc still %s after 20s", ar.Alloc().ClientStatus)
	}
	return ar.Alloc()
}

func waitStatus(t *testing.T, ar *AllocRunner, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for ar.Alloc().ClientStatus != want {
		if time.Now().After(deadline) {
			t.Fatalf("alloc %s, want %s", ar.Alloc().ClientStatus, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func lastEvent(s *structs.TaskState) *structs.TaskEvent { return s.Events[len(s.Events)-1] }

func hasEvent(s *structs.TaskState, typ string) bool {
	for _, e := range s.Events {
		if e.Type == typ {
			return true
		}
	}
	return false
}

func TestBatchAllocCompletes(t *testing.T) {
	e := newEnv(t)
	a := waitDone(t, e.start(makeAlloc(structs.JobTypeBatch, task("t", map[string]interface{}{"run_for": "20ms"}))))
	if a.ClientStatus != structs.AllocClientStatusComplete || a.ClientDescription != descComplete {
		t.Fatalf("status %s %q", a.ClientStatus, a.ClientDescription)
	}
	if got := strings.Join(e.statuses(), ","); got != "pending,running,complete" {
		t.Fatalf("reported statuses %s", got)
	}
	e.mu.Lock()
	last := e.updates[len(e.updates)-1]
	e.mu.Unlock()
	if last.ID != a.ID || last.NodeID != "node1" || last.Job != nil || last.TaskStates["t"].State != structs.TaskStateDead {
		t.Fatalf("update carries %+v", last)
	}
}

func TestPrestartRunsBeforeMain(t *testing.T) {
	e := newEnv(t)
	ar := e.start(makeAlloc(structs.JobTypeService,
		withLifecycle(task("init", map[string]interface{}{"run_for": "30ms"}), structs.TaskLifecycleHookPrestart, false),
		task("app", map[string]interface{}{})))
	waitStatus(t, ar, structs.AllocClientStatusRunning)
	deadline := time.Now().Add(5 * time.Second)
	for ar.Alloc().TaskStates["app"].State != structs.TaskStateRunning && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	states := ar.Alloc().TaskStates
	if states["init"].State != structs.TaskStateDead || states["init"].Failed {
		t.Fatalf("init %+v", states["init"])
	}
	if states["app"].StartedAt.Before(states["init"].FinishedAt) {
		t.Fatalf("app started %v before init finished %v", states["app"].StartedAt, states["init"].FinishedAt)
	}

	// The servers stop the alloc: the main task is killed, the alloc
	// completes.
	stopped := ar.Alloc()
	stopped.DesiredStatus = structs.AllocDesiredStatusStop
	ar.Update(stopped)
	a := waitDone(t, ar)
	if a.ClientStatus != structs.AllocClientStatusComplete || !hasEvent(a.TaskStates["app"], structs.TaskKilled) {
		t.Fatalf("after stop: %s, app events %v", a.ClientStatus, a.TaskStates["app"].Events)
	}
}

func TestFailedPrestartFailsAlloc(t *testing.T) {
	e := newEnv(t)
	a := waitDone(t, e.start(makeAlloc(structs.JobTypeService,
		withLifecycle(task("init", map[string]interface{}{"run_for": "1ms", "exit_code": 1}), structs.TaskLifecycleHookPrestart, false),
		task("app", map[string]interface{}{}))))
	if a.ClientStatus != structs.AllocClientStatusFailed {
		t.Fatalf("status %s", a.ClientStatus)
	}
	app := a.TaskStates["app"]
	if !app.StartedAt.IsZero() || app.Failed || !hasEvent(app, structs.TaskSiblingFailed) {
		t.Fatalf("app %+v", app)
	}
}

func TestSiblingFailureKillsOthers(t *testing.T) {
	e := newEnv(t)
	a := waitDone(t, e.start(makeAlloc(structs.JobTypeService,
		task("bad", map[string]interface{}{"run_for": "20ms", "exit_code": 3}),
		task("good", map[string]interface{}{}))))
	if a.ClientStatus != structs.AllocClientStatusFailed {
		t.Fatalf("status %s", a.ClientStatus)
	}
	good := a.TaskStates["good"]
	if good.Failed || !hasEvent(good, structs.TaskSiblingFailed) || lastEvent(good).Type != structs.TaskKilled {
		t.Fatalf("good %+v", good.Events)
	}
}

func TestLeaderDeathStopsGroup(t *testing.T) {
	e := newEnv(t)
	boss := task("boss", map[string]interface{}{"run_for": "20ms"})
	boss.Leader = true
	a := waitDone(t, e.start(makeAlloc(structs.JobTypeBatch, boss, task("helper", map[string]interface{}{}))))
	if a.ClientStatus != structs.AllocClientStatusComplete || !hasEvent(a.TaskStates["helper"], structs.TaskLeaderDead) {
		t.Fatalf("status %s helper %v", a.ClientStatus, a.TaskStates["helper"].Events)
	}
}

func TestSidecarStoppedWhenMainDone(t *testing.T) {
	e := newEnv(t)
	a := waitDone(t, e.start(makeAlloc(structs.JobTypeBatch,
		withLifecycle(task("proxy", map[string]interface{}{}), structs.TaskLifecycleHookPrestart, true),
		task("work", map[string]interface{}{"run_for": "20ms"}),
		withLifecycle(task("cleanup", map[string]interface{}{"run_for": "1ms"}), structs.TaskLifecycleHookPoststop, false))))
	if a.ClientStatus != structs.AllocClientStatusComplete {
		t.Fatalf("status %s", a.ClientStatus)
	}
	s := a.TaskStates
	if !hasEvent(s["proxy"], structs.TaskMainDead) {
		t.Fatalf("proxy events %v", s["proxy"].Events)
	}
	if s["cleanup"].StartedAt.Before(s["work"].FinishedAt) || s["cleanup"].StartedAt.Before(s["proxy"].FinishedAt) {
		t.Fatal("poststop started before the other tasks were dead")
	}
}

func TestMissingDriverFailsAlloc(t *testing.T) {
	e := newEnv(t)
	tk := task("t", map[string]interface{}{})
	tk.Driver = "docker"
	a := waitDone(t, e.start(makeAlloc(structs.JobTypeService, tk)))
	if a.ClientStatus != structs.AllocClientStatusFailed || !strings.Contains(a.TaskStates["t"].Events[2].DriverError, `"docker"`) {
		t.Fatalf("status %s events %+v", a.ClientStatus, a.TaskStates["t"].Events)
	}
}

func TestDestroyRemovesEverything(t *testing.T) {
	e := newEnv(t)
	ar := e.runner(makeAlloc(structs.JobTypeService, task("t", map[string]interface{}{})))
	go ar.Run()
	waitStatus(t, ar, structs.AllocClientStatusRunning)
	if _, err := os.Stat(ar.AllocDir().Dir); err != nil {
		t.Fatal(err)
	}
	ar.Destroy()
	select {
	case <-ar.DestroyedCh():
	case <-time.After(10 * time.Second):
		t.Fatal("not destroyed")
	}
	if _, err := os.Stat(ar.AllocDir().Dir); !os.IsNotExist(err) {
		t.Fatalf("alloc dir left: %v", err)
	}
	if allocs, _, _ := e.db.GetAllAllocations(); len(allocs) != 0 {
		t.Fatalf("state left: %d allocs", len(allocs))
	}
	if a := ar.Alloc(); a.TaskStates["t"].State != structs.TaskStateDead {
		t.Fatalf("task %s", a.TaskStates["t"].State)
	}
}

// A restarted client rebuilds the runner from its state, reattaches to
// the running tasks (no second start) and can still stop them.
func TestRestoreAfterClientRestart(t *testing.T) {
	e := newEnv(t)
	ar := e.runner(makeAlloc(structs.JobTypeService, task("t", map[string]interface{}{})))
	go ar.Run()
	waitStatus(t, ar, structs.AllocClientStatusRunning)
	id := ar.TaskRunner("t").Handle().ID()
	ar.Shutdown()

	allocs, _, _ := e.db.GetAllAllocations()
	if len(allocs) != 1 {
		t.Fatalf("%d stored allocs", len(allocs))
	}
	ar3 := e.runner(allocs[0])
	if err := ar3.Restore(); err != nil {
		t.Fatal(err)
	}
	go ar3.Run()
	t.Cleanup(func() { ar3.Destroy(); <-ar3.DestroyedCh() })
	waitStatus(t, ar3, structs.AllocClientStatusRunning)
	if got := ar3.TaskRunner("t").Handle().ID(); got != id {
		t.Fatalf("restored instance %s, want %s", got, id)
	}
	stopped := ar3.Alloc()
	stopped.DesiredStatus = structs.AllocDesiredStatusStop
	ar3.Update(stopped)
	if a := waitDone(t, ar3); a.ClientStatus != structs.AllocClientStatusComplete {
		t.Fatalf("status %s", a.ClientStatus)
	}
}

// Real processes: a service alloc running sleep survives a client
// restart with the same pid; stopping the alloc kills the process.
func TestRestoreRawExec(t *testing.T) {
	e := newEnv(t)
	ar := e.runner(makeAlloc(structs.JobTypeService, task("sleeper", map[string]interface{}{"command": "sleep", "args": []interface{}{"30"}})))
	go ar.Run()
	waitStatus(t, ar, structs.AllocClientStatusRunning)
	pid, _ := strconv.Atoi(ar.TaskRunner("sleeper").Handle().Inspect().Attributes["pid"])
	ar.Shutdown()
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("task pid %d died with the client: %v", pid, err)
	}

	allocs, _, _ := e.db.GetAllAllocations()
	ar2 := e.runner(allocs[0])
	if err := ar2.Restore(); err != nil {
		t.Fatal(err)
	}
	go ar2.Run()
	t.Cleanup(func() { ar2.Destroy(); <-ar2.DestroyedCh() })
	waitStatus(t, ar2, structs.AllocClientStatusRunning)
	if got, _ := strconv.Atoi(ar2.TaskRunner("sleeper").Handle().Inspect().Attributes["pid"]); got != pid {
		t.Fatalf("restored pid %d, want %d", got, pid)
	}
	stopped := ar2.Alloc()
	stopped.DesiredStatus = structs.AllocDesiredStatusStop
	ar2.Update(stopped)
	if a := waitDone(t, ar2); a.ClientStatus != structs.AllocClientStatusComplete {
		t.Fatalf("status %s", a.ClientStatus)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still running after the alloc stopped", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A task whose process died while the client was down fails the alloc.
func TestRestoreTaskDiedWhileDown(t *testing.T) {
	e := newEnv(t)
	ar := e.runner(makeAlloc(structs.JobTypeService, task("sleeper", map[string]interface{}{"command": "sleep", "args": []interface{}{"30"}})))
	go ar.Run()
	waitStatus(t, ar, structs.AllocClientStatusRunning)
	pid, _ := strconv.Atoi(ar.TaskRunner("sleeper").Handle().Inspect().Attributes["pid"])
	ar.Shutdown()
	syscall.Kill(pid, syscall.SIGKILL)
	// Let the supervisor record the exit.
	time.Sleep(200 * time.Millisecond)

	allocs, _, _ := e.db.GetAllAllocations()
	ar2 := e.runner(allocs[0])
	if err := ar2.Restore(); err != nil {
		t.Fatal(err)
	}
	go ar2.Run()
	t.Cleanup(func() { ar2.Destroy(); <-ar2.DestroyedCh() })
	a := waitDone(t, ar2)
	if a.ClientStatus != structs.AllocClientStatusFailed {
		t.Fatalf("status %s events %+v", a.ClientStatus, a.TaskStates["sleeper"].Events)
	}
	st := a.TaskStates["sleeper"]
	term := st.Events[len(st.Events)-2]
	if term.Type != structs.TaskTerminated || term.Signal != int(syscall.SIGKILL) {
		t.Fatalf("terminated event %+v", term)
	}
}
