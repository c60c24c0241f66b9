// Package childproc runs the processes the harnesses start (agents, node
// simulators, load generators): each in its own process group, which the
// kernel kills if the harness dies first, so a crashed run leaves nothing
// behind, with its output appended to a log file the harness can wait on.
package childproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Proc is one child process.
type Proc struct {
	// Name names it in errors; LogPath is where its output goes.
	Name    string
	LogPath string

	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs bin with args, its output appended to logPath (a restarted
// process keeps appending to the same log).
func Start(name, logPath, bin string, args ...string) (*Proc, error) {
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
	p := &Proc{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process ID.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Running reports whether the process has not exited.
func (p *Proc) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Signal sends sig to the process group.
func (p *Proc) Signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.Pid(), sig)
}

// Stop sends sig, waits up to grace for the exit, then SIGKILLs the
// group. A stopped (SIGSTOP) process is continued first so that it can
// exit. Stopping an exited process does nothing.
func (p *Proc) Stop(sig syscall.Signal, grace time.Duration) {
	if !p.Running() {
		return
	}
	p.Signal(syscall.SIGCONT)
	p.Signal(sig)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	p.Signal(syscall.SIGKILL)
	<-p.done
}

// WaitLog waits until the log has a line containing want and returns
// that line; it fails when the process exits first or ctx ends.
func (p *Proc) WaitLog(ctx context.Context, want string) (string, error) {
	for {
		if buf, err := os.ReadFile(p.LogPath); err == nil {
			for _, line := range strings.Split(string(buf), "\n") {
				if strings.Contains(line, want) {
					return line, nil
				}
			}
		}
		if !p.Running() {
			return "", fmt.Errorf("%s exited before logging %q; see %s", p.Name, want, p.LogPath)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%s did not log %q: %w", p.Name, want, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
