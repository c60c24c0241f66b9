package allocrunner

import (
	"fmt"
	"time"

	"github.com/opennomad/nomad/structs"
)

// Task roles within a group, from the lifecycle block.
type role int

const (
	roleMain role = iota
	rolePrestart
	rolePrestartSidecar
	rolePoststart
	rolePoststartSidecar
	rolePoststop
)

func roleOf(lc *structs.TaskLifecycleConfig) role {
	if lc == nil {
		return roleMain
	}
	switch lc.Hook {
	case structs.TaskLifecycleHookPrestart:
		if lc.Sidecar {
			return rolePrestartSidecar
		}
		return rolePrestart
	case structs.TaskLifecycleHookPoststart:
		if lc.Sidecar {
			return rolePoststartSidecar
		}
		return rolePoststart
	case structs.TaskLifecycleHookPoststop:
		return rolePoststop
	}
	return roleMain
}

// taskView is what the lifecycle plan needs to know about one task.
type taskView struct {
	name    string
	role    role
	leader  bool
	state   *structs.TaskState
	started bool // already allowed to start
	killed  bool // already asked to die
}

func (v taskView) dead() bool    { return v.state.State == structs.TaskStateDead }
func (v taskView) running() bool { return v.state.State == structs.TaskStateRunning }
func (v taskView) failed() bool  { return v.dead() && v.state.Failed }

// lifecyclePlan is what the alloc runner must do next.
type lifecyclePlan struct {
	// start lists tasks to release.
	start []string
	// kill maps tasks to stop to the event explaining why (nil: the
	// alloc is being stopped).
	kill map[string]*structs.TaskEvent
}

// planLifecycle orders a group's tasks, as Nomad does:
//
//   - prestart tasks start first; main tasks start once every ephemeral
//     prestart task completed successfully and every prestart sidecar
//     runs;
//   - poststart tasks start once every main task has started;
//   - when every main task is dead, the sidecars and poststart tasks
//     still running are stopped ("Main Tasks Dead");
//   - a failed task stops all its siblings ("Sibling Task Failed"), and
//     a dead leader stops the others ("Leader Task Dead");
//   - poststop tasks start once every other task is dead;
//   - stopping the allocation stops every task except the poststop ones,
//     which then run; destroying it stops everything.
//
// It is a pure function of the tasks' states, called after every change.
func planLifecycle(tasks []taskView, stopping, destroying bool, now time.Time) lifecyclePlan {
	p := lifecyclePlan{kill: map[string]*structs.TaskEvent{}}
	killAll := func(reason func() *structs.TaskEvent, includePoststop bool) {
		for _, t := range tasks {
			if t.dead() || t.killed || (t.role == rolePoststop && !includePoststop) {
				continue
			}
			if _, ok := p.kill[t.name]; ok {
				continue
			}
			var ev *structs.TaskEvent
			if reason != nil {
				ev = reason()
			}
			p.kill[t.name] = ev
		}
	}

	if destroying {
		killAll(nil, true)
		return p
	}
	if stopping {
		killAll(nil, false)
	}
	for _, t := range tasks {
		if t.failed() && t.role != rolePoststop {
			name := t.name
			killAll(func() *structs.TaskEvent {
				ev := structs.NewTaskEvent(structs.TaskSiblingFailed, now).SetMessage(fmt.Sprintf("Task's sibling %q failed", name))
				ev.Details["failed_sibling"] = name
				return ev
			}, false)
		}
		if t.leader && t.dead() {
			killAll(func() *structs.TaskEvent {
				return structs.NewTaskEvent(structs.TaskLeaderDead, now).SetMessage("Leader Task in Group dead")
			}, false)
		}
	}

	var prestartDone, mainsStarted, mainsDead, othersDead = true, true, true, true
	haveMain := false
	for _, t := range tasks {
		switch t.role {
		case rolePrestart:
			prestartDone = prestartDone && t.dead() && !t.failed()
		case rolePrestartSidecar:
			prestartDone = prestartDone && t.running()
		case roleMain:
			haveMain = true
			mainsStarted = mainsStarted && (!t.state.StartedAt.IsZero() || t.dead())
			mainsDead = mainsDead && t.dead()
		}
		if t.role != rolePoststop {
			othersDead = othersDead && t.dead()
		}
	}
	if haveMain && mainsDead {
		killAll(func() *structs.TaskEvent {
			return structs.NewTaskEvent(structs.TaskMainDead, now).SetMessage("Main tasks in the group died")
		}, false)
	}

	halting := stopping || len(p.kill) > 0
	for _, t := range tasks {
		if t.started || t.dead() || t.killed {
			continue
		}
		if _, dying := p.kill[t.name]; dying {
			continue
		}
		var ok bool
		switch t.role {
		case rolePrestart, rolePrestartSidecar:
			ok = !halting
		case roleMain:
			ok = !halting && prestartDone
		case rolePoststart, rolePoststartSidecar:
			ok = !halting && prestartDone && mainsStarted && !mainsDead
		case rolePoststop:
			ok = othersDead
		}
		if ok {
			p.start = append(p.start, t.name)
		}
	}
	return p
}
