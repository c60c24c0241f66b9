package childproc

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A child logs, is waited on through its log, survives a stall and is
// stopped; waiting on an exited child's log fails at once.
func TestProc(t *testing.T) {
	log := filepath.Join(t.TempDir(), "child.log")
	p, err := Start("child", log, "/bin/sh", "-c", "echo ready at once; exec sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	line, err := p.WaitLog(ctx, "ready")
	if err != nil || line != "ready at once" {
		t.Fatalf("WaitLog = %q, %v", line, err)
	}
	p.Signal(syscall.SIGSTOP)
	if !p.Running() {
		t.Fatal("a stalled child is still running")
	}
	// Stop continues the stalled child so that SIGTERM ends it.
	p.Stop(syscall.SIGTERM, 5*time.Second)
	if p.Running() {
		t.Fatal("running after Stop")
	}
	p.Stop(syscall.SIGTERM, time.Second) // again: nothing to do
	if _, err := p.WaitLog(ctx, "never"); err == nil || !strings.Contains(err.Error(), "exited before logging") {
		t.Fatalf("WaitLog on an exited child: %v", err)
	}
}
