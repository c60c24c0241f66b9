// Package taskrunner runs one task of an allocation through its life:
// it builds the task's directory, starts it with its driver, waits for it,
// applies the restart policy when it ends, and stops it with its kill
// signal and kill_timeout when asked. Every step is recorded as a Nomad
// task event and the task's state (pending, running, dead) is persisted,
// so that a restarted client reattaches to the task instead of starting
// it twice.
//
// The alloc runner owns task runners: it calls Run in a goroutine per
// task, releases each task with AllowStart when its lifecycle phase
// comes, and stops them with Kill.
package taskrunner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/client/allocdir"
	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/state"
	"github.com/opennomad/nomad/structs"
)

// Clock is the time source of a task runner, injectable for tests.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now().UTC() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Config is what a task runner is built from.
type Config struct {
	Alloc   *structs.Allocation
	Task    *structs.Task
	TaskDir *allocdir.TaskDir
	// Driver runs the task; nil when the client lacks the task's driver
	// (the task then fails with a Driver Failure event).
	Driver driver.Driver
	// DriverErr explains a nil Driver.
	DriverErr error
	// Node is the client's node, for ${node.*}/${attr.*} interpolation.
	Node *structs.Node
	// HostEnv is the client's environment passed to tasks.
	HostEnv map[string]string
	StateDB state.DB
	// StateDir is the driver's private directory for this task.
	StateDir string
	// MaxKillTimeout caps the task's kill_timeout (client option
	// max_kill_timeout); 0 means no cap.
	MaxKillTimeout time.Duration
	Logger         hclog.Logger
	Clock          Clock
	// Jitter returns values in [0, 1) to spread restart delays; nil
	// means math/rand.
	Jitter func() float64
	// OnStateChange is called, from the task runner's goroutines and
	// without its locks held, after the task's state changed. It must not
	// block.
	OnStateChange func()
}

// TaskRunner runs one task. Its exported methods are safe to call from
// any goroutine.
type TaskRunner struct {
	alloc    *structs.Allocation
	task     *structs.Task
	taskDir  *allocdir.TaskDir
	drv      driver.Driver
	drvErr   error
	node     *structs.Node
	hostEnv  map[string]string
	db       state.DB
	stateDir string
	clock    Clock
	logger   hclog.Logger
	onChange func()
	restarts *RestartTracker

	killTimeout time.Duration
	killSignal  string

	// killCtx is cancelled by Kill: no new start, no restart, no wait
	// for a restart delay.
	killCtx    context.Context
	killCancel context.CancelFunc
	// shutdownCtx is cancelled by Shutdown: the runner lets go of the
	// task, which keeps running for a restarted client to reattach to.
	shutdownCtx    context.Context
	shutdownCancel context.CancelFunc

	startCh   chan struct{}
	startOnce sync.Once
	waitCh    chan struct{}

	mu        sync.Mutex
	state     *structs.TaskState
	handle    driver.Handle
	killed    bool
	killEvent *structs.TaskEvent
	restartRq *structs.TaskEvent
	// recovered is set by Restore when a driver handle was reattached;
	// exitedWhileDown when that task had already ended.
	recovered       bool
	exitedWhileDown *driver.ExitResult
	lostErr         error
}

