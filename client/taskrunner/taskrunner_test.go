//go:build unix

package taskrunner

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opennomad/nomad/client/allocdir"
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

// harness holds what a task runner is built from, so a test can build a
// second runner for the same task (a restarted client).
type harness struct {
	t      *testing.T
	alloc  *structs.Allocation
	task   *structs.Task
	root   string
	db     state.DB
	drv    driver.Driver
	clock  Clock
	change chan struct{}
}

// newHarness runs one task "web" of drv with cfg; a mock_driver task
// without run_for runs for an hour, until the test stops it.
func newHarness(t *testing.T, jobType string, drv driver.Driver, cfg map[string]interface{}, policy *structs.RestartPolicy) *harness {
	if _, ok := cfg["run_for"]; drv.Name() == mock.Name && !ok {
		cfg = maps.Clone(cfg)
		if cfg == nil {
			cfg = map[string]interface{}{}
		}
		cfg["run_for"] = "1h"
	}
	task := &structs.Task{Name: "web", Driver: drv.Name(), Config: cfg, KillTimeout: time.Second,
		LogConfig: structs.DefaultLogConfig(), Resources: &structs.Resources{CPU: 100, MemoryMB: 64}}
	job := &structs.Job{ID: "job", Name: "job", Type: jobType, Region: "global", Namespace: "default",
		TaskGroups: []*structs.TaskGroup{{Name: "g", RestartPolicy: policy, Tasks: []*structs.Task{task}}}}
	alloc := &structs.Allocation{ID: structs.GenerateUUID(), Name: "job.g[0]", Namespace: "default",
		JobID: "job", Job: job, TaskGroup: "g"}
	return &harness{t: t, alloc: alloc, task: task, root: t.TempDir(), db: state.NewMemDB(), drv: drv,
		change: make(chan struct{}, 1)}
}

