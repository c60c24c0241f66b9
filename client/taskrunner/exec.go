package taskrunner

import (
	"context"
	"errors"
	"fmt"

	"github.com/opennomad/nomad/client/driver"
)

// ErrExecUnsupported means the task's driver cannot run commands in its
// tasks.
var ErrExecUnsupported = errors.New("exec is not supported by the task's driver")

// ErrNotRunning means the task has no running instance to exec into.
var ErrNotRunning = errors.New("task is not running")

// execer is the task's driver as one that runs commands in tasks.
func (tr *TaskRunner) execer() (driver.Execer, error) {
	ex, ok := tr.drv.(driver.Execer)
	if !ok {
		return nil, fmt.Errorf("driver %q: %w", tr.task.Driver, ErrExecUnsupported)
	}
	return ex, nil
}

// ExecIsolation is how far the task's driver confines a command exec'd
// into the task.
func (tr *TaskRunner) ExecIsolation() (driver.FSIsolation, error) {
	ex, err := tr.execer()
	if err != nil {
		return "", err
	}
	return ex.ExecIsolation(), nil
}

// Exec runs a command in the running task's environment until it exits
// or ctx ends (which kills it), and returns its exit code.
func (tr *TaskRunner) Exec(ctx context.Context, opts *driver.ExecOptions) (int, error) {
	ex, err := tr.execer()
	if err != nil {
		return 0, err
	}
	h := tr.Handle()
	if h == nil {
		return 0, ErrNotRunning
	}
	tr.logger.Info("executing command in task", "command", firstArg(opts.Command), "tty", opts.Tty)
	return ex.ExecTask(ctx, tr.buildTaskConfig(), h, opts)
}

// firstArg is the executable of a command, for the log: the arguments may
// hold secrets.
func firstArg(cmd []string) string {
	if len(cmd) == 0 {
		return ""
	}
	return cmd[0]
}
