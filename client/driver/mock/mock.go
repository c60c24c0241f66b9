// Package mock is mock_driver: a driver whose tasks are simulated inside
// the client, for tests and for simulating large clusters without real
// processes. What a task does is set by its config block:
//
//	run_for                 duration; the task exits by itself after it.
//	                        Unset or 0: it exits at once, as Nomad's
//	                        mock_driver; a long-running task sets a
//	                        duration longer than it is needed.
//	exit_code               exit code when run_for elapses (default 0).
//	exit_signal             signal number reported when run_for elapses.
//	exit_err_msg            the driver loses the task: its exit carries
//	                        this error.
//	oom_killed              the exit is reported as an OOM kill.
//	start_error             Start fails with this message.
//	start_error_recoverable the start error may be retried by the
//	                        restart policy (default false: fails the task).
//	start_block_for         Start takes this long (abortable).
//	kill_after              how long the task takes to exit after its kill
//	                        signal; at kill_timeout it is "SIGKILLed".
//	signal_error            Signal fails with this message.
//	stdout_string           written to the task's stdout log at start...
//	stdout_repeat           ...and this many more times...
//	stdout_repeat_duration  ...this far apart, while the task runs.
//	exec_command            what a command exec'd into the task does, an
//	                        object with run_for, exit_code, stdout_string
//	                        and stderr_string (see ExecCommand). Unset:
//	                        exec is refused. The command "showinput"
//	                        always echoes its stdin back.
//
// Recover rebuilds a task from its persisted config and start time: a
// task whose run_for has passed is reported exited, any other resumes
// with the time it has left. A restarted client therefore sees the same
// task it left, as it would with a real process.
package mock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/logmon"
	"github.com/opennomad/nomad/structs"
)

// Name is the driver's name in job files.
const Name = "mock_driver"

// TaskConfig is the task's `config` block; see the package comment.
type TaskConfig struct {
	RunFor                *driver.Duration `json:"run_for"`
	ExitCode              int              `json:"exit_code"`
	ExitSignal            int              `json:"exit_signal"`
	ExitErrMsg            string           `json:"exit_err_msg"`
	OOMKilled             bool             `json:"oom_killed"`
	StartError            string           `json:"start_error"`
	StartErrorRecoverable bool             `json:"start_error_recoverable"`
	StartBlockFor         driver.Duration  `json:"start_block_for"`
	KillAfter             driver.Duration  `json:"kill_after"`
	SignalError           string           `json:"signal_error"`
	StdoutString          string           `json:"stdout_string"`
	StdoutRepeat          int              `json:"stdout_repeat"`
	StdoutRepeatDuration  driver.Duration  `json:"stdout_repeat_duration"`
	ExecCommand           *ExecCommand     `json:"exec_command"`
}

// ValidateConfig checks a task's config block as Start decodes it, so a
// server can report a bad block when a job is validated.
func ValidateConfig(raw map[string]interface{}) error {
	var tc TaskConfig
	return driver.DecodeConfig(raw, &tc)
}

// runFor is how long the task runs: run_for, 0 when unset.
func (c *TaskConfig) runFor() time.Duration {
	if c.RunFor == nil {
		return 0
	}
	return time.Duration(*c.RunFor)
}

// Driver is mock_driver.
type Driver struct{}

var _ driver.Driver = (*Driver)(nil)

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name returns "mock_driver".
func (d *Driver) Name() string { return Name }

// Fingerprint is always healthy.
func (d *Driver) Fingerprint() *structs.DriverInfo {
	return &structs.DriverInfo{
		Detected:          true,
		Healthy:           true,
		HealthDescription: "Healthy",
		Attributes:        map[string]string{"driver.mock_driver": "1"},
	}
}

// Start simulates starting the task.
func (d *Driver) Start(ctx context.Context, cfg *driver.TaskConfig) (driver.Handle, error) {
	var tc TaskConfig
	if err := driver.DecodeConfig(cfg.Config, &tc); err != nil {
		return nil, err
	}
	if tc.StartBlockFor > 0 {
		select {
		case <-time.After(time.Duration(tc.StartBlockFor)):
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: start canceled: %w", Name, ctx.Err())
		}
	}
	if tc.StartError != "" {
		err := errors.New(tc.StartError)
		if tc.StartErrorRecoverable {
			err = driver.Recoverable(err)
		}
		return nil, err
	}
	return d.run(cfg, &tc, time.Now().UTC(), true)
}

// persisted is the handle state.
type persisted struct {
	Config    TaskConfig
	StartedAt time.Time
}

// Recover re-simulates a task from its persisted config and start time.
func (d *Driver) Recover(cfg *driver.TaskConfig, st *driver.HandleState) (driver.Handle, error) {
	if st == nil || st.Driver != Name {
		return nil, fmt.Errorf("handle state is not a %s handle: %w", Name, driver.ErrTaskNotFound)
	}
	var p persisted
	if err := json.Unmarshal(st.Data, &p); err != nil {
		return nil, fmt.Errorf("decoding %s handle of task %s: %w", Name, st.TaskID, err)
	}
	cfg.ID = st.TaskID
	// Output was written when the task started; a recovered task only
	// continues its run.
	h, err := d.run(cfg, &p.Config, p.StartedAt, false)
	if err != nil {
		return nil, err
	}
	if !time.Now().Before(p.StartedAt.Add(p.Config.runFor())) {
		// It ended while the client was down: report it exited already,
		// as a real process's recorded exit would be.
		<-h.done
	}
	return h, nil
}

