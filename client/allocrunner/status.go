package allocrunner

import "github.com/opennomad/nomad/structs"

// Client status descriptions, as Nomad words them.
const (
	descFailed   = "Failed tasks"
	descRunning  = "Tasks are running"
	descPending  = "No tasks have started"
	descComplete = "All tasks have completed"
)

// clientStatus derives an allocation's ClientStatus from its tasks: any
// failed task fails the allocation; otherwise any running task makes it
// running, any pending task pending, and all tasks dead make it complete.
func clientStatus(states map[string]*structs.TaskState) (status, description string) {
	var pending, running, dead, failed bool
	for _, s := range states {
		switch s.State {
		case structs.TaskStateRunning:
			running = true
		case structs.TaskStatePending:
			pending = true
		case structs.TaskStateDead:
			if s.Failed {
				failed = true
			} else {
				dead = true
			}
		}
	}
	switch {
	case failed:
		return structs.AllocClientStatusFailed, descFailed
	case running:
		return structs.AllocClientStatusRunning, descRunning
	case pending:
		return structs.AllocClientStatusPending, descPending
	case dead:
		return structs.AllocClientStatusComplete, descComplete
	}
	return structs.AllocClientStatusPending, descPending
}
