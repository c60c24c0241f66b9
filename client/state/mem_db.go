package state

import (
	"sync"

	"github.com/opennomad/nomad/structs"
)

// MemDB is the in-memory twin of FileDB, for tests. It copies on the way
// in and out, as encoding would.
type MemDB struct {
	mu      sync.Mutex
	allocs  map[string]*structs.Allocation
	tasks   map[string]map[string]*TaskRunnerState
	deleted map[string]bool
}

var _ DB = (*MemDB)(nil)

// NewMemDB returns an empty store.
func NewMemDB() *MemDB {
	return &MemDB{
		allocs:  map[string]*structs.Allocation{},
		tasks:   map[string]map[string]*TaskRunnerState{},
		deleted: map[string]bool{},
	}
}

// PutAllocation stores a copy of the allocation.
func (db *MemDB) PutAllocation(alloc *structs.Allocation) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if !db.deleted[alloc.ID] {
		db.allocs[alloc.ID] = alloc.Copy()
	}
	return nil
}

// GetAllAllocations returns copies of every allocation.
func (db *MemDB) GetAllAllocations() ([]*structs.Allocation, map[string]error, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	out := make([]*structs.Allocation, 0, len(db.allocs))
	for _, a := range db.allocs {
		out = append(out, a.Copy())
	}
	return out, map[string]error{}, nil
}

// DeleteAllocation drops the allocation and its tasks.
func (db *MemDB) DeleteAllocation(allocID string) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	delete(db.allocs, allocID)
	delete(db.tasks, allocID)
	db.deleted[allocID] = true
	return nil
}

// PutTaskRunnerState stores a copy of a task's state.
func (db *MemDB) PutTaskRunnerState(allocID, task string, st *TaskRunnerState) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.deleted[allocID] {
		return nil
	}
	if db.tasks[allocID] == nil {
		db.tasks[allocID] = map[string]*TaskRunnerState{}
	}
	db.tasks[allocID][task] = st.Copy()
	return nil
}

// GetTaskRunnerState returns a copy of a task's state, or nil.
func (db *MemDB) GetTaskRunnerState(allocID, task string) (*TaskRunnerState, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.tasks[allocID][task].Copy(), nil
}

// Close does nothing.
func (db *MemDB) Close() error { return nil }