func (d *Driver) run(cfg *driver.TaskConfig, tc *TaskConfig, startedAt time.Time, fresh bool) (*Handle, error) {
	h := &Handle{
		id:        cfg.ID,
		cfg:       *tc,
		startedAt: startedAt,
		done:      make(chan struct{}),
		stopCh:    make(chan struct{}),
	}
	if !cfg.Logs.Disabled && cfg.Dirs.LogDir != "" {
		for _, stream := range []string{"stdout", "stderr"} {
			rot, err := logmon.NewFileRotator(cfg.Dirs.LogDir, cfg.Name+"."+stream, max(cfg.Logs.MaxFiles, 1), max(cfg.Logs.MaxFileSize, 1))
			if err != nil {
				h.closeLogs()
				return nil, fmt.Errorf("%s: %w", Name, err)
			}
			h.logs = append(h.logs, rot)
		}
	}
	if fresh && tc.StdoutString != "" && len(h.logs) > 0 {
		h.logs[0].Write([]byte(tc.StdoutString))
	}
	go h.loop()
	return h, nil
}

// Handle is one simulated task.
type Handle struct {
	id        string
	cfg       TaskConfig
	startedAt time.Time
	logs      []*logmon.FileRotator

	stopOnce sync.Once
	stopCh   chan struct{} // closed when the kill signal arrives
	stopSig  int           // written before stopCh is closed
	stopIn   time.Duration // how long the task takes to obey

	mu      sync.Mutex
	signals []string
	result  *driver.ExitResult
	endedAt time.Time
	done    chan struct{}
}

var _ driver.Handle = (*Handle)(nil)

// loop lives for the task's lifetime: it writes repeated output and ends
// the task when run_for elapses or after a kill.
func (h *Handle) loop() {
	runFor := time.After(max(time.Until(h.startedAt.Add(h.cfg.runFor())), 0))
	var tick <-chan time.Time
	repeats := h.cfg.StdoutRepeat
	if repeats > 0 && h.cfg.StdoutRepeatDuration > 0 && len(h.logs) > 0 {
		t := time.NewTicker(time.Duration(h.cfg.StdoutRepeatDuration))
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-tick:
			h.logs[0].Write([]byte(h.cfg.StdoutString))
			if repeats--; repeats <= 0 {
				tick = nil
			}
		case <-runFor:
			res := &driver.ExitResult{ExitCode: h.cfg.ExitCode, Signal: h.cfg.ExitSignal, OOMKilled: h.cfg.OOMKilled}
			if h.cfg.ExitErrMsg != "" {
				res.Err = errors.New(h.cfg.ExitErrMsg)
			}
			h.finish(res)
			return
		case <-h.stopCh:
			select {
			case <-time.After(h.stopIn):
			case <-runFor:
			}
			sig := h.stopSig
			h.finish(&driver.ExitResult{ExitCode: 128 + sig, Signal: sig})
			return
		}
	}
}

func (h *Handle) finish(res *driver.ExitResult) {
	h.mu.Lock()
	h.result, h.endedAt = res, time.Now().UTC()
	h.mu.Unlock()
	h.closeLogs()
	close(h.done)
}

func (h *Handle) closeLogs() {
	for _, l := range h.logs {
		l.Close()
	}
}

// ID returns the task instance ID.
func (h *Handle) ID() string { return h.id }

// State returns the persistable handle.
func (h *Handle) State() *driver.HandleState {
	data, _ := json.Marshal(persisted{Config: h.cfg, StartedAt: h.startedAt})
	return &driver.HandleState{Driver: Name, TaskID: h.id, StartedAt: h.startedAt, Data: data}
}

// Wait blocks until the simulated task exits.
func (h *Handle) Wait(ctx context.Context) (*driver.ExitResult, error) {
	select {
	case <-h.done:
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Signal records the signal, or fails with signal_error.
func (h *Handle) Signal(sig string) error {
	if _, err := driver.ParseSignal(sig); err != nil {
		return err
	}
	if h.exited() {
		return fmt.Errorf("task %s has exited", h.id)
	}
	if h.cfg.SignalError != "" {
		return errors.New(h.cfg.SignalError)
	}
	h.mu.Lock()
	h.signals = append(h.signals, sig)
	h.mu.Unlock()
	return nil
}

// Stop delivers the kill signal; the task exits kill_after later, or is
// killed at timeout.
func (h *Handle) Stop(signal string, timeout time.Duration) error {
	s, err := driver.ParseSignal(signal)
	if err != nil {
		return err
	}
	if h.exited() {
		return nil
	}
	h.stopOnce.Do(func() {
		h.stopSig, h.stopIn = int(s), time.Duration(h.cfg.KillAfter)
		if h.stopIn >= timeout {
			h.stopSig, h.stopIn = 9, timeout // SIGKILL at the timeout
		}
		close(h.stopCh)
	})
	<-h.done
	return nil
}

func (h *Handle) exited() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// Inspect reports the simulated task; attribute "signals" lists the
// signals it received.
func (h *Handle) Inspect() *driver.TaskStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := &driver.TaskStatus{
		ID:         h.id,
		State:      driver.TaskStateRunning,
		StartedAt:  h.startedAt,
		Attributes: map[string]string{"signals": strings.Join(h.signals, ","), "received": strconv.Itoa(len(h.signals))},
	}
	if h.result != nil {
		st.State = driver.TaskStateExited
		st.CompletedAt = h.endedAt
		st.ExitResult = h.result
	}
	return st
}
