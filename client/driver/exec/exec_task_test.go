//go:build unix

package exec

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opennomad/nomad/client/driver"
)

// A command exec'd into an exec task runs as the task does: its user,
// environment and directory, and its cgroup where the host has them.
func TestExecTask(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running commands as nobody needs root")
	}
	d := New(Config{})
	cfg := taskConfig(t, "-c", "sleep 30")
	cfg.Env["NOMAD_TASK_NAME"] = "web"
	healthy := d.Fingerprint().Healthy
	if healthy {
		h, err := d.Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Stop("SIGKILL", 0) })
	}
	var stdout, stderr bytes.Buffer
	code, err := d.ExecTask(context.Background(), cfg, nil, &driver.ExecOptions{
		Command: []string{"sh", "-c", "id -un; echo $NOMAD_TASK_NAME; pwd; cat /proc/self/cgroup; exit 2"},
		Stdin:   strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	if code != 2 {
		t.Errorf("exit code %d, want 2 (stderr %q)", code, stderr.String())
	}
	lines := strings.Split(stdout.String(), "\n")
	if len(lines) < 3 || lines[0] != DefaultUser || lines[1] != "web" || lines[2] != cfg.Dirs.Dir {
		t.Fatalf("output %q: want user %s, task env, task dir %s", stdout.String(), DefaultUser, cfg.Dirs.Dir)
	}
	if healthy && !strings.Contains(stdout.String(), filepath.Base(cgroupName(cfg))) {
		t.Errorf("command not in the task's cgroup %s: %q", cgroupName(cfg), stdout.String())
	}
	if d.ExecIsolation() != driver.FSIsolationNone {
		t.Errorf("isolation %q: this driver has no chroot", d.ExecIsolation())
	}
}
