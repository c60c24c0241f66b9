//go:build unix

package executor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	Init()
	// Supervisors are this test binary; under -race it would otherwise
	// linger a second at exit, which every Wait would pay.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}

// launch starts `sh -c script` under a supervisor and makes sure the
// task is gone when the test ends.
func launch(t *testing.T, script string, env ...string) (*Process, *Spec) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logs := t.TempDir()
	spec := &Spec{
		Command:     "/bin/sh",
		Args:        []string{"-c", script},
		Env:         append([]string{"PATH=/usr/bin:/bin"}, env...),
		Dir:         t.TempDir(),
		LogDir:      logs,
		TaskName:    "t",
		MaxFiles:    2,
		MaxFileSize: 1 << 20,
	}
	p, err := Launch(context.Background(), exe, spec, filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(syscall.SIGKILL, 0)
		waitResult(t, p)
	})
	return p, spec
}

func waitResult(t *testing.T, p *Process) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	r, err := p.Wait(ctx)
	if err != nil {
		t.Fatalf("waiting for task pid %d: %v", p.State().TaskPID, err)
	}
	return r
}

func readLog(t *testing.T, spec *Spec, stream string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(spec.LogDir, spec.TaskName+"."+stream+".0"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExitCodeAndLogs(t *testing.T) {
	p, spec := launch(t, `echo "out $FOO"; echo err >&2; exit 3`, "FOO=bar")
	r := waitResult(t, p)
	if r.ExitCode != 3 || r.Signal != 0 || r.Error != "" {
		t.Fatalf("result = %+v, want exit code 3", r)
	}
	if got := readLog(t, spec, "stdout"); got != "out bar\n" {
		t.Errorf("stdout = %q", got)
	}
	if got := readLog(t, spec, "stderr"); got != "err\n" {
		t.Errorf("stderr = %q", got)
	}
}

func TestStopWithSignal(t *testing.T) {
	p, _ := launch(t, `exec sleep 30`)
	start := time.Now()
	if err := p.Stop(syscall.SIGINT, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	r := p.Result()
	if r == nil || r.Signal != int(syscall.SIGINT) || r.ExitCode != 128+int(syscall.SIGINT) {
		t.Fatalf("result = %+v, want killed by SIGINT", r)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("Stop waited for the kill timeout although the task obeyed SIGINT")
	}
}

// A task that ignores its kill signal is SIGKILLed after kill_timeout.
func TestStopEscalatesToSIGKILL(t *testing.T) {
	p, spec := launch(t, `trap "" INT; echo ready; sleep 30`)
	waitFor(t, func() bool { b, _ := os.ReadFile(filepath.Join(spec.LogDir, "t.stdout.0")); return len(b) > 0 })
	start := time.Now()
	if err := p.Stop(syscall.SIGINT, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("stopped after %v, before the kill timeout", el)
	}
	if r := p.Result(); r.Signal != int(syscall.SIGKILL) {
		t.Fatalf("result = %+v, want SIGKILL", r)
	}
}

// Stopping reaches everything the task started in its process group.
func TestStopKillsProcessGroup(t *testing.T) {
	p, spec := launch(t, `sleep 30 & echo $!; wait`)
	var child int
	waitFor(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(spec.LogDir, "t.stdout.0"))
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return child > 0
	})
	childStart, err := startTicks(child)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(syscall.SIGTERM, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// An orphaned child may linger as a zombie until init reaps it;
	// alive() counts that as gone.
	waitFor(t, func() bool { return !alive(child, childStart) })
}

func TestSignal(t *testing.T) {
	p, _ := launch(t, `trap 'exit 42' USR1; while :; do sleep 0.05; done`)
	// The trap is installed once the shell runs its first command.
	time.Sleep(200 * time.Millisecond)
	if err := p.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if r := waitResult(t, p); r.ExitCode != 42 {
		t.Fatalf("result = %+v, want exit 42 from the USR1 trap", r)
	}
	if err := p.Signal(syscall.SIGUSR1); err == nil {
		t.Fatal("Signal to an exited task succeeded")
	}
}

// A restarted client reattaches to a running task and can stop it.
func TestReattachRunning(t *testing.T) {
	p, _ := launch(t, `exec sleep 30`)
	p2, err := Reattach(p.State())
	if err != nil {
		t.Fatal(err)
	}
	if p2.Result() != nil {
		t.Fatal("reattached process reports an exit while the task runs")
	}
	if err := p2.Stop(syscall.SIGTERM, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Process{p, p2} {
		if r := waitResult(t, x); r.Signal != int(syscall.SIGTERM) {
			t.Fatalf("result = %+v, want SIGTERM", r)
		}
	}
}

// A task that ended while the client was down is reported with its real
// exit code.
func TestReattachExitedMeanwhile(t *testing.T) {
	p, _ := launch(t, `exit 7`)
	waitResult(t, p)
	p2, err := Reattach(p.State())
	if err != nil {
		t.Fatal(err)
	}
	if r := p2.Result(); r == nil || r.ExitCode != 7 {
		t.Fatalf("reattached result = %+v, want exit code 7", r)
	}
}

// When the supervisor dies the task dies with it, and the exit is
// reported as unknown rather than invented.
func TestSupervisorDeathKillsTask(t *testing.T) {
	p, _ := launch(t, `exec sleep 30`)
	st := p.State()
	if err := syscall.Kill(st.SupervisorPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := waitResult(t, p)
	if r.Error == "" || !strings.Contains(r.Error, "without recording") {
		t.Fatalf("result = %+v, want an unknown-exit error", r)
	}
	waitFor(t, func() bool { return !alive(st.TaskPID, st.TaskStart) })

	p2, err := Reattach(st)
	if err != nil {
		t.Fatal(err)
	}
	if r := p2.Result(); r == nil || r.Error == "" {
		t.Fatalf("reattach after supervisor death = %+v, want an exited process with an error", r)
	}
}

func TestReattachNothingLeft(t *testing.T) {
	_, err := Reattach(State{SupervisorPID: 1 << 22, TaskPID: 1 << 22, Dir: filepath.Join(t.TempDir(), "gone")})
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want ErrNotExist", err)
	}
}

func TestLaunchFailure(t *testing.T) {
	exe, _ := os.Executable()
	spec := &Spec{Command: "/nonexistent/binary", Dir: t.TempDir(), LogDir: t.TempDir(), TaskName: "t", MaxFiles: 1, MaxFileSize: 10}
	_, err := Launch(context.Background(), exe, spec, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/binary") {
		t.Fatalf("err = %v, want the failing command named", err)
	}
}

func TestRunAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching users needs root")
	}
	exe, _ := os.Executable()
	logs := t.TempDir()
	spec := &Spec{
		Command: "/bin/sh", Args: []string{"-c", "id -u; id -g"}, Dir: "/",
		User:   &Credential{UID: 65534, GID: 65534},
		LogDir: logs, TaskName: "t", MaxFiles: 1, MaxFileSize: 1024,
	}
	p, err := Launch(context.Background(), exe, spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if r := waitResult(t, p); r.ExitCode != 0 {
		t.Fatalf("result = %+v", r)
	}
	if got := readLog(t, spec, "stdout"); got != "65534\n65534\n" {
		t.Fatalf("ids = %q, want nobody's", got)
	}
}

func TestLogsDisabled(t *testing.T) {
	exe, _ := os.Executable()
	logs := t.TempDir()
	spec := &Spec{Command: "/bin/sh", Args: []string{"-c", "echo hi"}, Dir: "/", LogDir: logs, TaskName: "t", LogsDisabled: true}
	p, err := Launch(context.Background(), exe, spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if r := waitResult(t, p); r.ExitCode != 0 {
		t.Fatalf("result = %+v", r)
	}
	if entries, _ := os.ReadDir(logs); len(entries) != 0 {
		t.Fatalf("log files written although logs are disabled: %v", entries)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
