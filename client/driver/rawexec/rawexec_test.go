//go:build unix

package rawexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opennomad/nomad/client/allocdir"
	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/driver/executor"
	"github.com/opennomad/nomad/structs"
)

func TestMain(m *testing.M) {
	executor.Init()
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}

// taskConfig builds a task with a real alloc directory.
func taskConfig(t *testing.T, command string, args ...string) *driver.TaskConfig {
	t.Helper()
	root := t.TempDir()
	// Tasks run as another user must be able to reach their directory.
	os.Chmod(root, 0o755)
	os.Chmod(filepath.Dir(root), 0o755)
	ad, err := allocdir.New(root, "alloc1")
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Build(); err != nil {
		t.Fatal(err)
	}
	td, err := ad.TaskDir("web")
	if err != nil {
		t.Fatal(err)
	}
	if err := td.Build(nil); err != nil {
		t.Fatal(err)
	}
	cfgArgs := make([]interface{}, len(args))
	for i, a := range args {
		cfgArgs[i] = a
	}
	return &driver.TaskConfig{
		ID:      "alloc1/web/" + structs.GenerateUUID()[:8],
		AllocID: "alloc1",
		Name:    "web",
		Config:  map[string]interface{}{"command": command, "args": cfgArgs},
		Env:     map[string]string{"PATH": "/usr/bin:/bin", "NOMAD_TASK_NAME": "web"},
		Dirs: driver.TaskDirs{
			Dir: td.Dir, LocalDir: td.LocalDir, SecretsDir: td.SecretsDir, TmpDir: td.TmpDir,
			AllocDir: ad.SharedDir, LogDir: ad.LogDir,
		},
		Logs:     driver.LogConfig{MaxFiles: 2, MaxFileSize: 1 << 20},
		StateDir: filepath.Join(root, "state", "web"),
	}
}

func start(t *testing.T, d *Driver, cfg *driver.TaskConfig) driver.Handle {
	t.Helper()
	h, err := d.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Stop("SIGKILL", 0) })
	return h
}

func wait(t *testing.T, h driver.Handle) *driver.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	r, err := h.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func stdout(t *testing.T, cfg *driver.TaskConfig) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(cfg.Dirs.LogDir, "web.stdout.0"))
	return string(b)
}

func TestFingerprint(t *testing.T) {
	off := New(Config{}).Fingerprint()
	if off.Detected || off.Healthy || !strings.Contains(off.HealthDescription, "driver.raw_exec.enable") {
		t.Errorf("disabled fingerprint = %+v", off)
	}
	on := New(Config{Enabled: true}).Fingerprint()
	if !on.Detected || !on.Healthy || on.Attributes["driver.raw_exec"] != "1" {
		t.Errorf("enabled fingerprint = %+v", on)
	}
}

func TestDisabledRefusesToStart(t *testing.T) {
	_, err := New(Config{}).Start(context.Background(), taskConfig(t, "/bin/true"))
	if !errors.Is(err, driver.ErrDisabled) {
		t.Fatalf("err = %v, want ErrDisabled", err)
	}
}

func TestExitCodes(t *testing.T) {
	d := New(Config{Enabled: true})
	for _, code := range []int{0, 1, 3} {
		cfg := taskConfig(t, "sh", "-c", "exit "+string(rune('0'+code)))
		r := wait(t, start(t, d, cfg))
		if r.ExitCode != code || r.Signal != 0 || r.Successful() != (code == 0) {
			t.Errorf("exit %d: result %+v", code, r)
		}
	}
}

func TestEnvAndWorkingDir(t *testing.T) {
	d := New(Config{Enabled: true})
	cfg := taskConfig(t, "sh", "-c", `echo "$NOMAD_TASK_NAME $(pwd)"`)
	wait(t, start(t, d, cfg))
	if got, want := stdout(t, cfg), "web "+cfg.Dirs.Dir+"\n"; got != want {
		t.Fatalf("stdout = %q, want %q", got, want)
	}
}

