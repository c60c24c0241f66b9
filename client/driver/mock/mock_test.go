package mock

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/client/driver"
)

func cfg(t *testing.T, c map[string]interface{}) *driver.TaskConfig {
	return &driver.TaskConfig{
		ID: "a/t/1", Name: "t", Config: c,
		Dirs: driver.TaskDirs{LogDir: t.TempDir()},
		Logs: driver.LogConfig{MaxFiles: 2, MaxFileSize: 1 << 10},
	}
}

func wait(t *testing.T, h driver.Handle) *driver.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := h.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBehaviours(t *testing.T) {
	cases := []struct {
		name     string
		config   map[string]interface{}
		startErr string
		recov    bool
		want     driver.ExitResult
		wantErr  string
	}{
		{name: "exits 0 after run_for", config: map[string]interface{}{"run_for": "10ms"}},
		{name: "no run_for: exits at once, as Nomad's", config: map[string]interface{}{}},
		{name: "no run_for, exit code", config: map[string]interface{}{"exit_code": 2}, want: driver.ExitResult{ExitCode: 2}},
		{name: "exit code", config: map[string]interface{}{"run_for": "1ms", "exit_code": 3}, want: driver.ExitResult{ExitCode: 3}},
		{name: "signal and oom", config: map[string]interface{}{"run_for": "1ms", "exit_code": 137, "exit_signal": 9, "oom_killed": true},
			want: driver.ExitResult{ExitCode: 137, Signal: 9, OOMKilled: true}},
		{name: "lost task", config: map[string]interface{}{"run_for": "1ms", "exit_err_msg": "lost"}, wantErr: "lost"},
		{name: "start error", config: map[string]interface{}{"start_error": "boom"}, startErr: "boom"},
		{name: "recoverable start error", config: map[string]interface{}{"start_error": "busy", "start_error_recoverable": true}, startErr: "busy", recov: true},
		{name: "unknown key", config: map[string]interface{}{"run_forr": "1s"}, startErr: `unknown field "run_forr"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := New().Start(context.Background(), cfg(t, tc.config))
			if tc.startErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.startErr) || driver.IsRecoverable(err) != tc.recov {
					t.Fatalf("start err = %v (recoverable %v), want %q recoverable=%v", err, driver.IsRecoverable(err), tc.startErr, tc.recov)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := wait(t, h)
			if tc.wantErr != "" {
				if r.Err == nil || r.Err.Error() != tc.wantErr {
					t.Fatalf("exit err = %v, want %q", r.Err, tc.wantErr)
				}
				return
			}
			if r.ExitCode != tc.want.ExitCode || r.Signal != tc.want.Signal || r.OOMKilled != tc.want.OOMKilled || r.Err != nil {
				t.Fatalf("result = %+v, want %+v", r, tc.want)
			}
		})
	}
}

func TestStopAndKillAfter(t *testing.T) {
	cases := []struct {
		name      string
		killAfter string
		timeout   time.Duration
		signal    int
	}{
		{"obeys the kill signal", "", time.Second, 2},
		{"slow but within the timeout", "20ms", time.Second, 15},
		{"killed at the timeout", "10s", 30 * time.Millisecond, 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := map[string]interface{}{"run_for": "1h"}
			if tc.killAfter != "" {
				c["kill_after"] = tc.killAfter
			}
			h, err := New().Start(context.Background(), cfg(t, c))
			if err != nil {
				t.Fatal(err)
			}
			sig := map[int]string{2: "SIGINT", 15: "SIGTERM", 9: "SIGTERM"}[tc.signal]
			if err := h.Stop(sig, tc.timeout); err != nil {
				t.Fatal(err)
			}
			if r := wait(t, h); r.Signal != tc.signal || r.ExitCode != 128+tc.signal {
				t.Fatalf("result = %+v, want signal %d", r, tc.signal)
			}
			if err := h.Stop("SIGINT", time.Second); err != nil {
				t.Fatalf("second Stop: %v", err)
			}
		})
	}
}

func TestStartBlockForIsAbortable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := New().Start(ctx, cfg(t, map[string]interface{}{"start_block_for": "10s"}))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the start aborted", err)
	}
}

func TestSignals(t *testing.T) {
	h, err := New().Start(context.Background(), cfg(t, map[string]interface{}{"run_for": "1h"}))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop("SIGKILL", 0)
	h.Signal("SIGHUP")
	h.Signal("SIGUSR1")
	if got := h.Inspect().Attributes["signals"]; got != "SIGHUP,SIGUSR1" {
		t.Fatalf("signals = %q", got)
	}
	if err := h.Signal("SIGNOPE"); err == nil {
		t.Fatal("unknown signal accepted")
	}
	h2, _ := New().Start(context.Background(), cfg(t, map[string]interface{}{"run_for": "1h", "signal_error": "nope"}))
	defer h2.Stop("SIGKILL", 0)
	if err := h2.Signal("SIGHUP"); err == nil || err.Error() != "nope" {
		t.Fatalf("signal_error: %v", err)
	}
}

func TestStdout(t *testing.T) {
	c := cfg(t, map[string]interface{}{"run_for": "200ms", "stdout_string": "hi\n", "stdout_repeat": 2, "stdout_repeat_duration": "10ms"})
	h, err := New().Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	wait(t, h)
	b, err := os.ReadFile(filepath.Join(c.Dirs.LogDir, "t.stdout.0"))
	if err != nil || string(b) != "hi\nhi\nhi\n" {
		t.Fatalf("stdout = %q, %v", b, err)
	}
}

// A recovered task continues with the time it had left, or is reported
// exited when its run_for passed while the client was down.
func TestRecover(t *testing.T) {
	d := New()
	h, err := d.Start(context.Background(), cfg(t, map[string]interface{}{"run_for": "300ms", "exit_code": 4}))
	if err != nil {
		t.Fatal(err)
	}
	st := h.State()
	h2, err := New().Recover(cfg(t, nil), st)
	if err != nil {
		t.Fatal(err)
	}
	if h2.Inspect().State != driver.TaskStateRunning || h2.ID() != "a/t/1" {
		t.Fatalf("recovered %+v", h2.Inspect())
	}
	if r := wait(t, h2); r.ExitCode != 4 {
		t.Fatalf("recovered result = %+v", r)
	}

	// Pretend the client was down past the task's end.
	var p persisted
	decode(t, st.Data, &p)
	p.StartedAt = p.StartedAt.Add(-time.Hour)
	st.Data = encode(t, p)
	h3, err := New().Recover(cfg(t, nil), st)
	if err != nil {
		t.Fatal(err)
	}
	if r := wait(t, h3); r.ExitCode != 4 {
		t.Fatalf("result of a task that ended while down = %+v", r)
	}
	if _, err := New().Recover(cfg(t, nil), &driver.HandleState{Driver: "raw_exec"}); !errors.Is(err, driver.ErrTaskNotFound) {
		t.Fatalf("foreign handle: %v", err)
	}
}
func decode(t *testing.T, b []byte, v interface{}) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func encode(t *testing.T, v interface{}) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
