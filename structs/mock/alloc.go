package mock

import (
	"time"

	"github.com/opennomad/nomad/structs"
)

// MarkFailed marks the alloc failed at the time given, as a client would
// report it: client status failed and every task dead and failed.
func MarkFailed(a *structs.Allocation, at time.Time) *structs.Allocation {
	return finishTasks(a, structs.AllocClientStatusFailed, true, at)
}

// MarkComplete marks the alloc as successfully finished at the time given.
func MarkComplete(a *structs.Allocation, at time.Time) *structs.Allocation {
	return finishTasks(a, structs.AllocClientStatusComplete, false, at)
}

func finishTasks(a *structs.Allocation, status string, failed bool, at time.Time) *structs.Allocation {
	a.ClientStatus = status
	a.TaskStates = map[string]*structs.TaskState{}
	for _, t := range a.Job.LookupTaskGroup(a.TaskGroup).Tasks {
		a.TaskStates[t.Name] = &structs.TaskState{
			State: structs.TaskStateDead, Failed: failed, StartedAt: at.Add(-time.Minute), FinishedAt: at,
		}
	}
	return a
}
