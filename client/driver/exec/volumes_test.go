//go:build linux

package exec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opennomad/nomad/client/driver"
)

// A host volume is bind-mounted at its destination inside the task
// directory, read-only when asked, in the task's own mount namespace: the
// task writes through one mount, cannot write through the read-only one,
// and the host's mount table never shows either.
func TestHostVolumeBindMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	rw, ro := t.TempDir(), t.TempDir()
	for _, d := range []string{rw, ro} {
		os.Chmod(d, 0o777)
	}
	if err := os.WriteFile(filepath.Join(ro, "cert.pem"), []byte("CERT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := New(Config{})
	cfg := taskConfig(t, "-c", `echo hello > data/out.txt && cat certs/cert.pem && if touch certs/x 2>/dev/null; then echo WROTE; else echo refused; fi`)
	cfg.Mounts = []driver.Mount{
		{HostPath: rw, TaskPath: filepath.Join(cfg.Dirs.Dir, "data")},
		{HostPath: ro, TaskPath: filepath.Join(cfg.Dirs.Dir, "certs"), ReadOnly: true},
	}
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
		t.Fatalf("result = %+v, output %q", r, stdout(t, cfg))
	}
	if got := strings.Fields(stdout(t, cfg)); len(got) != 2 || got[0] != "CERT" || got[1] != "refused" {
		t.Fatalf("output %q: want the cert read and the write refused", got)
	}
	b, err := os.ReadFile(filepath.Join(rw, "out.txt"))
	if err != nil || string(b) != "hello\n" {
		t.Fatalf("file written through the mount: %q, %v", b, err)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mounts), cfg.Dirs.Dir) {
		t.Fatalf("the task's mounts leaked into the host's namespace:\n%s", mounts)
	}
	// The mount point the host keeps is an empty directory.
	if entries, err := os.ReadDir(filepath.Join(cfg.Dirs.Dir, "data")); err != nil || len(entries) != 0 {
		t.Fatalf("host side of the mount point: %v, %v", entries, err)
	}
}
