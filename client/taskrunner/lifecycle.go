package taskrunner

import (
	"context"
	"fmt"

	"github.com/opennomad/nomad/structs"
)

// Kill stops the task for good: no restart follows. reason, when set, is
// recorded first (for example a Sibling Task Failed event). A running
// instance gets the task's kill signal and, after kill_timeout, SIGKILL.
// Kill returns when the task is dead or ctx is done; calling it again
// only waits.
func (tr *TaskRunner) Kill(ctx context.Context, reason *structs.TaskEvent) error {
	tr.mu.Lock()
	first := !tr.killed
	tr.killed = true
	h := tr.handle
	tr.mu.Unlock()

	if first {
		if reason != nil {
			tr.emit("", reason)
		}
		tr.killCancel()
		if h != nil {
			sig := tr.killSignal
			if sig == "" {
				sig = "SIGINT"
			}
			tr.emit("", structs.NewTaskEvent(structs.TaskKilling, tr.clock.Now()).
				SetMessage(fmt.Sprintf("Sent %s. Waiting %v before force killing", sig, tr.killTimeout)).
				SetKillTimeout(tr.killTimeout))
			if err := h.Stop(tr.killSignal, tr.killTimeout); err != nil {
				ev := structs.NewTaskEvent(structs.TaskKilling, tr.clock.Now()).SetMessage("Kill failed: " + err.Error())
				ev.KillError = err.Error()
				tr.emit("", ev)
			}
		}
	}
	select {
	case <-tr.waitCh:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("task %q: waiting for the kill: %w", tr.task.Name, ctx.Err())
	}
}

// Restart stops the running instance and starts a new one at once,
// without counting it against the restart policy (`alloc restart`).
func (tr *TaskRunner) Restart(ctx context.Context, reason string) error {
	tr.mu.Lock()
	h, killed := tr.handle, tr.killed
	if h != nil && !killed {
		tr.restartRq = structs.NewTaskEvent(structs.TaskRestartSignal, tr.clock.Now()).SetRestartReason(reason)
	}
	tr.mu.Unlock()
	if killed {
		return fmt.Errorf("task %q is being killed", tr.task.Name)
	}
	if h == nil {
		return fmt.Errorf("task %q is not running", tr.task.Name)
	}
	tr.emit("", structs.NewTaskEvent(structs.TaskRestartSignal, tr.clock.Now()).SetMessage(reason).SetRestartReason(reason))
	return h.Stop(tr.killSignal, tr.killTimeout)
}

// Signal sends a signal to the running instance (`alloc signal`).
func (tr *TaskRunner) Signal(sig string) error {
	h := tr.Handle()
	if h == nil {
		return fmt.Errorf("task %q is not running", tr.task.Name)
	}
	ev := structs.NewTaskEvent(structs.TaskSignaling, tr.clock.Now()).SetMessage("Task being sent signal " + sig)
	ev.Signalling = sig
	tr.emit("", ev)
	if err := h.Signal(sig); err != nil {
		return fmt.Errorf("task %q: %w", tr.task.Name, err)
	}
	return nil
}

// Shutdown lets go of the task without stopping it: the client is
// shutting down and a restarted client will reattach. Run returns soon
// after.
func (tr *TaskRunner) Shutdown() {
	tr.shutdownCancel()
}
