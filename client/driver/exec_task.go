package driver

import (
	"context"
	"io"
)

// Execer is a driver that can run a command inside the environment of a
// running task (nomad alloc exec). Drivers that cannot do so do not
// implement it, and exec into their tasks is refused.
type Execer interface {
	// ExecTask runs opts.Command in the task described by cfg (rebuilt
	// by the caller as for Start) while the task's instance h runs. It
	// blocks until the command exits and returns its exit code: 128+n
	// when signal n ended it. Cancelling ctx kills the command and
	// everything it started. An error means the command could not be
	// run (or its end could not be observed).
	ExecTask(ctx context.Context, cfg *TaskConfig, h Handle, opts *ExecOptions) (int, error)

	// ExecIsolation reports whether a command run by ExecTask is confined
	// to the task's own filesystem. Without it the command sees the
	// node's filesystem, and an operator needs alloc-node-exec as well as
	// alloc-exec to run one.
	ExecIsolation() FSIsolation
}

// FSIsolation is how far a driver confines a task's view of the node's
// filesystem.
type FSIsolation string

// Filesystem isolation levels.
const (
	// FSIsolationNone: the task sees the node's filesystem (raw_exec,
	// and this project's exec driver, which has no chroot).
	FSIsolationNone FSIsolation = "none"
	// FSIsolationChroot: the task runs in a chroot of its task directory.
	FSIsolationChroot FSIsolation = "chroot"
	// FSIsolationImage: the task sees only its image (containers, and the
	// in-memory mock driver, which touches nothing of the node).
	FSIsolationImage FSIsolation = "image"
)

// ExecOptions are a command to run in a task and its streams.
type ExecOptions struct {
	// Command is the executable and its arguments; Command[0] is looked
	// up in the task's PATH when it has no '/'.
	Command []string
	// Tty runs the command on a pseudo-terminal: Stdout carries both of
	// its output streams and ResizeCh its window sizes.
	Tty      bool
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	ResizeCh <-chan TerminalSize
}

// TerminalSize is the size of the operator's terminal.
type TerminalSize struct {
	Height int
	Width  int
}

// ExitCodeForSignal is the exit code a shell reports for a process ended
// by signal sig.
func ExitCodeForSignal(sig int) int { return 128 + sig }
