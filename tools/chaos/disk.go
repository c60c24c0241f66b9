package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// raftDir is where a server keeps its Raft log, snapshots and stores.
func (s *server) raftDir() string { return filepath.Join(s.dir, "data", "server", "raft") }

// mountRaftDisk puts the server's Raft directory on a small tmpfs of its
// own, so that a full-disk fault fills that disk and nothing else. It
// needs root (mount). A process kill, the other faults' crash, loses
// nothing a tmpfs would keep.
func mountRaftDisk(s *server) error {
	if err := os.MkdirAll(s.raftDir(), 0o700); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", s.raftDir(), "tmpfs", 0, "size=256m,mode=0700"); err != nil {
		return fmt.Errorf("mounting a tmpfs for %s's Raft log (full-disk faults need root; run with -full-disks 0 otherwise): %w", s.name, err)
	}
	return nil
}

// unmountRaftDisk undoes mountRaftDisk once the server has stopped.
func unmountRaftDisk(s *server) {
	_ = syscall.Unmount(s.raftDir(), syscall.MNT_DETACH)
}

// fillPath is the file that fills a server's Raft disk.
func fillPath(s *server) string { return filepath.Join(s.raftDir(), "chaos-fill") }

// fillDisk takes every free byte of the server's Raft disk.
func fillDisk(s *server) error {
	// The server must really keep its log there, or the fill would
	// fill nothing that matters.
	if _, err := os.Stat(filepath.Join(s.raftDir(), "wal")); err != nil {
		return fmt.Errorf("%s keeps no Raft log in %s: %w", s.name, s.raftDir(), err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(s.raftDir(), &st); err != nil {
		return err
	}
	f, err := os.Create(fillPath(s))
	if err != nil {
		return err
	}
	defer f.Close()
	// The server keeps writing while the fill is made, so the free space
	// measured may be gone by the time it is taken: on ENOSPC the fill
	// goes on in halves until not even a page is left.
	var off int64
	for size := int64(st.Bavail) * st.Bsize; size >= 4096; {
		err := syscall.Fallocate(int(f.Fd()), 0, off, size)
		switch {
		case err == nil:
			off += size
		case errors.Is(err, syscall.ENOSPC):
			size /= 2
		default:
			return fmt.Errorf("filling %s's Raft disk: %w", s.name, err)
		}
	}
	return nil
}

// freeDisk removes the fill.
func freeDisk(s *server) error { return os.Remove(fillPath(s)) }
