//go:build unix

package rawexec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/opennomad/nomad/client/driver"
)

// A raw_exec task finds its host volume as a link at the destination in
// its directory, writes through it, and a restart makes the link again.
func TestHostVolumeLinks(t *testing.T) {
	d := New(Config{Enabled: true})
	vol := t.TempDir()
	cfg := taskConfig(t, "sh", "-c", `echo hello > srv/data/out.txt`)
	cfg.Mounts = []driver.Mount{{HostPath: vol, TaskPath: filepath.Join(cfg.Dirs.Dir, "srv", "data")}}
	for run := 0; run < 2; run++ {
		if r := wait(t, start(t, d, cfg)); !r.Successful() {
			t.Fatalf("run %d: result %+v", run, r)
		}
	}
	if b, err := os.ReadFile(filepath.Join(vol, "out.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("file on the host path: %q, %v", b, err)
	}
	// Removing the task directory removes the link, not the volume.
	if err := os.RemoveAll(cfg.Dirs.Dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(vol, "out.txt")); err != nil {
		t.Fatalf("volume content gone with the task directory: %v", err)
	}

	// Something of the task's own at the destination is not replaced.
	cfg = taskConfig(t, "/bin/true")
	os.MkdirAll(filepath.Join(cfg.Dirs.Dir, "busy"), 0o755)
	cfg.Mounts = []driver.Mount{{HostPath: vol, TaskPath: filepath.Join(cfg.Dirs.Dir, "busy")}}
	if _, err := d.Start(t.Context(), cfg); err == nil {
		t.Fatal("started over a directory of the task")
	}
}
