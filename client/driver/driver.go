// Package driver defines the seam between the client's task runners and
// the things that actually run a task: a plain process (raw_exec), an
// isolated process (exec), or an in-memory simulation (mock_driver).
//
// A task runner calls Start to get a Handle, waits on it, and stops it
// with the task's kill signal and kill_timeout. The Handle's State is
// persisted by the client, so that a restarted client can call Recover
// and reattach to a task that kept running while it was down, instead of
// starting a duplicate.
package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/opennomad/nomad/structs"
)

// Driver runs tasks of one kind. A driver value is shared by every task
// runner of a client: all methods may be called concurrently.
type Driver interface {
	// Name is the value of a task's `driver` field this driver serves.
	Name() string

	// Fingerprint reports whether the driver can run tasks on this host
	// and the node attributes it contributes. The client calls it at
	// startup and periodically; it must be cheap and must not block on
	// running tasks.
	Fingerprint() *structs.DriverInfo

	// Start launches a task and returns once it runs. The error wraps
	// ErrRecoverable when a later attempt may succeed (the restart policy
	// then applies); any other error fails the task for good. Cancelling
	// ctx aborts a start that is still in progress.
	Start(ctx context.Context, cfg *TaskConfig) (Handle, error)

	// Recover reattaches to a task started by an earlier incarnation of
	// the client, from the state its Handle reported. cfg is rebuilt by
	// the caller exactly as for Start. A task that exited meanwhile is
	// recovered as a Handle whose Wait returns at once with its exit (when
	// the driver still knows it). Recover fails with an error wrapping
	// ErrTaskNotFound when nothing of the task is left to reattach to.
	Recover(cfg *TaskConfig, state *HandleState) (Handle, error)
}

// Handle is one running (or finished) instance of a task. Methods may be
// called concurrently from any goroutine.
type Handle interface {
	// ID is the instance ID given in TaskConfig.ID.
	ID() string

	// State returns what the client must persist to Recover the handle.
	State() *HandleState

	// Wait blocks until the task exits and returns how, or until ctx is
	// done (then it returns ctx.Err()). Any number of callers may wait.
	Wait(ctx context.Context) (*ExitResult, error)

	// Signal delivers a signal (by name, "SIGHUP") to the task's main
	// process. It fails when the task has exited.
	Signal(sig string) error

	// Stop asks the task to exit with signal (the task's kill_signal, or
	// SIGINT when empty), waits up to timeout, then kills it and
	// everything it started. It returns once the task has exited;
	// stopping an exited task is a no-op.
	Stop(signal string, timeout time.Duration) error

	// Inspect returns a snapshot of the task's status.
	Inspect() *TaskStatus
}

// TaskConfig is everything a driver needs to start one task instance.
type TaskConfig struct {
	// ID identifies this instance (a new one per restart):
	// "<alloc-id>/<task>/<random>".
	ID        string
	AllocID   string
	Namespace string
	JobName   string
	Group     string
	Name      string

	// Config is the task's driver configuration, already interpolated.
	// Drivers decode it with DecodeConfig.
	Config map[string]interface{}
	// Env is the task's full environment.
	Env map[string]string
	// User is the user to run as; empty means the driver's default.
	User string

	Resources Resources
	Dirs      TaskDirs
	Logs      LogConfig
	// Mounts are the host volumes the task mounts (volume_mount blocks),
	// resolved on this node.
	Mounts []Mount

	// StateDir is a directory private to the driver for this task,
	// outside anything the task can see, that survives client restarts.
	StateDir string
}

// Resources is what the scheduler granted the task.
type Resources struct {
	// CPUShares is CPU in MHz.
	CPUShares   int64
	MemoryMB    int64
	MemoryMaxMB int64
}

// Mount is one host volume a task sees: the host's HostPath appears at
// TaskPath, a host path inside the task directory (the task's
// destination taken relative to its directory, as if the task directory
// were the task's root).
type Mount struct {
	HostPath string
	TaskPath string
	ReadOnly bool
}

// TaskDirs are the host paths of the task's directories.
type TaskDirs struct {
	Dir        string
	LocalDir   string
	SecretsDir string
	TmpDir     string
	AllocDir   string
	LogDir     string
}

// LogConfig says where and how much of the task's output is kept: files
// <LogDir>/<task>.stdout.<n> and .stderr.<n>.
type LogConfig struct {
	Disabled    bool
	MaxFiles    int
	MaxFileSize int64
}

// HandleState is the persisted form of a Handle. Data is opaque to
// everyone but the driver named in Driver.
type HandleState struct {
	Driver    string
	TaskID    string
	StartedAt time.Time
	Data      []byte
}

// Copy returns a deep copy.
func (h *HandleState) Copy() *HandleState {
	if h == nil {
		return nil
	}
	c := *h
	c.Data = append([]byte(nil), h.Data...)
	return &c
}

// ExitResult is how a task instance ended.
type ExitResult struct {
	ExitCode int
	// Signal is the signal that ended the process, 0 when it exited.
	Signal    int
	OOMKilled bool
	// Err is set when the driver lost track of the task and cannot say
	// how it ended.
	Err error
}

// Successful reports an exit with code 0, no signal, no OOM kill and no
// driver error.
func (r *ExitResult) Successful() bool {
	return r.ExitCode == 0 && r.Signal == 0 && !r.OOMKilled && r.Err == nil
}

// String renders the result the way task events describe it.
func (r *ExitResult) String() string {
	s := fmt.Sprintf("Exit Code: %d", r.ExitCode)
	if r.Signal != 0 {
		s += fmt.Sprintf(", Signal: %d", r.Signal)
	}
	if r.OOMKilled {
		s += ", OOM Killed"
	}
	if r.Err != nil {
		s += ", Exit Message: " + r.Err.Error()
	}
	return s
}

// Task status values reported by Inspect.
const (
	TaskStateRunning = "running"
	TaskStateExited  = "exited"
)

// TaskStatus is a snapshot of one task instance.
type TaskStatus struct {
	ID          string
	State       string
	StartedAt   time.Time
	CompletedAt time.Time
	ExitResult  *ExitResult
	// Attributes are driver specific ("pid").
	Attributes map[string]string
}

// ErrRecoverable marks a start failure that a later attempt may not hit.
var ErrRecoverable = errors.New("recoverable")

// ErrTaskNotFound means Recover found nothing of the task.
var ErrTaskNotFound = errors.New("task not found")

// ErrDisabled means the driver is turned off in the client configuration.
var ErrDisabled = errors.New("driver disabled")

// Recoverable wraps err so that IsRecoverable reports true.
func Recoverable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w (%w)", err, ErrRecoverable)
}

// IsRecoverable reports whether a start error may be retried.
func IsRecoverable(err error) bool { return errors.Is(err, ErrRecoverable) }
