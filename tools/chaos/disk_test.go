package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/shoenig/test/must"
)

// The full-disk fault leaves no byte free under the server's Raft
// directory, and freeing it gives the space back.
func TestFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	s := &server{name: "server-1", dir: t.TempDir()}
	must.NoError(t, mountRaftDisk(s))
	defer unmountRaftDisk(s)

	must.ErrorContains(t, fillDisk(s), "keeps no Raft log")
	must.NoError(t, os.MkdirAll(filepath.Join(s.raftDir(), "wal"), 0o700))
	must.NoError(t, fillDisk(s))
	err := os.WriteFile(filepath.Join(s.raftDir(), "wal", "segment"), make([]byte, 1<<20), 0o600)
	must.True(t, errors.Is(err, syscall.ENOSPC), must.Sprint(err))
	must.NoError(t, freeDisk(s))
	must.NoError(t, os.WriteFile(filepath.Join(s.raftDir(), "wal", "segment"), make([]byte, 1<<20), 0o600))
}
