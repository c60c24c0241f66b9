//go:build unix

package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opennomad/nomad/client/driver"
)

// TaskHandle adapts a supervised Process to driver.Handle, for drivers
// that run processes (raw_exec, exec).
type TaskHandle struct {
	driverName string
	id         string
	p          *Process
}

var _ driver.Handle = (*TaskHandle)(nil)

// NewSpec fills the parts of a Spec every process driver shares from the
// task's configuration: the resolved command, environment, working
// directory (the task directory) and log settings.
func NewSpec(cfg *driver.TaskConfig, command string, args []string) (*Spec, error) {
	path, err := ResolveCommand(command, cfg)
	if err != nil {
		return nil, err
	}
	env := make([]string, 0, len(cfg.Env))
	for _, k := range slices.Sorted(maps.Keys(cfg.Env)) {
		env = append(env, k+"="+cfg.Env[k])
	}
	return &Spec{
		Command:      path,
		Args:         args,
		Env:          env,
		Dir:          cfg.Dirs.Dir,
		LogDir:       cfg.Dirs.LogDir,
		TaskName:     cfg.Name,
		LogsDisabled: cfg.Logs.Disabled,
		MaxFiles:     cfg.Logs.MaxFiles,
		MaxFileSize:  cfg.Logs.MaxFileSize,
	}, nil
}

// BindMounts are the task's host volumes as the supervisor bind-mounts
// them.
func BindMounts(cfg *driver.TaskConfig) []Mount {
	if len(cfg.Mounts) == 0 {
		return nil
	}
	out := make([]Mount, len(cfg.Mounts))
	for i, m := range cfg.Mounts {
		out[i] = Mount{Source: m.HostPath, Target: m.TaskPath, ReadOnly: m.ReadOnly}
	}
	return out
}

// ResolveCommand finds the executable of a task: an absolute path is
// used as is, a relative path with a '/' is taken from the task
// directory, and a bare name is searched in the task's PATH.
func ResolveCommand(command string, cfg *driver.TaskConfig) (string, error) {
	if command == "" {
		return "", errors.New(`task config: "command" is required`)
	}
	var candidates []string
	switch {
	case filepath.IsAbs(command):
		candidates = []string{command}
	case strings.Contains(command, "/"):
		candidates = []string{filepath.Join(cfg.Dirs.Dir, command)}
	default:
		pathEnv, ok := cfg.Env["PATH"]
		if !ok {
			pathEnv = os.Getenv("PATH")
		}
		for _, dir := range filepath.SplitList(pathEnv) {
			if dir == "" {
				dir = "."
			}
			candidates = append(candidates, filepath.Join(dir, command))
		}
	}
	for _, c := range candidates {
		fi, err := os.Stat(c)
		if err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return c, nil
		}
	}
	return "", fmt.Errorf("command %q: no executable found (looked in %s)", command, strings.Join(candidates, ", "))
}

// StartTask launches spec under a supervisor and wraps it in a handle.
func StartTask(ctx context.Context, driverName, exe string, cfg *driver.TaskConfig, spec *Spec) (*TaskHandle, error) {
	p, err := Launch(ctx, exe, spec, cfg.StateDir)
	if err != nil {
		return nil, err
	}
	return &TaskHandle{driverName: driverName, id: cfg.ID, p: p}, nil
}

// RecoverTask reattaches to a task from its persisted handle state.
func RecoverTask(driverName string, st *driver.HandleState) (*TaskHandle, error) {
	if st == nil || st.Driver != driverName {
		return nil, fmt.Errorf("handle state is not a %s handle: %w", driverName, driver.ErrTaskNotFound)
	}
	var ps State
	if err := json.Unmarshal(st.Data, &ps); err != nil {
		return nil, fmt.Errorf("decoding %s handle of task %s: %w", driverName, st.TaskID, err)
	}
	p, err := Reattach(ps)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("task %s: %w: %w", st.TaskID, driver.ErrTaskNotFound, err)
		}
		return nil, err
	}
	return &TaskHandle{driverName: driverName, id: st.TaskID, p: p}, nil
}

// ID returns the task instance ID.
func (h *TaskHandle) ID() string { return h.id }

// Process exposes the supervised process (pids, result).
func (h *TaskHandle) Process() *Process { return h.p }

// State returns the persistable handle.
func (h *TaskHandle) State() *driver.HandleState {
	st := h.p.State()
	data, _ := json.Marshal(st)
	return &driver.HandleState{Driver: h.driverName, TaskID: h.id, StartedAt: st.StartedAt, Data: data}
}

// Wait blocks until the task exits.
func (h *TaskHandle) Wait(ctx context.Context) (*driver.ExitResult, error) {
	res, err := h.p.Wait(ctx)
	if err != nil {
		return nil, err
	}
	return exitResult(res), nil
}

func exitResult(r *Result) *driver.ExitResult {
	out := &driver.ExitResult{ExitCode: r.ExitCode, Signal: r.Signal, OOMKilled: r.OOMKilled}
	if r.Error != "" {
		out.Err = errors.New(r.Error)
	}
	return out
}

// Signal sends a signal to the task's main process.
func (h *TaskHandle) Signal(sig string) error {
	s, err := driver.ParseSignal(sig)
	if err != nil {
		return err
	}
	return h.p.Signal(s)
}

// Stop stops the task's process group: signal, then SIGKILL after timeout.
func (h *TaskHandle) Stop(signal string, timeout time.Duration) error {
	s, err := driver.ParseSignal(signal)
	if err != nil {
		return err
	}
	return h.p.Stop(s, timeout)
}

// Inspect reports the task's status and pid.
func (h *TaskHandle) Inspect() *driver.TaskStatus {
	st := h.p.State()
	ts := &driver.TaskStatus{
		ID:         h.id,
		State:      driver.TaskStateRunning,
		StartedAt:  st.StartedAt,
		Attributes: map[string]string{"pid": strconv.Itoa(st.TaskPID)},
	}
	if r := h.p.Result(); r != nil {
		ts.State = driver.TaskStateExited
		ts.CompletedAt = r.ExitedAt
		ts.ExitResult = exitResult(r)
	}
	return ts
}
