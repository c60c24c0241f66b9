package drainer

import (
	"fmt"
	"sync"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// StateRaft is the in-memory twin of the server's Raft writes: it applies
// each request straight to a state store, at the index after the store's
// latest, as the FSM would. Tests and single-process tools use it; it
// also records the requests it applied. Safe for concurrent use.
type StateRaft struct {
	state func() *state.StateStore

	mu          sync.Mutex
	transitions []*structs.AllocUpdateDesiredTransitionRequest
	drains      []*structs.BatchNodeUpdateDrainRequest
}

// NewStateRaft returns a twin writing to the store current returns.
func NewStateRaft(current func() *state.StateStore) *StateRaft {
	return &StateRaft{state: current}
}

var _ Raft = (*StateRaft)(nil)

// nextIndex returns the index to write at; callers hold mu.
func (r *StateRaft) nextIndex(store *state.StateStore) (uint64, error) {
	latest, err := store.LatestIndex()
	if err != nil {
		return 0, err
	}
	return latest + 1, nil
}

// AllocUpdateDesiredTransition applies the transitions and evals.
func (r *StateRaft) AllocUpdateDesiredTransition(allocs map[string]*structs.DesiredTransition, evals []*structs.Evaluation) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	store := r.state()
	index, err := r.nextIndex(store)
	if err != nil {
		return 0, err
	}
	if err := store.UpdateAllocsDesiredTransitions(index, allocs, evals); err != nil {
		return 0, fmt.Errorf("alloc desired transitions: %w", err)
	}
	r.transitions = append(r.transitions, &structs.AllocUpdateDesiredTransitionRequest{Allocs: allocs, Evals: evals})
	return index, nil
}

// NodesDrainComplete applies the finished drains.
func (r *StateRaft) NodesDrainComplete(nodeIDs []string, event *structs.NodeEvent) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	store := r.state()
	index, err := r.nextIndex(store)
	if err != nil {
		return 0, err
	}
	req := &structs.BatchNodeUpdateDrainRequest{
		Updates:    make(map[string]*structs.DrainUpdate, len(nodeIDs)),
		NodeEvents: make(map[string]*structs.NodeEvent, len(nodeIDs)),
		UpdatedAt:  event.Timestamp.Unix(),
	}
	for _, id := range nodeIDs {
		req.Updates[id] = &structs.DrainUpdate{}
		req.NodeEvents[id] = event
	}
	if err := store.BatchUpdateNodeDrain(index, req.Updates, req.UpdatedAt, req.NodeEvents); err != nil {
		return 0, fmt.Errorf("complete drains: %w", err)
	}
	r.drains = append(r.drains, req)
	return index, nil
}

// TransitionRequests returns the transition requests applied so far.
func (r *StateRaft) TransitionRequests() []*structs.AllocUpdateDesiredTransitionRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*structs.AllocUpdateDesiredTransitionRequest(nil), r.transitions...)
}

// DrainRequests returns the drain completions applied so far.
func (r *StateRaft) DrainRequests() []*structs.BatchNodeUpdateDrainRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*structs.BatchNodeUpdateDrainRequest(nil), r.drains...)
}
