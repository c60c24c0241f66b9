package periodic

import (
	"fmt"
	"sync"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// StateRaft is the in-memory twin of the server's Raft writes: it applies
// each registration straight to a state store, in one transaction at the
// index after the store's latest, as the FSM would, and records it. Safe
// for concurrent use.
type StateRaft struct {
	state func() *state.StateStore

	mu       sync.Mutex
	children []*structs.Job
	evals    []*structs.Evaluation
}

// NewStateRaft returns a twin writing to the store current returns.
func NewStateRaft(current func() *state.StateStore) *StateRaft {
	return &StateRaft{state: current}
}

var _ Raft = (*StateRaft)(nil)

// RegisterChild applies the child job and its eval.
func (r *StateRaft) RegisterChild(child *structs.Job, eval *structs.Evaluation) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	store := r.state()
	latest, err := store.LatestIndex()
	if err != nil {
		return 0, err
	}
	err = store.WithWriteTxn(latest+1, func(tx *state.Txn) error {
		if err := tx.UpsertJob(child); err != nil {
			return err
		}
		return tx.UpsertEvals([]*structs.Evaluation{eval})
	})
	if err != nil {
		return 0, fmt.Errorf("register child job %q: %w", child.ID, err)
	}
	r.children = append(r.children, child)
	r.evals = append(r.evals, eval)
	return latest + 1, nil
}

// Children returns the child jobs registered so far, in order.
func (r *StateRaft) Children() []*structs.Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*structs.Job(nil), r.children...)
}

// Evals returns the evals registered with them.
func (r *StateRaft) Evals() []*structs.Evaluation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*structs.Evaluation(nil), r.evals...)
}