func (h *harness) runner() *TaskRunner {
	h.t.Helper()
	ad, err := allocdir.New(h.root, h.alloc.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := ad.Build(); err != nil {
		h.t.Fatal(err)
	}
	td, err := ad.TaskDir(h.task.Name)
	if err != nil {
		h.t.Fatal(err)
	}
	tr, err := New(&Config{
		Alloc: h.alloc, Task: h.task, TaskDir: td, Driver: h.drv, StateDB: h.db,
		StateDir: filepath.Join(h.root, "state", h.task.Name), Clock: h.clock,
		Jitter: func() float64 { return 0 },
		OnStateChange: func() {
			select {
			case h.change <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return tr
}

// start builds a new task runner and runs it; the task is killed when the
// test ends.
func (h *harness) start() *TaskRunner {
	tr := h.runner()
	tr.EmitReceived()
	tr.AllowStart()
	go tr.Run()
	h.t.Cleanup(func() { tr.Kill(context.Background(), nil) })
	return tr
}

func waitDead(t *testing.T, tr *TaskRunner) *structs.TaskState {
	t.Helper()
	select {
	case <-tr.WaitCh():
	case <-time.After(15 * time.Second):
		t.Fatalf("task still %s after 15s; events %v", tr.TaskState().State, eventTypes(tr.TaskState()))
	}
	return tr.TaskState()
}

func waitState(t *testing.T, tr *TaskRunner, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for tr.TaskState().State != want {
		if time.Now().After(deadline) {
			t.Fatalf("task state %s, want %s; events %v", tr.TaskState().State, want, eventTypes(tr.TaskState()))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func eventTypes(st *structs.TaskState) []string {
	var out []string
	for _, e := range st.Events {
		out = append(out, e.Type)
	}
	return out
}

func countEvents(st *structs.TaskState, typ string) int {
	n := 0
	for _, e := range st.Events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func wantEvents(t *testing.T, st *structs.TaskState, want ...string) {
	t.Helper()
	got := eventTypes(st)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events = %q, want %q", got, want)
	}
}

var quickFail = &structs.RestartPolicy{Attempts: 2, Interval: time.Hour, Delay: 0, Mode: structs.RestartPolicyModeFail}

func TestBatchTaskCompletes(t *testing.T) {
	h := newHarness(t, structs.JobTypeBatch, mock.New(), map[string]interface{}{"run_for": "10ms"}, quickFail)
	st := waitDead(t, h.start())
	if st.Failed || st.State != structs.TaskStateDead || st.StartedAt.IsZero() || st.FinishedAt.IsZero() {
		t.Fatalf("state = %+v", st)
	}
	wantEvents(t, st, structs.TaskReceived, structs.TaskSetup, structs.TaskStarted, structs.TaskTerminated)
	if ev := st.Events[3]; ev.Details["exit_code"] != "0" {
		t.Fatalf("terminated event details %v", ev.Details)
	}
}

func TestServiceTaskRestartsThenFails(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{"run_for": "1ms", "exit_code": 2}, quickFail)
	st := waitDead(t, h.start())
	if !st.Failed || st.Restarts != 2 {
		t.Fatalf("failed=%v restarts=%d, want failed after 2 restarts", st.Failed, st.Restarts)
	}
	// The last events: third exit, then the policy gives up.
	last := st.Events[len(st.Events)-2:]
	if last[0].Type != structs.TaskTerminated || last[0].ExitCode != 2 {
		t.Fatalf("event %+v", last[0])
	}
	if last[1].Type != structs.TaskNotRestarting || !last[1].FailsTask ||
		last[1].RestartReason != `Exceeded allowed attempts 2 in interval 1h0m0s and mode is "fail"` {
		t.Fatalf("final event %+v", last[1])
	}
	if got := countEvents(st, structs.TaskRestarting); got != 2 {
		t.Fatalf("%d Restarting events", got)
	}
}

// A batch task that exits 0 is complete and not restarted even though
// the policy would allow it.
func TestBatchSuccessIsNotRestarted(t *testing.T) {
	h := newHarness(t, structs.JobTypeBatch, mock.New(), map[string]interface{}{"run_for": "1ms"}, quickFail)
	st := waitDead(t, h.start())
	if st.Restarts != 0 || st.Failed {
		t.Fatalf("restarts=%d failed=%v", st.Restarts, st.Failed)
	}
}

func TestKillRunningTask(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{}, quickFail)
	tr := h.start()
	waitState(t, tr, structs.TaskStateRunning)
	if err := tr.Kill(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	st := tr.TaskState()
	if st.State != structs.TaskStateDead || st.Failed {
		t.Fatalf("state %+v", st)
	}
	wantEvents(t, st, structs.TaskReceived, structs.TaskSetup, structs.TaskStarted, structs.TaskKilling, structs.TaskTerminated, structs.TaskKilled)
	if st.Events[3].KillTimeout != time.Second {
		t.Fatalf("killing event timeout %v", st.Events[3].KillTimeout)
	}
}

// A task slower than its kill_timeout is force killed and Kill returns.
func TestKillTimeoutForcesKill(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{"kill_after": "1h"}, quickFail)
	h.task.KillTimeout = 50 * time.Millisecond
	tr := h.start()
	waitState(t, tr, structs.TaskStateRunning)
	hd := tr.Handle()
	start := time.Now()
	if err := tr.Kill(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 50*time.Millisecond || el > 5*time.Second {
		t.Fatalf("kill took %v with a 50ms kill_timeout", el)
	}
	if r := hd.Inspect().ExitResult; r == nil || r.Signal != 9 {
		t.Fatalf("exit %+v, want SIGKILL", r)
	}
}

func TestKillWithReasonEvent(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{}, quickFail)
	tr := h.start()
	waitState(t, tr, structs.TaskStateRunning)
	reason := structs.NewTaskEvent(structs.TaskSiblingFailed, time.Now()).SetMessage(`Task's sibling "db" failed`)
	tr.Kill(context.Background(), reason)
	st := tr.TaskState()
	wantEvents(t, st, structs.TaskReceived, structs.TaskSetup, structs.TaskStarted, structs.TaskSiblingFailed, structs.TaskKilling, structs.TaskTerminated, structs.TaskKilled)
	if st.Failed {
		t.Fatal("a task killed because of its sibling is not failed itself")
	}
}

func TestKillBeforeStart(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{}, quickFail)
	tr := h.runner()
	tr.EmitReceived()
	go tr.Run() // never allowed to start
	if err := tr.Kill(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	st := tr.TaskState()
	if st.State != structs.TaskStateDead || st.Failed || !st.StartedAt.IsZero() {
		t.Fatalf("state %+v", st)
	}
}

func TestUnrecoverableStartError(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{"start_error": "no such image"}, quickFail)
	st := waitDead(t, h.start())
	wantEvents(t, st, structs.TaskReceived, structs.TaskSetup, structs.TaskDriverFailure, structs.TaskNotRestarting)
	if !st.Failed || st.Events[2].DriverError != "no such image" || st.Events[3].RestartReason != ReasonUnrecoverable {
		t.Fatalf("state %+v events %+v %+v", st, st.Events[2], st.Events[3])
	}
}

func TestRecoverableStartErrorIsRetried(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{"start_error": "busy", "start_error_recoverable": true}, quickFail)
	st := waitDead(t, h.start())
	if st.Restarts != 2 || !st.Failed {
		t.Fatalf("restarts=%d failed=%v events %v", st.Restarts, st.Failed, eventTypes(st))
	}
}

func TestMissingDriver(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, mock.New(), nil, quickFail)
	h.drv = nil
	ad, _ := allocdir.New(h.root, h.alloc.ID)
	ad.Build()
	td, _ := ad.TaskDir("web")
	tr, err := New(&Config{Alloc: h.alloc, Task: h.task, TaskDir: td, StateDB: h.db, DriverErr: errDocker})
	if err != nil {
		t.Fatal(err)
	}
	tr.AllowStart()
	go tr.Run()
	st := waitDead(t, tr)
	if !st.Failed || st.Events[len(st.Events)-2].DriverError != errDocker.Error() {
		t.Fatalf("state %+v", st)
	}
}

var errDocker = &driverMissing{"docker"}

type driverMissing struct{ name string }

func (e *driverMissing) Error() string {
	return `driver "` + e.name + `" is not available on this client`
}

// fakeClock hands out timers the test fires by hand.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []chan time.Time
	asked  chan time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	c.timers = append(c.timers, ch)
	c.mu.Unlock()
	c.asked <- d
	return ch
}

func (c *fakeClock) fire(advance time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(advance)
	for _, ch := range c.timers {
		ch <- c.now
	}
	c.timers = nil
}

// The restart delay is waited on the injected clock: the task stays
// pending with a Restarting event until the clock moves.
func TestRestartDelayUsesClock(t *testing.T) {
	pol := &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: 15 * time.Second, Mode: structs.RestartPolicyModeFail}
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{"run_for": "0s", "exit_code": 1}, pol)
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), asked: make(chan time.Duration, 1)}
	h.clock = clock
	tr := h.start()

	if d := <-clock.asked; d != 15*time.Second {
		t.Fatalf("waiting %v, want the policy's 15s", d)
	}
	st := tr.TaskState()
	if st.State != structs.TaskStatePending || st.Restarts != 1 || st.Events[len(st.Events)-1].StartDelay != int64(15*time.Second) {
		t.Fatalf("during the delay: %+v", st)
	}
	clock.fire(15 * time.Second)
	st = waitDead(t, tr)
	if !st.Failed || st.Restarts != 1 {
		t.Fatalf("after the second failure: %+v", st)
	}
}