func TestRelativeCommandFromTaskDir(t *testing.T) {
	d := New(Config{Enabled: true})
	cfg := taskConfig(t, "local/run.sh")
	script := "#!/bin/sh\necho from-script\n"
	if err := os.WriteFile(filepath.Join(cfg.Dirs.LocalDir, "run.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	wait(t, start(t, d, cfg))
	if got := stdout(t, cfg); got != "from-script\n" {
		t.Fatalf("stdout = %q", got)
	}
}

func TestStopWithKillSignal(t *testing.T) {
	d := New(Config{Enabled: true})
	h := start(t, d, taskConfig(t, "sleep", "30"))
	if err := h.Stop("SIGTERM", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, h); r.Signal != int(syscall.SIGTERM) {
		t.Fatalf("result = %+v, want SIGTERM", r)
	}
	if st := h.Inspect(); st.State != driver.TaskStateExited || st.ExitResult == nil {
		t.Fatalf("Inspect after stop = %+v", st)
	}
}

func TestStopKillTimeout(t *testing.T) {
	d := New(Config{Enabled: true})
	cfg := taskConfig(t, "sh", "-c", `trap "" INT; echo ready; sleep 30`)
	h := start(t, d, cfg)
	deadline := time.Now().Add(10 * time.Second)
	for stdout(t, cfg) == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	begin := time.Now()
	if err := h.Stop("", 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if time.Since(begin) < 200*time.Millisecond {
		t.Fatal("task stopped before its kill timeout although it ignores SIGINT")
	}
	if r := wait(t, h); r.Signal != int(syscall.SIGKILL) {
		t.Fatalf("result = %+v, want SIGKILL after the timeout", r)
	}
}

// A new driver instance (a restarted client) recovers the task from the
// persisted handle and stops it: no duplicate is started.
func TestRecoverAfterClientRestart(t *testing.T) {
	cfg := taskConfig(t, "sleep", "30")
	h := start(t, New(Config{Enabled: true}), cfg)
	saved := h.State().Copy()
	pid := h.Inspect().Attributes["pid"]

	d2 := New(Config{Enabled: true})
	h2, err := d2.Recover(cfg, saved)
	if err != nil {
		t.Fatal(err)
	}
	if got := h2.Inspect(); got.State != driver.TaskStateRunning || got.Attributes["pid"] != pid {
		t.Fatalf("recovered status = %+v, want running pid %s", got, pid)
	}
	if err := h2.Stop("SIGINT", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, h2); r.Signal != int(syscall.SIGINT) {
		t.Fatalf("recovered result = %+v", r)
	}
}

func TestRecoverWrongDriver(t *testing.T) {
	_, err := New(Config{Enabled: true}).Recover(taskConfig(t, "x"), &driver.HandleState{Driver: "exec"})
	if !errors.Is(err, driver.ErrTaskNotFound) {
		t.Fatalf("err = %v, want ErrTaskNotFound", err)
	}
}

func TestBadConfig(t *testing.T) {
	d := New(Config{Enabled: true})
	cases := map[string]map[string]interface{}{
		`"command" is required`:      {"args": []interface{}{"x"}},
		`unknown field "image"`:      {"command": "sleep", "image": "redis"},
		`"no-such-binary-here"`:      {"command": "no-such-binary-here"},
		`"/definitely/not/here/bin"`: {"command": "/definitely/not/here/bin"},
	}
	for want, raw := range cases {
		cfg := taskConfig(t, "")
		cfg.Config = raw
		_, err := d.Start(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %v: err = %v, want containing %s", raw, err, want)
		}
		if driver.IsRecoverable(err) {
			t.Errorf("config %v: a config error must not be retried", raw)
		}
	}
}

func TestRunAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching users needs root")
	}
	d := New(Config{Enabled: true})
	cfg := taskConfig(t, "sh")
	cfg.Config["args"] = []interface{}{"-c", `id -un; touch "$1/ok"`, "sh", cfg.Dirs.LocalDir}
	cfg.User = "nobody"
	if r := wait(t, start(t, d, cfg)); r.ExitCode != 0 {
		t.Fatalf("result = %+v", r)
	}
	if got := stdout(t, cfg); got != "nobody\n" {
		t.Fatalf("user = %q", got)
	}
	if _, err := os.Stat(filepath.Join(cfg.Dirs.LocalDir, "ok")); err != nil {
		t.Fatalf("task could not write its local dir: %v", err)
	}
}
