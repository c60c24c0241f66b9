//go:build unix

package client

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// A pipe a task made would block a reader until a writer came, and a
// device could be read without end: neither is served as a file.
func TestAllocFS_ReadRefusesNonRegularFiles(t *testing.T) {
	c, a := runningMockAlloc(t)
	dir := c.allocs.Runner(a.ID).AllocDir().Dir
	must.NoError(t, syscall.Mkfifo(filepath.Join(dir, "alloc", "data", "pipe"), 0o600))
	done := make(chan error, 1)
	go func() {
		_, err := c.ReadFile(a.ID, "alloc/data/pipe", 0, 0)
		done <- err
	}()
	select {
	case err := <-done:
		must.ErrorIs(t, err, ErrInvalid)
		must.EqError(t, err, `file "alloc/data/pipe" is not a regular file`)
	case <-time.After(10 * time.Second):
		t.Fatal("reading a pipe blocked")
	}
}
