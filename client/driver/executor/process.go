//go:build unix

package executor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Timing of the client's side. Variables so tests can shorten them.
var (
	// handshakeTimeout bounds how long a supervisor may take to start
	// its task.
	handshakeTimeout = 30 * time.Second
	// reattachPoll is how often a reattached client checks whether a
	// supervisor it is not the parent of has exited.
	reattachPoll = 250 * time.Millisecond
	// killWait bounds the wait for a task to disappear after SIGKILL.
	killWait = 10 * time.Second
)

// State is what the client persists to find a task again after a
// restart.
type State struct {
	SupervisorPID   int
	SupervisorStart uint64
	TaskPID         int
	TaskStart       uint64
	// Dir is the task's state directory (spec, result, executor log).
	Dir       string
	StartedAt time.Time
}

// Process is the client's view of one supervised task. Its methods are
// safe for concurrent use.
type Process struct {
	state State

	done   chan struct{}
	once   sync.Once
	result *Result
}

// Launch starts a supervisor for spec, with dir as the task's state
// directory, and returns once the task runs. exe is the binary to run as
// supervisor (normally os.Executable()). A failure to start the task
// (command not found, permission denied) is returned as an error.
func Launch(ctx context.Context, exe string, spec *Spec, dir string) (*Process, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("executor state dir: %w", err)
	}
	// A previous instance of the task may have left its result here.
	if err := os.Remove(filepath.Join(dir, resultFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("executor state dir: %w", err)
	}
	specPath := filepath.Join(dir, specFile)
	if err := writeJSONAtomic(specPath, spec); err != nil {
		return nil, fmt.Errorf("writing executor spec: %w", err)
	}
	logf, err := os.OpenFile(filepath.Join(dir, logFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("executor log: %w", err)
	}
	defer logf.Close()
	hr, hw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("executor handshake pipe: %w", err)
	}
	defer hr.Close()

	cmd := exec.Command(exe, Command, specPath)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{hw}
	// A session of its own: a Ctrl-C on the agent's terminal must not
	// reach the supervisor or, through it, the task.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	hw.Close()
	if err != nil {
		return nil, fmt.Errorf("starting executor %s: %w", exe, err)
	}

	hsCh := make(chan handshake, 1)
	go func() {
		var hs handshake
		line, err := bufio.NewReader(hr).ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, &hs)
		}
		if err != nil {
			hs.Error = fmt.Sprintf("executor ended before starting the task (%v); log: %s", err, logTail(dir))
		}
		hsCh <- hs
	}()
	var hs handshake
	select {
	case hs = <-hsCh:
	case <-ctx.Done():
		hs.Error = "start canceled: " + ctx.Err().Error()
	case <-time.After(handshakeTimeout):
		hs.Error = fmt.Sprintf("executor did not start the task within %v", handshakeTimeout)
	}
	if hs.Error != "" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, errors.New(hs.Error)
	}

	supStart, _ := startTicks(cmd.Process.Pid)
	p := &Process{
		state: State{
			SupervisorPID:   cmd.Process.Pid,
			SupervisorStart: supStart,
			TaskPID:         hs.PID,
			TaskStart:       hs.Start,
			Dir:             dir,
			StartedAt:       time.Now().UTC(),
		},
		done: make(chan struct{}),
	}
	go func() {
		err := cmd.Wait()
		p.finish(err)
	}()
	return p, nil
}

// Reattach finds a task from its persisted state. A live supervisor is
// watched until it exits. A task whose supervisor exited while the client
// was down comes back as an exited Process carrying the recorded result.
// If nothing of the task is left (no state directory), the error wraps
// os.ErrNotExist.
func Reattach(st State) (*Process, error) {
	if st.Dir == "" || st.TaskPID <= 0 {
		return nil, fmt.Errorf("executor state %+v is incomplete: %w", st, os.ErrNotExist)
	}
	p := &Process{state: st, done: make(chan struct{})}
	if alive(st.SupervisorPID, st.SupervisorStart) {
		go func() {
			t := time.NewTicker(reattachPoll)
			defer t.Stop()
			for range t.C {
				if !alive(st.SupervisorPID, st.SupervisorStart) {
					p.finish(nil)
					return
				}
			}
		}()
		return p, nil
	}
	if _, err := os.Stat(st.Dir); errors.Is(err, os.ErrNotExist) {
		if alive(st.TaskPID, st.TaskStart) {
			syscall.Kill(-st.TaskPID, syscall.SIGKILL)
		}
		return nil, fmt.Errorf("executor state dir %s: %w", st.Dir, os.ErrNotExist)
	}
	p.finish(errSupervisorGone)
	return p, nil
}

// finish records the result once the supervisor is gone. Without a
// result file the supervisor died abnormally; its task was killed by the
// parent-death signal, which is made sure of here.
func (p *Process) finish(waitErr error) {
	p.once.Do(func() {
		res, err := readResult(p.state.Dir)
		if err != nil {
			if alive(p.state.TaskPID, p.state.TaskStart) {
				syscall.Kill(-p.state.TaskPID, syscall.SIGKILL)
			}
			msg := errNoResult.Error()
			if waitErr != nil {
				msg += " (" + waitErr.Error() + ")"
			}
			if tail := logTail(p.state.Dir); tail != "" {
				msg += "; log: " + tail
			}
			res = &Result{ExitCode: -1, Error: msg, ExitedAt: time.Now().UTC()}
		}
		p.result = res
		close(p.done)
	})
}

// State returns the persistable state.
func (p *Process) State() State { return p.state }

// Done is closed when the task has exited and its result is known.
func (p *Process) Done() <-chan struct{} { return p.done }

// Result returns the exit, or nil while the task runs.
func (p *Process) Result() *Result {
	select {
	case <-p.done:
		return p.result
	default:
		return nil
	}
}

// Wait blocks until the task exits or ctx is done.
func (p *Process) Wait(ctx context.Context) (*Result, error) {
	select {
	case <-p.done:
		return p.result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Signal sends sig to the task's main process.
func (p *Process) Signal(sig syscall.Signal) error {
	if p.Result() != nil {
		return fmt.Errorf("task pid %d has exited", p.state.TaskPID)
	}
	if err := syscall.Kill(p.state.TaskPID, sig); err != nil {
		return fmt.Errorf("signalling task pid %d: %w", p.state.TaskPID, err)
	}
	return nil
}

// Stop sends sig to the task's process group, waits up to timeout for the
// task to exit, then kills the group. It returns when the task is gone.
func (p *Process) Stop(sig syscall.Signal, timeout time.Duration) error {
	if p.Result() != nil {
		return nil
	}
	if err := p.signalGroup(sig); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
	}
	if err := p.signalGroup(syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("task pid %d still running %v after SIGKILL", p.state.TaskPID, killWait)
	}
}

// signalGroup signals the task's process group (its pid: the task leads
// its own session). A group that is already gone is not an error.
func (p *Process) signalGroup(sig syscall.Signal) error {
	if p.Result() != nil {
		return nil
	}
	err := syscall.Kill(-p.state.TaskPID, sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling task process group %d: %w", p.state.TaskPID, err)
	}
	return nil
}

// logTail returns the last lines of the executor log, for error messages.
func logTail(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, logFile))
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 512 {
		s = s[len(s)-512:]
	}
	return s
}
