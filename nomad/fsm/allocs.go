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

func (f *FSM) allocClientUpdateTxn(tx *state.Txn, body []byte) (func(), error) {
	var req structs.AllocUpdateRequest
	if err := decode(body, structs.AllocClientUpdateRequestType, &req); err != nil {
		return nil, err
	}
	if err := tx.UpdateAllocsFromClient(req.Alloc); err != nil {
		return nil, err
	}
	if err := tx.UpsertEvals(req.Evals); err != nil {
		return nil, err
	}
	// Allocs that just finished (complete or failed) leave room on their
	// nodes.
	var finished []string
	for _, u := range req.Alloc {
		if u.ClientStatus == structs.AllocClientStatusComplete || u.ClientStatus == structs.AllocClientStatusFailed {
			finished = append(finished, u.ID)
		}
	}
	freed := f.nodesOfAllocs(tx, finished)
	index := tx.Index()
	return func() {
		f.handleEvals(req.Evals)
		f.unblockFreed(freed, index)
	}, nil
}

func (f *FSM) allocDesiredTransitionTxn(tx *state.Txn, body []byte) (func(), error) {
	var req structs.AllocUpdateDesiredTransitionRequest
	if err := decode(body, structs.AllocUpdateDesiredTransitionRequestType, &req); err != nil {
		return nil, err
	}
	if err := tx.UpdateAllocsDesiredTransitions(req.Allocs, req.Evals); err != nil {
		return nil, err
	}
	return f.afterEvals(req.Evals...), nil
}

func (f *FSM) planResultsTxn(tx *state.Txn, body []byte) (func(), error) {
	var req structs.ApplyPlanResultsRequest
	if err := decode(body, structs.ApplyPlanResultsRequestType, &req); err != nil {
		return nil, err
	}
	if err := tx.UpsertPlanResults(&req); err != nil {
		return nil, err
	}
	// The scheduler counts a stopped or preempted alloc's resources as
	// free at once, so waiting for the client to report it finished
	// would leave capacity idle.
	var stopped []string
	for _, list := range [][]*structs.AllocStop{req.AllocsStopped, req.AllocsPreempted} {
		for _, s := range list {
			stopped = append(stopped, s.ID)
		}
	}
	freed := f.nodesOfAllocs(tx, stopped)
	index := tx.Index()
	return func() {
		f.handleEvals(req.PreemptionEvals)
		f.unblockFreed(freed, index)
		if req.Eval != nil {
			// The plan's eval, written with the result: what an
			// EvalUpdate entry of it does after its commit.
			f.handleEvals([]*structs.Evaluation{req.Eval})
		}
	}, nil
}

// nodesOfAllocs returns the nodes of the allocs named, once each, in the
// order first named, as the transaction sees them after the entry's
// writes: that is what the store answers once the entry is committed,
// whether or not later entries share its transaction. The update may not
// name its node; the stored alloc does. A collected alloc, or one whose
// node is gone, names none. Nothing is read without a blocked-evals
// tracker to tell.
func (f *FSM) nodesOfAllocs(tx *state.Txn, allocIDs []string) []*structs.Node {
	if f.blocked == nil || len(allocIDs) == 0 {
		return nil
	}
	var nodes []*structs.Node
	seen := make(map[string]bool)
	for _, id := range allocIDs {
		alloc, err := tx.AllocByID(id)
		if err != nil || alloc == nil || seen[alloc.NodeID] {
			continue
		}
		seen[alloc.NodeID] = true
		node, err := tx.NodeByID(alloc.NodeID)
		if err != nil || node == nil {
			continue
		}
		nodes = append(nodes, node)
	}
	return nodes
}

// unblockFreed releases evals that may fit in the room left on nodes.
func (f *FSM) unblockFreed(nodes []*structs.Node, index uint64) {
	if f.blocked == nil {
		return
	}
	for _, node := range nodes {
		f.blocked.UnblockClassAndQuota(node.ComputedClass, "", index)
		f.blocked.UnblockNode(node.ID, index)
	}
}