// A kill during the restart delay ends the task at once.
func TestKillDuringRestartDelay(t *testing.T) {
	pol := &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: time.Hour, Mode: structs.RestartPolicyModeFail}
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{"run_for": "0s", "exit_code": 1}, pol)
	tr := h.start()
	waitState(t, tr, structs.TaskStatePending)
	for tr.TaskState().Restarts == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tr.Kill(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if st := tr.TaskState(); st.State != structs.TaskStateDead || st.Failed {
		t.Fatalf("state %+v", st)
	}
}

func TestOperatorRestartIsNotCounted(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{}, quickFail)
	tr := h.start()
	waitState(t, tr, structs.TaskStateRunning)
	first := tr.Handle()
	if err := tr.Restart(context.Background(), "operator asked"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for tr.Handle() == nil || tr.Handle() == first {
		if time.Now().After(deadline) {
			t.Fatalf("no new instance; events %v", eventTypes(tr.TaskState()))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if tr.restarts.Count() != 0 {
		t.Fatal("operator restart counted against the policy")
	}
	if st := tr.TaskState(); st.Restarts != 1 || st.State != structs.TaskStateRunning {
		t.Fatalf("state %+v", st)
	}
}

func TestSignal(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{}, quickFail)
	tr := h.start()
	waitState(t, tr, structs.TaskStateRunning)
	if err := tr.Signal("SIGHUP"); err != nil {
		t.Fatal(err)
	}
	if got := tr.Handle().Inspect().Attributes["signals"]; got != "SIGHUP" {
		t.Fatalf("signals %q", got)
	}
}

// A restarted client (new runner, same state) reattaches to the running
// instance instead of starting a second one.
func TestRestoreReattaches(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, mock.New(), map[string]interface{}{}, quickFail)
	tr := h.start()
	waitState(t, tr, structs.TaskStateRunning)
	id := tr.Handle().ID()
	tr.Shutdown()
	<-tr.WaitCh()

	tr2 := h.runner()
	if found, err := tr2.Restore(); err != nil || !found {
		t.Fatalf("Restore = %v, %v", found, err)
	}
	go tr2.Run()
	t.Cleanup(func() { tr2.Kill(context.Background(), nil) })
	if tr2.Handle() == nil || tr2.Handle().ID() != id {
		t.Fatalf("restored handle %v, want instance %s", tr2.Handle(), id)
	}
	st := tr2.TaskState()
	if st.State != structs.TaskStateRunning || countEvents(st, structs.TaskStarted) != 1 {
		t.Fatalf("restored state %+v events %v", st, eventTypes(st))
	}
	tr2.Kill(context.Background(), nil)
	if st := tr2.TaskState(); st.State != structs.TaskStateDead {
		t.Fatalf("after kill %+v", st)
	}
}

