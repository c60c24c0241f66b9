package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// enterTaskMounts gives the calling thread a private mount namespace and
// bind-mounts spec's mounts in it; a task started from this thread
// inherits the namespace. The host's namespace never sees the mounts, so
// removing the task directory later can never reach into a volume, and
// the mounts go away with the task's last process.
//
// The thread stays locked and is never returned to the Go scheduler's
// pool (the supervisor runs one task and exits), so no other goroutine
// ever runs in the changed namespace by accident.
func enterTaskMounts(spec *Spec) error {
	if len(spec.Mounts) == 0 {
		return nil
	}
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("new mount namespace: %w", err)
	}
	// Without this, mounts made here would propagate back to the host
	// on systems whose root is a shared mount (systemd's default).
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	for _, m := range spec.Mounts {
		if err := bindMount(m); err != nil {
			return err
		}
	}
	return nil
}

func bindMount(m Mount) error {
	fi, err := os.Stat(m.Source)
	if err != nil {
		return fmt.Errorf("host volume source: %w", err)
	}
	if fi.IsDir() {
		err = os.MkdirAll(m.Target, 0o755)
	} else {
		// A file is mounted over a file.
		if err = os.MkdirAll(filepath.Dir(m.Target), 0o755); err == nil {
			var f *os.File
			if f, err = os.OpenFile(m.Target, os.O_CREATE|os.O_RDONLY, 0o644); err == nil {
				f.Close()
			}
		}
	}
	if err != nil {
		return fmt.Errorf("mount point %s: %w", m.Target, err)
	}
	if err := unix.Mount(m.Source, m.Target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind mounting %s at %s: %w", m.Source, m.Target, err)
	}
	if m.ReadOnly {
		// A bind mount takes MS_RDONLY only on a remount.
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		if err := unix.Mount("", m.Target, "", flags, ""); err != nil {
			return fmt.Errorf("making %s read-only: %w", m.Target, err)
		}
	}
	return nil
}
