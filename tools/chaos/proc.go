package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// proc is one child process (a server or a node simulator) in its own
// process group; the kernel kills it if the harness dies first, so a
// crashed run leaves nothing behind.
type proc struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
}

// startProc runs bin with args, its output appended to logPath (a
// restarted server keeps appending to the same log).
func startProc(name, logPath, bin string, args ...string) (*proc, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// running reports whether the process has not exited.
func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// signal sends sig to the process group.
func (p *proc) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.pid(), sig)
}

// stop sends sig, waits up to grace for the exit, then SIGKILLs. A
// stopped (SIGSTOP) process is continued first so that it can exit.
func (p *proc) stop(sig syscall.Signal, grace time.Duration) {
	if !p.running() {
		return
	}
	p.signal(syscall.SIGCONT)
	p.signal(sig)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	p.signal(syscall.SIGKILL)
	<-p.done
}

// waitLog waits until the log has a line containing want.
func (p *proc) waitLog(ctx context.Context, want string) error {
	for {
		if buf, err := os.ReadFile(p.logPath); err == nil && strings.Contains(string(buf), want) {
			return nil
		}
		if !p.running() {
			return fmt.Errorf("%s exited before logging %q; see %s", p.name, want, p.logPath)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not log %q: %w", p.name, want, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
