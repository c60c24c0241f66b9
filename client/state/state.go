// Package state persists what a client must remember across its own
// restarts: the allocations it runs and, per task, the task's state and
// the driver handle needed to reattach to it. The node's identity lives
// here too (identity.go).
//
// DB is the seam; FileDB keeps one file per object under the client's
// data directory, MemDB is its in-memory twin for tests.
package state

import (
	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/structs"
)

// TaskRunnerState is what a task runner persists about its task.
type TaskRunnerState struct {
	// TaskState is the task's public state (reported to the servers).
	TaskState *structs.TaskState
	// Handle reattaches to the running task instance; nil when no
	// instance runs (before the first start, between restarts, after
	// the end).
	Handle *driver.HandleState
}

// Copy returns a deep copy.
func (s *TaskRunnerState) Copy() *TaskRunnerState {
	if s == nil {
		return nil
	}
	return &TaskRunnerState{TaskState: s.TaskState.Copy(), Handle: s.Handle.Copy()}
}

// DB stores allocations and task runner state. Alloc and task runners
// call it concurrently from their own goroutines; implementations must be
// safe for that. Objects passed in are copied (or encoded) before the
// call returns, and objects returned belong to the caller.
type DB interface {
	// PutAllocation stores (or replaces) an allocation.
	PutAllocation(alloc *structs.Allocation) error
	// GetAllAllocations returns every stored allocation. An allocation
	// that cannot be decoded is reported in the map by ID instead of
	// failing the whole load.
	GetAllAllocations() ([]*structs.Allocation, map[string]error, error)
	// DeleteAllocation removes an allocation and its tasks' state. Puts
	// for that allocation arriving afterwards (from task runners still
	// winding down) are dropped.
	DeleteAllocation(allocID string) error

	// PutTaskRunnerState stores the state of one task of an allocation.
	PutTaskRunnerState(allocID, task string, st *TaskRunnerState) error
	// GetTaskRunnerState returns the stored state, or nil when there is
	// none.
	GetTaskRunnerState(allocID, task string) (*TaskRunnerState, error)

	// Close releases the store.
	Close() error
}