// Instances that ended while the client was down: a service task fails
// (the servers reschedule it), a batch task that exited 0 completes.
func TestRestoreExitedWhileDown(t *testing.T) {
	cases := []struct {
		jobType    string
		exitCode   int
		wantFailed bool
	}{
		{structs.JobTypeService, 0, true},
		{structs.JobTypeBatch, 0, false},
		{structs.JobTypeBatch, 3, true},
	}
	for _, tc := range cases {
		t.Run(tc.jobType, func(t *testing.T) {
			h := newHarness(t, tc.jobType, mock.New(), map[string]interface{}{"run_for": "100ms", "exit_code": tc.exitCode}, quickFail)
			tr := h.start()
			waitState(t, tr, structs.TaskStateRunning)
			tr.Shutdown()
			<-tr.WaitCh()
			time.Sleep(150 * time.Millisecond) // the client is "down" past the task's end

			tr2 := h.runner()
			if _, err := tr2.Restore(); err != nil {
				t.Fatal(err)
			}
			go tr2.Run()
			st := waitDead(t, tr2)
			if st.Failed != tc.wantFailed || st.Restarts != 0 {
				t.Fatalf("state %+v events %v", st, eventTypes(st))
			}
		})
	}
}

// A handle that points at nothing (the task vanished with its state)
// fails the task.
func TestRestoreLostTask(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, rawexec.New(rawexec.Config{Enabled: true}), map[string]interface{}{"command": "sleep", "args": []interface{}{"30"}}, quickFail)
	data := `{"SupervisorPID":999999,"TaskPID":999999,"Dir":"` + filepath.Join(h.root, "gone") + `"}`
	h.db.PutTaskRunnerState(h.alloc.ID, "web", &state.TaskRunnerState{
		TaskState: &structs.TaskState{State: structs.TaskStateRunning},
		Handle:    &driver.HandleState{Driver: rawexec.Name, TaskID: "x", Data: []byte(data)},
	})
	tr := h.runner()
	if _, err := tr.Restore(); err != nil {
		t.Fatal(err)
	}
	go tr.Run()
	st := waitDead(t, tr)
	if !st.Failed || !strings.Contains(st.Events[len(st.Events)-1].DisplayMessage, "could not be found") {
		t.Fatalf("state %+v", st.Events[len(st.Events)-1])
	}
}

