//go:build unix

package exec

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/client/allocdir"
	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/driver/cgroup"
	"github.com/opennomad/nomad/client/driver/executor"
	"github.com/opennomad/nomad/structs"
)

func TestMain(m *testing.M) {
	executor.Init()
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}

func taskConfig(t *testing.T, args ...string) *driver.TaskConfig {
	t.Helper()
	root := t.TempDir()
	// The task runs as nobody and must be able to reach its directory.
	os.Chmod(root, 0o755)
	os.Chmod(filepath.Dir(root), 0o755)
	ad, _ := allocdir.New(root, structs.GenerateUUID())
	if err := ad.Build(); err != nil {
		t.Fatal(err)
	}
	td, _ := ad.TaskDir("web")
	if err := td.Build(nil); err != nil {
		t.Fatal(err)
	}
	cfgArgs := make([]interface{}, len(args))
	for i, a := range args {
		cfgArgs[i] = a
	}
	return &driver.TaskConfig{
		ID:        "t/" + structs.GenerateUUID()[:8],
		AllocID:   filepath.Base(ad.Dir),
		Name:      "web",
		Config:    map[string]interface{}{"command": "/bin/sh", "args": cfgArgs},
		Env:       map[string]string{"PATH": "/usr/bin:/bin"},
		Resources: driver.Resources{CPUShares: 500, MemoryMB: 64},
		Dirs: driver.TaskDirs{Dir: td.Dir, LocalDir: td.LocalDir, SecretsDir: td.SecretsDir,
			TmpDir: td.TmpDir, AllocDir: ad.SharedDir, LogDir: ad.LogDir},
		Logs:     driver.LogConfig{MaxFiles: 2, MaxFileSize: 1 << 20},
		StateDir: filepath.Join(root, "state"),
	}
}

func waitExit(t *testing.T, h driver.Handle) *driver.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := h.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func stdout(t *testing.T, cfg *driver.TaskConfig) string {
	b, _ := os.ReadFile(filepath.Join(cfg.Dirs.LogDir, "web.stdout.0"))
	return string(b)
}

// The fingerprint must tell the truth about the host: healthy exactly
// when task cgroups can be made, and otherwise say why.
func TestFingerprintMatchesHost(t *testing.T) {
	d := New(Config{})
	fp := d.Fingerprint()
	_, cgErr := cgroup.Detect("")
	switch {
	case os.Geteuid() != 0:
		if fp.Healthy || !strings.Contains(fp.HealthDescription, "root") {
			t.Fatalf("non-root fingerprint = %+v", fp)
		}
	case cgErr != nil:
		if fp.Healthy || !fp.Detected || !strings.Contains(fp.HealthDescription, cgErr.Error()) {
			t.Fatalf("fingerprint = %+v, want unhealthy because %v", fp, cgErr)
		}
		t.Logf("exec unhealthy on this host, as reported: %s", fp.HealthDescription)
	default:
		if !fp.Healthy || fp.Attributes["driver.exec"] != "1" {
			t.Fatalf("fingerprint = %+v, want healthy", fp)
		}
	}
}

func TestUnhealthyRefusesToStart(t *testing.T) {
	d := New(Config{})
	if d.Fingerprint().Healthy {
		t.Skip("exec is healthy on this host")
	}
	_, err := d.Start(context.Background(), taskConfig(t, "-c", "true"))
	if err == nil || !strings.Contains(err.Error(), "unhealthy") {
		t.Fatalf("Start on an unhealthy host = %v, want a refusal", err)
	}
}

// The launch path below the cgroup step: the task leads its own session
// and runs as nobody. Limits are covered by TestResourceLimits where the
// host supports them.
func TestLaunchIdentityAndSession(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running tasks as nobody needs root")
	}
	d := New(Config{})
	cfg := taskConfig(t, "-c", `id -un; echo $$; cut -d' ' -f6 /proc/$$/stat; touch "$NOMAD_TASK_DIR/ok"`)
	cfg.Env["NOMAD_TASK_DIR"] = cfg.Dirs.LocalDir
	var tc TaskConfig
	if err := driver.DecodeConfig(cfg.Config, &tc); err != nil {
		t.Fatal(err)
	}
	spec, err := d.prepare(cfg, &tc)
	if err != nil {
		t.Fatal(err)
	}
	h, err := d.launch(context.Background(), cfg, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Stop("SIGKILL", 0) })
	if r := waitExit(t, h); !r.Successful() {
		t.Fatalf("result = %+v", r)
	}
	lines := strings.Fields(stdout(t, cfg))
	if len(lines) != 3 || lines[0] != "nobody" || lines[1] != lines[2] {
		t.Fatalf("output %q: want user nobody and session id == pid", lines)
	}
	if _, err := os.Stat(filepath.Join(cfg.Dirs.LocalDir, "ok")); err != nil {
		t.Fatalf("nobody could not write its task dir: %v", err)
	}
}

func TestResourceLimits(t *testing.T) {
	d := New(Config{})
	if fp := d.Fingerprint(); !fp.Healthy {
		t.Skipf("host cannot enforce cgroup v2 limits, so they are not tested here: %s", fp.HealthDescription)
	}
	cfg := taskConfig(t, "-c", `cat /proc/self/cgroup; sleep 30`)
	h, err := d.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Stop("SIGKILL", 0) })
	dir := filepath.Join(d.cg.Parent(), cgroupName(cfg))
	mem, err := os.ReadFile(filepath.Join(dir, "memory.max"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(mem)); got != strconv.Itoa(64<<20) {
		t.Errorf("memory.max = %s, want %d", got, 64<<20)
	}
	w, _ := os.ReadFile(filepath.Join(dir, "cpu.weight"))
	if got := strings.TrimSpace(string(w)); got != strconv.FormatInt(cgroup.CPUWeight(500), 10) {
		t.Errorf("cpu.weight = %s", got)
	}
	if err := h.Stop("SIGTERM", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	waitExit(t, h)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("task cgroup %s left behind: %v", dir, err)
	}

	// Exceeding the memory limit gets the task OOM killed, and reported.
	oom := taskConfig(t, "-c", `x=$(head -c 200000000 /dev/zero | tr '\0' a); echo survived`)
	oom.Resources.MemoryMB = 16
	h, err = d.Start(context.Background(), oom)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Stop("SIGKILL", 0) })
	if r := waitExit(t, h); !r.OOMKilled {
		t.Fatalf("result = %+v, want OOM killed", r)
	}
}
