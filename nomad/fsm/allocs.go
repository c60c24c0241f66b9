package fsm

import (
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Allocation entries: what clients report, what operators and the drainer
// ask for, and what the plan applier commits.

// applyDeprecatedAllocUpdate accepts the retired AllocUpdate entry as a
// no-op, so a log that holds one still replays.
func (f *FSM) applyDeprecatedAllocUpdate([]byte, uint64) interface{} {
	return nil
}

func (f *FSM) applyAllocClientUpdate(body []byte, index uint64) interface{} {
	var req structs.AllocUpdateRequest
	if err := decode(body, structs.AllocClientUpdateRequestType, &req); err != nil {
		return err
	}
	store := f.State()
	err := store.WithWriteTxn(index, func(tx *state.Txn) error {
		if err := tx.UpdateAllocsFromClient(req.Alloc); err != nil {
			return err
		}
		return tx.UpsertEvals(req.Evals)
	})
	if err != nil {
		return err
	}
	f.handleEvals(req.Evals)
	f.unblockFreedCapacity(store, req.Alloc, index)
	return nil
}

// unblockFreedCapacity releases evals that may fit in the room left by
// allocs that just finished (complete or failed), once per node.
func (f *FSM) unblockFreedCapacity(store *state.StateStore, updates []*structs.Allocation, index uint64) {
	if f.blocked == nil {
		return
	}
	seen := make(map[string]bool)
	for _, u := range updates {
		if u.ClientStatus != structs.AllocClientStatusComplete && u.ClientStatus != structs.AllocClientStatusFailed {
			continue
		}
		// The update may not name its node; the stored alloc does. A
		// collected alloc frees nothing.
		alloc, err := store.AllocByID(nil, u.ID)
		if err != nil || alloc == nil || seen[alloc.NodeID] {
			continue
		}
		seen[alloc.NodeID] = true
		node, err := store.NodeByID(nil, alloc.NodeID)
		if err != nil || node == nil {
			continue
		}
		f.blocked.UnblockClassAndQuota(node.ComputedClass, "", index)
		f.blocked.UnblockNode(node.ID, index)
	}
}

func (f *FSM) applyAllocDesiredTransition(body []byte, index uint64) interface{} {
	var req structs.AllocUpdateDesiredTransitionRequest
	if err := decode(body, structs.AllocUpdateDesiredTransitionRequestType, &req); err != nil {
		return err
	}
	if err := f.State().UpdateAllocsDesiredTransitions(index, req.Allocs, req.Evals); err != nil {
		return err
	}
	f.handleEvals(req.Evals)
	return nil
}

func (f *FSM) applyPlanResults(body []byte, index uint64) interface{} {
	var req structs.ApplyPlanResultsRequest
	if err := decode(body, structs.ApplyPlanResultsRequestType, &req); err != nil {
		return err
	}
	store := f.State()
	if err := store.UpsertPlanResults(index, &req); err != nil {
		return err
	}
	f.handleEvals(req.PreemptionEvals)
	f.unblockStoppedAllocNodes(store, index, req.AllocsStopped, req.AllocsPreempted)
	if req.Eval != nil {
		// The plan's eval, written with the result: what an EvalUpdate
		// entry of it does after its commit (applyEvalUpdate).
		f.handleEvals([]*structs.Evaluation{req.Eval})
	}
	return nil
}

// unblockStoppedAllocNodes releases evals that may fit where a plan
// stopped or preempted allocs: the scheduler counts a stopped alloc's
// resources as free at once, so waiting for the client to report it
// finished would leave capacity idle. Once per node.
func (f *FSM) unblockStoppedAllocNodes(store *state.StateStore, index uint64, lists ...[]*structs.AllocStop) {
	if f.blocked == nil {
		return
	}
	seen := make(map[string]bool)
	for _, stops := range lists {
		for _, s := range stops {
			alloc, err := store.AllocByID(nil, s.ID)
			if err != nil || alloc == nil || seen[alloc.NodeID] {
				continue
			}
			seen[alloc.NodeID] = true
			node, err := store.NodeByID(nil, alloc.NodeID)
			if err != nil || node == nil {
				continue
			}
			f.blocked.UnblockClassAndQuota(node.ComputedClass, "", index)
			f.blocked.UnblockNode(node.ID, index)
		}
	}
}
