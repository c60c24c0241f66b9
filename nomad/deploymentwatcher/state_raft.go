package deploymentwatcher

import (
	"fmt"
	"sync"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// StateRaft is the in-memory twin of the server's Raft writes: it applies
// each request straight to a state store, in one transaction at the index
// after the store's latest, as the FSM would. It records what it applied.
// Safe for concurrent use.
type StateRaft struct {
	state func() *state.StateStore

	mu       sync.Mutex
	statuses []*structs.DeploymentStatusUpdate
	promotes []*structs.ApplyDeploymentPromoteRequest
	health   []*structs.ApplyDeploymentAllocHealthRequest
	evals    []*structs.Evaluation
}

// NewStateRaft returns a twin writing to the store current returns.
func NewStateRaft(current func() *state.StateStore) *StateRaft {
	return &StateRaft{state: current}
}

var _ Raft = (*StateRaft)(nil)

// write applies fn at the next index; callers hold mu.
func (r *StateRaft) write(fn func(tx *state.Txn) error) (uint64, error) {
	store := r.state()
	latest, err := store.LatestIndex()
	if err != nil {
		return 0, err
	}
	if err := store.WithWriteTxn(latest+1, fn); err != nil {
		return 0, err
	}
	return latest + 1, nil
}

// UpdateDeploymentStatus applies a status update with its job and eval.
func (r *StateRaft) UpdateDeploymentStatus(u *structs.DeploymentStatusUpdate, job *structs.Job, eval *structs.Evaluation) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	index, err := r.write(func(tx *state.Txn) error {
		if err := tx.UpdateDeploymentStatus(u); err != nil {
			return err
		}
		if job != nil {
			if err := tx.UpsertJob(job); err != nil {
				return err
			}
		}
		if eval == nil {
			return nil
		}
		return tx.UpsertEvals([]*structs.Evaluation{eval})
	})
	if err != nil {
		return 0, fmt.Errorf("deployment status update: %w", err)
	}
	r.statuses = append(r.statuses, u)
	if eval != nil {
		r.evals = append(r.evals, eval)
	}
	return index, nil
}

// UpdateDeploymentPromotion applies a promotion.
func (r *StateRaft) UpdateDeploymentPromotion(req *structs.ApplyDeploymentPromoteRequest) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	index, err := r.write(func(tx *state.Txn) error { return tx.UpdateDeploymentPromotion(req) })
	if err != nil {
		return 0, fmt.Errorf("deployment promotion: %w", err)
	}
	r.promotes = append(r.promotes, req)
	if req.Eval != nil {
		r.evals = append(r.evals, req.Eval)
	}
	return index, nil
}

// UpdateDeploymentAllocHealth applies health verdicts.
func (r *StateRaft) UpdateDeploymentAllocHealth(req *structs.ApplyDeploymentAllocHealthRequest) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	index, err := r.write(func(tx *state.Txn) error { return tx.UpdateDeploymentAllocHealth(req) })
	if err != nil {
		return 0, fmt.Errorf("deployment alloc health: %w", err)
	}
	r.recordHealth(req)
	return index, nil
}

// UpdateDeploymentAllocHealthBatch applies many requests' verdicts in
// one transaction.
func (r *StateRaft) UpdateDeploymentAllocHealthBatch(reqs []*structs.ApplyDeploymentAllocHealthRequest) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	index, err := r.write(func(tx *state.Txn) error { return tx.UpdateDeploymentAllocHealthBatch(reqs) })
	if err != nil {
		return 0, fmt.Errorf("deployment alloc health batch: %w", err)
	}
	for _, req := range reqs {
		r.recordHealth(req)
	}
	return index, nil
}

// recordHealth records what an applied health request wrote; callers
// hold mu.
func (r *StateRaft) recordHealth(req *structs.ApplyDeploymentAllocHealthRequest) {
	r.health = append(r.health, req)
	if req.DeploymentUpdate != nil {
		r.statuses = append(r.statuses, req.DeploymentUpdate)
	}
	if req.Eval != nil {
		r.evals = append(r.evals, req.Eval)
	}
}

// UpsertEvals applies evals.
func (r *StateRaft) UpsertEvals(evals []*structs.Evaluation) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	index, err := r.write(func(tx *state.Txn) error { return tx.UpsertEvals(evals) })
	if err != nil {
		return 0, fmt.Errorf("evals: %w", err)
	}
	r.evals = append(r.evals, evals...)
	return index, nil
}

// StatusUpdates returns the status updates applied so far, those carried
// by health entries included.
func (r *StateRaft) StatusUpdates() []*structs.DeploymentStatusUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*structs.DeploymentStatusUpdate(nil), r.statuses...)
}

// Promotions returns the promotions applied so far.
func (r *StateRaft) Promotions() []*structs.ApplyDeploymentPromoteRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*structs.ApplyDeploymentPromoteRequest(nil), r.promotes...)
}

// HealthUpdates returns the health requests applied so far, alone or in
// batches.
func (r *StateRaft) HealthUpdates() []*structs.ApplyDeploymentAllocHealthRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*structs.ApplyDeploymentAllocHealthRequest(nil), r.health...)
}

// Evals returns every eval written so far, by any entry.
func (r *StateRaft) Evals() []*structs.Evaluation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*structs.Evaluation(nil), r.evals...)
}
