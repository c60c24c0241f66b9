// Package executor runs a task's process under a small supervisor process
// so that the task outlives the client agent.
//
// The client does not start a task directly. It re-executes its own
// binary as a supervisor ("<binary> executor <spec.json>") in a session of
// its own; the supervisor starts the task, feeds the task's stdout and
// stderr into log rotators, waits for it, and writes how it ended to a
// result file before exiting. Because the supervisor is the task's
// parent and owns the reading end of its output pipes:
//
//   - a client crash or restart neither kills the task nor blocks its
//     output: the supervisor keeps draining the pipes into the log files;
//   - a restarted client reattaches by pid (checked against the process
//     start time, so a recycled pid is never mistaken for the task) and
//     still learns the exit code, even of a task that ended while the
//     client was down;
//   - if the supervisor itself dies, the kernel kills the task
//     (parent-death signal), so no task is left running without a log
//     reader or anyone to report it.
//
// Any binary that launches tasks through this package must call Init
// first thing in main (and test binaries in TestMain).
package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Command is the argument that makes a binary act as a supervisor.
const Command = "executor"

// Files kept in a task's state directory.
const (
	specFile   = "spec.json"
	resultFile = "result.json"
	logFile    = "executor.log"
)

// Spec is what the supervisor runs, written by the client as JSON.
type Spec struct {
	// Command is an absolute path; Args exclude the command itself.
	Command string
	Args    []string
	// Env is the complete environment, "KEY=value".
	Env []string
	// Dir is the working directory.
	Dir string
	// User, when set, is the identity the task runs as (the client must
	// be root to switch).
	User *Credential
	// Cgroup, when set, is the cgroup v2 directory the task is started
	// in; the supervisor reports OOM kills from it and removes it after
	// the task exits.
	Cgroup string

	// Mounts are bind-mounted into a mount namespace of the task's own
	// before it starts (Linux, as root): the host sees none of them.
	Mounts []Mount

	// LogDir holds the rotated output files <TaskName>.stdout.<n> and
	// <TaskName>.stderr.<n>.
	LogDir       string
	TaskName     string
	LogsDisabled bool
	MaxFiles     int
	MaxFileSize  int64
}

// Mount binds the host's Source at Target (a path inside the task
// directory), read-only when asked.
type Mount struct {
	Source   string
	Target   string
	ReadOnly bool
}

// Credential is a numeric Unix identity.
type Credential struct {
	UID    uint32
	GID    uint32
	Groups []uint32
}

// Result is how the task ended, as recorded by the supervisor.
type Result struct {
	ExitCode  int
	Signal    int
	OOMKilled bool
	// Error is set when the exit could not be observed normally.
	Error    string
	ExitedAt time.Time
}

// handshake is the one line the supervisor writes to the client once the
// task started (or failed to).
type handshake struct {
	PID   int    `json:",omitempty"`
	Start uint64 `json:",omitempty"`
	Error string `json:",omitempty"`
}

// Init turns the process into a supervisor when it was started as one
// (os.Args[1] == Command) and exits when the supervised task is done.
// Otherwise it returns immediately. Call it before anything else in main.
func Init() {
	if len(os.Args) < 3 || os.Args[1] != Command {
		return
	}
	os.Exit(supervise(os.Args[2]))
}

// writeJSONAtomic writes v to path through a temporary file, fsync and
// rename, so that a reader never sees a half-written file.
func writeJSONAtomic(path string, v interface{}) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return werr
	}
	return os.Rename(tmp.Name(), path)
}

// readResult loads the result file of a task's state directory.
func readResult(dir string) (*Result, error) {
	b, err := os.ReadFile(filepath.Join(dir, resultFile))
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", filepath.Join(dir, resultFile), err)
	}
	return &r, nil
}

// errNoResult marks a supervisor that ended without a result file.
var errNoResult = errors.New("executor exited without recording the task's exit")