// New builds a task runner. The caller then either records the task as
// new (EmitReceived) or loads its persisted state (Restore), and calls
// Run.
func New(cfg *Config) (*TaskRunner, error) {
	if cfg.Alloc == nil || cfg.Task == nil || cfg.TaskDir == nil || cfg.StateDB == nil {
		return nil, fmt.Errorf("task runner: alloc, task, task dir and state store are required")
	}
	if cfg.Alloc.Job == nil {
		return nil, fmt.Errorf("alloc %s: task runner needs the alloc's job", cfg.Alloc.ID)
	}
	tg := cfg.Alloc.Job.LookupTaskGroup(cfg.Alloc.TaskGroup)
	if tg == nil {
		return nil, fmt.Errorf("alloc %s: job %q has no task group %q", cfg.Alloc.ID, cfg.Alloc.JobID, cfg.Alloc.TaskGroup)
	}
	clock := cfg.Clock
	if clock == nil {
		clock = realClock{}
	}
	jitter := cfg.Jitter
	if jitter == nil {
		jitter = rand.Float64
	}
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	onChange := cfg.OnStateChange
	if onChange == nil {
		onChange = func() {}
	}
	killTimeout := cfg.Task.KillTimeout
	if killTimeout <= 0 {
		killTimeout = structs.DefaultKillTimeout
	}
	if cfg.MaxKillTimeout > 0 && killTimeout > cfg.MaxKillTimeout {
		killTimeout = cfg.MaxKillTimeout
	}
	tr := &TaskRunner{
		alloc:       cfg.Alloc,
		task:        cfg.Task,
		taskDir:     cfg.TaskDir,
		drv:         cfg.Driver,
		drvErr:      cfg.DriverErr,
		node:        cfg.Node,
		hostEnv:     cfg.HostEnv,
		db:          cfg.StateDB,
		stateDir:    cfg.StateDir,
		clock:       clock,
		logger:      logger.With("alloc_id", cfg.Alloc.ID, "task", cfg.Task.Name),
		onChange:    onChange,
		killTimeout: killTimeout,
		killSignal:  cfg.Task.KillSignal,
		startCh:     make(chan struct{}),
		waitCh:      make(chan struct{}),
		state:       &structs.TaskState{State: structs.TaskStatePending},
	}
	tr.restarts = NewRestartTracker(tg.RestartPolicy, cfg.Alloc.Job.Type, cfg.Task.Lifecycle, clock.Now(), jitter)
	tr.killCtx, tr.killCancel = context.WithCancel(context.Background())
	tr.shutdownCtx, tr.shutdownCancel = context.WithCancel(context.Background())
	return tr, nil
}

// Name is the task's name.
func (tr *TaskRunner) Name() string { return tr.task.Name }

// Task is the task being run.
func (tr *TaskRunner) Task() *structs.Task { return tr.task }

// IsLeader reports whether the task is the group's leader.
func (tr *TaskRunner) IsLeader() bool { return tr.task.Leader }

// Lifecycle is the task's lifecycle block, nil for a main task.
func (tr *TaskRunner) Lifecycle() *structs.TaskLifecycleConfig { return tr.task.Lifecycle }

// WaitCh is closed when Run has returned: the task is dead for good or
// the runner was shut down.
func (tr *TaskRunner) WaitCh() <-chan struct{} { return tr.waitCh }

// TaskState returns a copy of the task's state.
func (tr *TaskRunner) TaskState() *structs.TaskState {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.state.Copy()
}

// Handle returns the running instance, or nil.
func (tr *TaskRunner) Handle() driver.Handle {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.handle
}

// AllowStart lets the task start; until then Run only prepares it. The
// alloc runner calls it when the task's lifecycle phase begins.
func (tr *TaskRunner) AllowStart() {
	tr.startOnce.Do(func() { close(tr.startCh) })
}

// Run drives the task until it is dead for good or the runner is shut
// down. Call it once, in its own goroutine.
func (tr *TaskRunner) Run() {
	defer func() {
		close(tr.waitCh)
		// Observers that check WaitCh after a state change must hear
		// about the close too.
		tr.onChange()
	}()

	tr.mu.Lock()
	dead := tr.state.State == structs.TaskStateDead
	recovered, lost, exited := tr.recovered, tr.lostErr, tr.exitedWhileDown
	tr.mu.Unlock()
	switch {
	case dead:
		return
	case lost != nil:
		tr.failLost(lost)
		return
	case exited != nil:
		tr.finishExitedWhileDown(exited)
		return
	case !recovered:
		if !tr.prepare() {
			return
		}
	}
	tr.runLoop()
}

