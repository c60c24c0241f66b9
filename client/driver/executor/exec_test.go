//go:build unix

package executor

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opennomad/nomad/client/driver"
)

// syncBuffer is a bytes.Buffer safe for the command's copy goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func execSpec(t *testing.T) *Spec {
	return &Spec{Env: []string{"PATH=/usr/bin:/bin", "NOMAD_TASK_NAME=web"}, Dir: t.TempDir()}
}

func TestRunExec(t *testing.T) {
	cases := []struct {
		name       string
		command    []string
		stdin      string
		tty        bool
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "exit code", command: []string{"/bin/sh", "-c", "echo hi; echo oops >&2; exit 3"}, wantCode: 3, wantStdout: "hi\n", wantStderr: "oops\n"},
		{name: "success", command: []string{"true"}, wantCode: 0},
		{name: "stdin round trip", command: []string{"cat"}, stdin: "line one\nline two\n", wantStdout: "line one\nline two\n"},
		{name: "task env visible", command: []string{"sh", "-c", "echo $NOMAD_TASK_NAME"}, wantStdout: "web\n"},
		{name: "task dir is the working directory", command: []string{"sh", "-c", "test -f marker && echo here"}, wantStdout: "here\n"},
		{name: "signal death", command: []string{"sh", "-c", "kill -TERM $$"}, wantCode: 128 + int(syscall.SIGTERM)},
		{name: "tty", command: []string{"sh", "-c", "test -t 0 && echo terminal"}, tty: true, wantStdout: "terminal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := execSpec(t)
			os.WriteFile(filepath.Join(spec.Dir, "marker"), nil, 0o644)
			var stdout, stderr syncBuffer
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			code, err := RunExec(ctx, spec, &driver.ExecOptions{
				Command: tc.command, Tty: tc.tty, Stdin: strings.NewReader(tc.stdin), Stdout: &stdout, Stderr: &stderr,
			})
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d", code, tc.wantCode)
			}
			got := stdout.String()
			if tc.tty {
				got = strings.TrimSpace(got) // the terminal turns \n into \r\n
			}
			if got != tc.wantStdout {
				t.Errorf("stdout %q, want %q", got, tc.wantStdout)
			}
			if stderr.String() != tc.wantStderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}

func TestRunExec_Refusals(t *testing.T) {
	for _, cmd := range [][]string{nil, {""}, {"no-such-command-here"}} {
		_, err := RunExec(context.Background(), execSpec(t), &driver.ExecOptions{Command: cmd, Stdout: io.Discard, Stderr: io.Discard})
		if err == nil {
			t.Errorf("command %q: no error", cmd)
		}
	}
}

// Cancelling the context (the operator left) kills the command and what
// it started, even when it ignores stdin.
func TestRunExec_KilledOnCancel(t *testing.T) {
	spec := execSpec(t)
	pidFile := filepath.Join(spec.Dir, "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	stdin, stdinW := io.Pipe()
	defer stdinW.Close()
	done := make(chan int, 1)
	go func() {
		code, _ := RunExec(ctx, spec, &driver.ExecOptions{
			Command: []string{"sh", "-c", "sleep 300 & echo $! > child.pid; wait"},
			Stdin:   stdin, Stdout: io.Discard, Stderr: io.Discard,
		})
		done <- code
	}()
	var childPID string
	deadline := time.Now().Add(10 * time.Second)
	for childPID == "" && time.Now().Before(deadline) {
		b, _ := os.ReadFile(pidFile)
		childPID = strings.TrimSpace(string(b))
		time.Sleep(10 * time.Millisecond)
	}
	if childPID == "" {
		t.Fatal("the command did not start")
	}
	cancel()
	select {
	case code := <-done:
		if code != 128+int(syscall.SIGKILL) {
			t.Errorf("exit code %d, want %d", code, 128+int(syscall.SIGKILL))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command outlived its session")
	}
	// The background child went with its session's process group.
	deadline = time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + childPID + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("background child %s still runs", childPID)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A terminal session whose operator keeps resizing it while the command
// ends: the resizes stop before the terminal is closed, and the session
// ends although the operator never closed its resize channel.
func TestRunExec_TTYResizesWhileEnding(t *testing.T) {
	resize := make(chan driver.TerminalSize)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			select {
			case resize <- driver.TerminalSize{Height: 20 + i%5, Width: 80}:
			case <-stop:
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	code, err := RunExec(ctx, execSpec(t), &driver.ExecOptions{
		Command: []string{"true"}, Tty: true, ResizeCh: resize, Stdout: io.Discard, Stderr: io.Discard,
	})
	if err != nil || code != 0 {
		t.Fatalf("code %d, error %v", code, err)
	}
}