func TestRestoreDeadTaskStaysDead(t *testing.T) {
	h := newHarness(t, structs.JobTypeBatch, mock.New(), map[string]interface{}{"run_for": "1ms"}, quickFail)
	waitDead(t, h.start())
	tr := h.runner()
	tr.Restore()
	go tr.Run()
	if st := waitDead(t, tr); st.State != structs.TaskStateDead || st.Failed {
		t.Fatalf("state %+v", st)
	}
}

func TestRawExecEndToEnd(t *testing.T) {
	h := newHarness(t, structs.JobTypeBatch, rawexec.New(rawexec.Config{Enabled: true}),
		map[string]interface{}{"command": "/bin/sh", "args": []interface{}{"-c", "echo ${NOMAD_TASK_NAME} in $NOMAD_ALLOC_DIR; exit 0"}}, quickFail)
	st := waitDead(t, h.start())
	if st.Failed {
		t.Fatalf("events %+v", st.Events)
	}
	b, err := os.ReadFile(filepath.Join(h.root, h.alloc.ID, "alloc", "logs", "web.stdout.0"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "web in " + filepath.Join(h.root, h.alloc.ID, "alloc") + "\n"; string(b) != want {
		t.Fatalf("stdout %q, want %q", b, want)
	}
}

// Reattach to a real process after a client restart: the same pid runs
// on, and killing it through the new runner stops it.
func TestRawExecRestoreAndKill(t *testing.T) {
	h := newHarness(t, structs.JobTypeService, rawexec.New(rawexec.Config{Enabled: true}),
		map[string]interface{}{"command": "sleep", "args": []interface{}{"30"}}, quickFail)
	tr := h.start()
	waitState(t, tr, structs.TaskStateRunning)
	pid := tr.Handle().Inspect().Attributes["pid"]
	tr.Shutdown()
	<-tr.WaitCh()

	h.drv = rawexec.New(rawexec.Config{Enabled: true})
	tr2 := h.runner()
	if _, err := tr2.Restore(); err != nil {
		t.Fatal(err)
	}
	go tr2.Run()
	t.Cleanup(func() { tr2.Kill(context.Background(), nil) })
	if got := tr2.Handle().Inspect().Attributes["pid"]; got != pid {
		t.Fatalf("reattached to pid %s, want %s", got, pid)
	}
	if err := tr2.Kill(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if st := tr2.TaskState(); st.State != structs.TaskStateDead || st.Failed {
		t.Fatalf("state %+v", st)
	}
	if _, err := os.Stat("/proc/" + pid); err == nil {
		b, _ := os.ReadFile("/proc/" + pid + "/stat")
		if !strings.Contains(string(b), ") Z") {
			t.Fatalf("pid %s still running after kill", pid)
		}
	}
}