// prepare builds the task's directory and waits for the start signal.
// It returns false when the task ended before starting.
func (tr *TaskRunner) prepare() bool {
	tr.emit("", structs.NewTaskEvent(structs.TaskSetup, tr.clock.Now()).SetMessage("Building Task Directory"))
	if err := tr.taskDir.Build(nil); err != nil {
		ev := structs.NewTaskEvent(structs.TaskSetupFailure, tr.clock.Now()).SetMessage(err.Error()).SetFailsTask()
		ev.SetupError = err.Error()
		tr.emit(structs.TaskStateDead, ev)
		return false
	}
	select {
	case <-tr.startCh:
		return true
	case <-tr.killCtx.Done():
		tr.markKilledBeforeStart()
		return false
	case <-tr.shutdownCtx.Done():
		return false
	}
}

// runLoop starts the task (unless a recovered instance runs), waits for
// it, and restarts it per policy.
func (tr *TaskRunner) runLoop() {
	for {
		h := tr.Handle()
		if h == nil {
			var ok bool
			if h, ok = tr.start(); !ok {
				return
			}
		}

		res, err := h.Wait(tr.shutdownCtx)
		if err != nil {
			// Shutdown: leave the task running for the next client.
			return
		}
		tr.mu.Lock()
		tr.handle = nil
		killed, restartRq := tr.killed, tr.restartRq
		tr.restartRq = nil
		tr.mu.Unlock()

		if killed {
			tr.emit("", terminatedEvent(tr.clock.Now(), res))
			tr.emit(structs.TaskStateDead, structs.NewTaskEvent(structs.TaskKilled, tr.clock.Now()).SetMessage("Task successfully killed"))
			return
		}
		if restartRq != nil {
			// An operator restart is not a failure and not counted.
			tr.emit("", terminatedEvent(tr.clock.Now(), res))
			tr.emit(structs.TaskStatePending, structs.NewTaskEvent(structs.TaskRestarting, tr.clock.Now()).
				SetMessage("Task restarting in 0s").SetRestartReason(restartRq.RestartReason).SetRestartDelay(0))
			continue
		}
		tr.emit("", terminatedEvent(tr.clock.Now(), res))
		if !tr.decide(tr.restarts.OnExit(tr.clock.Now(), res)) {
			return
		}
	}
}

// start launches one instance. It returns false when the task is done
// (start failed for good, or a kill arrived).
func (tr *TaskRunner) start() (driver.Handle, bool) {
	for {
		if tr.killCtx.Err() != nil {
			tr.markKilledBeforeStart()
			return nil, false
		}
		if tr.drv == nil {
			err := tr.drvErr
			if err == nil {
				err = fmt.Errorf("driver %q is not available", tr.task.Driver)
			}
			tr.emit("", structs.NewTaskEvent(structs.TaskDriverFailure, tr.clock.Now()).SetMessage(err.Error()).SetDriverError(err))
			tr.decide(Decision{State: structs.TaskNotRestarting, Reason: ReasonUnrecoverable})
			return nil, false
		}
		cfg := tr.buildTaskConfig()
		mounts, err := hostVolumeMounts(tr.alloc, tr.task, tr.node, tr.taskDir.Dir)
		if err != nil {
			// The node lacks what the task mounts: no restart will
			// change that.
			tr.emit("", structs.NewTaskEvent(structs.TaskSetupFailure, tr.clock.Now()).SetMessage(err.Error()).SetFailsTask())
			tr.decide(Decision{State: structs.TaskNotRestarting, Reason: ReasonUnrecoverable})
			return nil, false
		}
		cfg.Mounts = mounts
		h, err := tr.drv.Start(tr.killCtx, cfg)
		if err == nil {
			tr.mu.Lock()
			killed := tr.killed
			if !killed {
				tr.handle = h
			}
			tr.mu.Unlock()
			if killed {
				// The kill raced with the start; it never saw this
				// instance, so stop it here.
				h.Stop(tr.killSignal, tr.killTimeout)
				tr.emit(structs.TaskStateDead, structs.NewTaskEvent(structs.TaskKilled, tr.clock.Now()).SetMessage("Task successfully killed"))
				return nil, false
			}
			tr.emit(structs.TaskStateRunning, structs.NewTaskEvent(structs.TaskStarted, tr.clock.Now()).SetMessage("Task started by client"))
			return h, true
		}
		if tr.killCtx.Err() != nil {
			tr.markKilledBeforeStart()
			return nil, false
		}
		tr.logger.Warn("task failed to start", "error", err)
		tr.emit("", structs.NewTaskEvent(structs.TaskDriverFailure, tr.clock.Now()).SetMessage(err.Error()).SetDriverError(err))
		if !tr.decide(tr.restarts.OnStartError(tr.clock.Now(), err)) {
			return nil, false
		}
	}
}

