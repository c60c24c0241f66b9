package taskrunner

import (
	"errors"
	"fmt"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/client/state"
	"github.com/opennomad/nomad/structs"
)

// maxTaskEvents is how many events a task keeps, oldest dropped first.
const maxTaskEvents = 10

// emit records an event and/or a state transition ("" keeps the state),
// persists the result and notifies the alloc runner.
func (tr *TaskRunner) emit(newState string, ev *structs.TaskEvent) {
	tr.mu.Lock()
	st := tr.state
	now := tr.clock.Now()
	if ev != nil {
		st.Events = append(st.Events, ev)
		if extra := len(st.Events) - maxTaskEvents; extra > 0 {
			st.Events = append([]*structs.TaskEvent(nil), st.Events[extra:]...)
		}
		if ev.FailsTask {
			st.Failed = true
		}
		if ev.Type == structs.TaskRestarting {
			st.Restarts++
			st.LastRestart = now
		}
	}
	if newState != "" && newState != st.State {
		switch newState {
		case structs.TaskStateRunning:
			st.StartedAt = now
		case structs.TaskStateDead:
			st.FinishedAt = now
		}
		st.State = newState
	}
	saved := &state.TaskRunnerState{TaskState: st.Copy()}
	if tr.handle != nil {
		saved.Handle = tr.handle.State()
	}
	tr.mu.Unlock()

	if err := tr.db.PutTaskRunnerState(tr.alloc.ID, tr.task.Name, saved); err != nil {
		tr.logger.Error("persisting task state", "error", err)
	}
	if ev != nil {
		tr.logger.Debug("task event", "type", ev.Type, "message", ev.DisplayMessage)
	}
	tr.onChange()
}

// Restore loads the task's persisted state and reattaches to its running
// instance, if any. Call it before Run, instead of relying on the
// Received event New records for new tasks. It reports whether anything
// was stored.
func (tr *TaskRunner) Restore() (bool, error) {
	saved, err := tr.db.GetTaskRunnerState(tr.alloc.ID, tr.task.Name)
	if err != nil {
		return false, fmt.Errorf("task %q: loading state: %w", tr.task.Name, err)
	}
	if saved == nil || saved.TaskState == nil {
		return false, nil
	}
	tr.mu.Lock()
	tr.state = saved.TaskState
	tr.mu.Unlock()
	if saved.TaskState.State == structs.TaskStateDead || saved.Handle == nil {
		return true, nil
	}
	if tr.drv == nil {
		tr.mu.Lock()
		tr.lostErr = fmt.Errorf("driver %q is not available", tr.task.Driver)
		tr.mu.Unlock()
		return true, nil
	}
	h, err := tr.drv.Recover(tr.buildTaskConfig(), saved.Handle)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch {
	case err != nil:
		if !errors.Is(err, driver.ErrTaskNotFound) {
			tr.logger.Error("reattaching to task", "error", err)
		}
		tr.lostErr = err
	default:
		tr.recovered = true
		if st := h.Inspect(); st.State == driver.TaskStateExited && st.ExitResult != nil {
			tr.exitedWhileDown = st.ExitResult
		} else {
			tr.handle = h
		}
	}
	// A recovered task skips the start gate: it already passed it.
	tr.startOnce.Do(func() { close(tr.startCh) })
	return true, nil
}

// EmitReceived records that the client received the task. The alloc
// runner calls it for new (not restored) tasks.
func (tr *TaskRunner) EmitReceived() {
	tr.emit("", structs.NewTaskEvent(structs.TaskReceived, tr.clock.Now()).SetMessage("Task received by client"))
}
