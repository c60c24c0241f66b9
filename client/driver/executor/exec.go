//go:build unix

package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"

	"github.com/opennomad/nomad/client/driver"
)

// execDrainTimeout bounds how long an exec'd command's output is still
// read after the command exited: a background child that keeps the
// output open must not hold the session forever.
var execDrainTimeout = time.Second

// ExecSpec is the part of a task's Spec a command exec'd into it shares:
// its environment and working directory (the task directory). Drivers add
// the identity and cgroup.
func ExecSpec(cfg *driver.TaskConfig) *Spec {
	env := make([]string, 0, len(cfg.Env))
	for _, k := range slices.Sorted(maps.Keys(cfg.Env)) {
		env = append(env, k+"="+cfg.Env[k])
	}
	return &Spec{Env: env, Dir: cfg.Dirs.Dir, TaskName: cfg.Name}
}

// RunExec runs a command (nomad alloc exec) with the environment, working
// directory, identity and cgroup of spec, the task's spec: it is a child
// of the client, not of the task's supervisor, and lives only as long as
// ctx. It returns the command's exit code (128+n for signal n).
func RunExec(ctx context.Context, spec *Spec, opts *driver.ExecOptions) (int, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return 0, errors.New("command is not present")
	}
	path, err := resolveExec(opts.Command[0], spec)
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, path, opts.Command[1:]...)
	cmd.Args[0] = opts.Command[0]
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.WaitDelay = execDrainTimeout
	// The command leads a session of its own, so that killing it reaches
	// everything it started.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

	var cgroupFD *os.File
	if spec.Cgroup != "" {
		if cgroupFD, err = os.Open(spec.Cgroup); err != nil {
			return 0, fmt.Errorf("opening the task's cgroup: %w", err)
		}
		defer cgroupFD.Close()
	}
	attr := execSysProcAttr(spec, cgroupFD)
	if opts.Tty {
		return runWithTTY(cmd, attr, opts)
	}
	cmd.SysProcAttr = attr
	cmd.Stdout, cmd.Stderr = opts.Stdout, opts.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", opts.Command[0], err)
	}
	// Not waited for: the operator's stdin may stay open after the
	// command ended.
	go func() {
		if opts.Stdin != nil {
			io.Copy(stdin, opts.Stdin)
		}
		stdin.Close()
	}()
	return execExit(cmd, cmd.Wait())
}

// runWithTTY runs cmd on a new pseudo-terminal that is its controlling
// terminal; the terminal's output goes to opts.Stdout.
func runWithTTY(cmd *exec.Cmd, attr *syscall.SysProcAttr, opts *driver.ExecOptions) (int, error) {
	attr.Setctty = true
	attr.Ctty = 0 // the child's stdin, the terminal
	tty, err := pty.StartWithAttrs(cmd, nil, attr)
	if err != nil {
		return 0, fmt.Errorf("starting %s on a terminal: %w", opts.Command[0], err)
	}
	// Resizes use the terminal's descriptor, so they stop before it is
	// closed: the resizer is told to end, and the close waits for it.
	stopResize, resized := make(chan struct{}), make(chan struct{})
	defer func() {
		close(stopResize)
		<-resized
		tty.Close()
	}()
	go func() {
		defer close(resized)
		for {
			select {
			case <-stopResize:
				return
			case size, ok := <-opts.ResizeCh:
				if !ok {
					return
				}
				pty.Setsize(tty, &pty.Winsize{Rows: uint16(size.Height), Cols: uint16(size.Width)})
			}
		}
	}()
	if opts.Stdin != nil {
		go io.Copy(tty, opts.Stdin)
	}
	copied := make(chan struct{})
	go func() {
		// Ends with EIO once every holder of the terminal closed it.
		io.Copy(opts.Stdout, tty)
		close(copied)
	}()
	werr := cmd.Wait()
	select {
	case <-copied:
	case <-time.After(execDrainTimeout):
	}
	return execExit(cmd, werr)
}

// execExit turns the end of cmd into an exit code.
func execExit(cmd *exec.Cmd, werr error) (int, error) {
	if cmd.ProcessState == nil {
		return 0, werr
	}
	code, _ := exitStatus(cmd.ProcessState)
	return code, nil
}

// resolveExec finds the command's executable as the task's own command
// is found: in the task's PATH, or relative to the task directory.
func resolveExec(command string, spec *Spec) (string, error) {
	env := make(map[string]string, len(spec.Env))
	for _, kv := range spec.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return ResolveCommand(command, &driver.TaskConfig{Env: env, Dirs: driver.TaskDirs{Dir: spec.Dir}})
}