// decide applies a restart decision. It returns true when the task is to
// be started again (after the delay, which it waits out).
func (tr *TaskRunner) decide(d Decision) bool {
	switch d.State {
	case structs.TaskTerminated:
		tr.emit(structs.TaskStateDead, nil)
		return false
	case structs.TaskNotRestarting:
		tr.emit(structs.TaskStateDead, structs.NewTaskEvent(structs.TaskNotRestarting, tr.clock.Now()).
			SetMessage(d.Reason).SetRestartReason(d.Reason).SetFailsTask())
		return false
	}
	tr.emit(structs.TaskStatePending, structs.NewTaskEvent(structs.TaskRestarting, tr.clock.Now()).
		SetMessage(fmt.Sprintf("Task restarting in %v", d.Delay)).SetRestartReason(d.Reason).SetRestartDelay(d.Delay))
	select {
	case <-tr.clock.After(d.Delay):
		return true
	case <-tr.killCtx.Done():
		tr.markKilledBeforeStart()
		return false
	case <-tr.shutdownCtx.Done():
		return false
	}
}

// markKilledBeforeStart ends a task that was killed while no instance ran.
func (tr *TaskRunner) markKilledBeforeStart() {
	tr.emit(structs.TaskStateDead, structs.NewTaskEvent(structs.TaskKilled, tr.clock.Now()).SetMessage("Task killed before it was running"))
}

// failLost ends a task whose instance vanished while the client was down.
func (tr *TaskRunner) failLost(err error) {
	reason := "Task could not be found after the client restarted: " + err.Error()
	tr.emit(structs.TaskStateDead, structs.NewTaskEvent(structs.TaskNotRestarting, tr.clock.Now()).
		SetMessage(reason).SetRestartReason(reason).SetFailsTask())
}

// finishExitedWhileDown ends a task that exited while the client was
// down. A task that completed as it should (a batch task exiting 0) is
// complete; any other exit fails it. It is not restarted here: the
// servers decide whether to reschedule the failed allocation.
func (tr *TaskRunner) finishExitedWhileDown(res *driver.ExitResult) {
	tr.emit("", terminatedEvent(tr.clock.Now(), res))
	if res.Successful() && !tr.restarts.restartOnSuccess {
		tr.emit(structs.TaskStateDead, nil)
		return
	}
	reason := "Task exited while the client was not running"
	tr.emit(structs.TaskStateDead, structs.NewTaskEvent(structs.TaskNotRestarting, tr.clock.Now()).
		SetMessage(reason).SetRestartReason(reason).SetFailsTask())
}

// terminatedEvent describes how an instance ended.
func terminatedEvent(now time.Time, res *driver.ExitResult) *structs.TaskEvent {
	ev := structs.NewTaskEvent(structs.TaskTerminated, now).SetExitCode(res.ExitCode).SetSignal(res.Signal).SetMessage(res.String())
	if res.OOMKilled {
		ev.Details["oom_killed"] = "true"
	}
	if res.Err != nil {
		ev.Details["exit_message"] = res.Err.Error()
	}
	return ev
}
