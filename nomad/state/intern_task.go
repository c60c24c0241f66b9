package state

import (
	"time"
	"unsafe"

	"github.com/opennomad/nomad/structs"
)

// Once a task's parts are kept instances (intern_job.go), the task itself
// is one of few too: the jobs of one shape run the same tasks in the same
// groups. A task, and then a group, is shared with a kept one whose
// fields are equal, compared by a key of its values and of its parts'
// addresses: equal kept parts are one instance, so the address stands
// for the content, and the kept task holds its parts, so no address in a
// key can be reused while the key is known. Only tasks and groups
// without the lists and blocks the key leaves out (constraints,
// services, networks, volumes, scaling...) are shared: those are rarely
// equal to another's, and a nil list and an empty one encode apart.

// taskKey is every field of a task whose lists are nil.
type taskKey struct {
	name, driver, user, killSignal string
	config, env, meta              unsafe.Pointer
	resources                      *structs.Resources
	logs                           *structs.LogConfig
	lifecycle                      *structs.TaskLifecycleConfig
	killTimeout                    time.Duration
	leader                         bool
}

// groupTasksMax bounds the tasks of a group shared.
const groupTasksMax = 4

// groupKey is every field of a group whose lists are nil and whose tasks
// are kept ones.
type groupKey struct {
	name                                    string
	count                                   int
	update                                  *structs.UpdateStrategy
	migrate                                 *structs.MigrateStrategy
	restart                                 *structs.RestartPolicy
	reschedule                              *structs.ReschedulePolicy
	disk                                    *structs.EphemeralDisk
	meta                                    unsafe.Pointer
	tasks                                   [groupTasksMax]*structs.Task
	nTasks                                  int
	shutdownDelay, stopAfter, maxDisconnect optDuration
}

// optDuration is a *time.Duration by value.
type optDuration struct {
	set bool
	d   time.Duration
}

func optionalDuration(d *time.Duration) optDuration {
	if d == nil {
		return optDuration{}
	}
	return optDuration{set: true, d: *d}
}

// mapAddress is the address of a map's table, nil for a nil map.
func mapAddress[V any](m map[string]V) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

// shareTask returns the kept task equal to task, keeping task if there
// is none; ok is false (and task returned) when the task cannot be
// shared. mapsKept says whether its config, env and meta are each nil or
// a kept one; its other parts must have been shared already.
func (p *jobParts) shareTask(task *structs.Task, mapsKept bool) (_ *structs.Task, ok bool) {
	if !mapsKept || (task.Resources != nil && task.Resources.Networks != nil) ||
		task.Constraints != nil || task.Affinities != nil || task.Services != nil ||
		task.VolumeMounts != nil || task.DispatchPayload != nil || task.Actions != nil {
		return task, false
	}
	k := taskKey{
		name: task.Name, driver: task.Driver, user: task.User, killSignal: task.KillSignal,
		config: mapAddress(task.Config), env: mapAddress(task.Env), meta: mapAddress(task.Meta),
		resources: task.Resources, logs: task.LogConfig, lifecycle: task.Lifecycle,
		killTimeout: task.KillTimeout, leader: task.Leader,
	}
	return keep(&p.tasks, k, task), true
}

// shareGroup returns the kept group equal to tg, keeping tg if there is
// none, or tg itself when it cannot be shared. Its parts and tasks must
// have been shared already, its meta and every task a kept one.
func (p *jobParts) shareGroup(tg *structs.TaskGroup) *structs.TaskGroup {
	if len(tg.Tasks) == 0 || len(tg.Tasks) > groupTasksMax ||
		tg.Constraints != nil || tg.Affinities != nil || tg.Spreads != nil || tg.Networks != nil ||
		tg.Services != nil || tg.Volumes != nil || tg.Scaling != nil {
		return tg
	}
	k := groupKey{
		name: tg.Name, count: tg.Count,
		update: tg.Update, migrate: tg.Migrate, restart: tg.RestartPolicy,
		reschedule: tg.ReschedulePolicy, disk: tg.EphemeralDisk,
		meta:          mapAddress(tg.Meta),
		nTasks:        len(tg.Tasks),
		shutdownDelay: optionalDuration(tg.ShutdownDelay),
		stopAfter:     optionalDuration(tg.StopAfterClientDisconnect),
		maxDisconnect: optionalDuration(tg.MaxClientDisconnect),
	}
	copy(k.tasks[:], tg.Tasks)
	return keep(&p.groups, k, tg)
}
