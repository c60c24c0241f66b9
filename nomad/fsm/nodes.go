package fsm

import (
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Node entries: registration, status, drain and eligibility. Each one
// that leaves a node able to take new allocations it could not take
// before releases the evals blocked on its computed class.

func (f *FSM) applyNodeRegister(body []byte, index uint64) interface{} {
	var req structs.NodeRegisterRequest
	if err := decode(body, structs.NodeRegisterRequestType, &req); err != nil {
		return err
	}
	if req.Node == nil {
		return errMissing(structs.NodeRegisterRequestType, "node")
	}
	if err := f.State().UpsertNode(index, req.Node); err != nil {
		return err
	}
	// A re-registration may bring new resources or a new class, so any
	// ready registration counts as new capacity.
	if req.Node.Ready() {
		f.unblockNode(req.Node, index)
	}
	return nil
}

func (f *FSM) applyNodeDeregister(body []byte, index uint64) interface{} {
	var req structs.NodeDeregisterRequest
	if err := decode(body, structs.NodeBatchDeregisterRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteNodes(index, req.NodeIDs)
}

func (f *FSM) applyNodeUpdateStatus(body []byte, index uint64) interface{} {
	var req structs.NodeUpdateStatusRequest
	if err := decode(body, structs.NodeUpdateStatusRequestType, &req); err != nil {
		return err
	}
	var before, after *structs.Node
	err := f.State().WithWriteTxn(index, func(tx *state.Txn) error {
		var err error
		if before, err = tx.NodeByID(req.NodeID); err != nil {
			return err
		}
		if err := tx.UpdateNodeStatus(req.NodeID, req.Status, req.UpdatedAt, req.NodeEvent); err != nil {
			return err
		}
		if after, err = tx.NodeByID(req.NodeID); err != nil {
			return err
		}
		for _, e := range req.Evals {
			if e != nil {
				e.NodeModifyIndex = index
			}
		}
		return tx.UpsertEvals(req.Evals)
	})
	if err != nil {
		return err
	}
	if gainedCapacity(before, after) {
		f.unblockNode(after, index)
	}
	f.handleEvals(req.Evals)
	return nil
}

func (f *FSM) applyNodeUpdateDrain(body []byte, index uint64) interface{} {
	var req structs.NodeUpdateDrainRequest
	if err := decode(body, structs.NodeUpdateDrainRequestType, &req); err != nil {
		return err
	}
	return f.updateNodes(index, []string{req.NodeID}, func(tx *state.Txn) error {
		return tx.UpdateNodeDrain(req.NodeID, req.DrainStrategy, req.MarkEligible, req.UpdatedAt, req.NodeEvent, req.Meta)
	})
}

func (f *FSM) applyBatchNodeUpdateDrain(body []byte, index uint64) interface{} {
	var req structs.BatchNodeUpdateDrainRequest
	if err := decode(body, structs.BatchNodeUpdateDrainRequestType, &req); err != nil {
		return err
	}
	ids := make([]string, 0, len(req.Updates))
	for id := range req.Updates {
		ids = append(ids, id)
	}
	return f.updateNodes(index, ids, func(tx *state.Txn) error {
		return tx.BatchUpdateNodeDrain(req.Updates, req.UpdatedAt, req.NodeEvents)
	})
}

func (f *FSM) applyNodeUpdateEligibility(body []byte, index uint64) interface{} {
	var req structs.NodeUpdateEligibilityRequest
	if err := decode(body, structs.NodeUpdateEligibilityRequestType, &req); err != nil {
		return err
	}
	return f.updateNodes(index, []string{req.NodeID}, func(tx *state.Txn) error {
		return tx.UpdateNodeEligibility(req.NodeID, req.Eligibility, req.UpdatedAt, req.NodeEvent)
	})
}

// updateNodes runs write in one transaction and then unblocks capacity on
// every node among ids that became schedulable through it.
func (f *FSM) updateNodes(index uint64, ids []string, write func(tx *state.Txn) error) interface{} {
	before := make(map[string]*structs.Node, len(ids))
	var gained []*structs.Node
	err := f.State().WithWriteTxn(index, func(tx *state.Txn) error {
		for _, id := range ids {
			n, err := tx.NodeByID(id)
			if err != nil {
				return err
			}
			before[id] = n
		}
		if err := write(tx); err != nil {
			return err
		}
		for _, id := range ids {
			after, err := tx.NodeByID(id)
			if err != nil {
				return err
			}
			if gainedCapacity(before[id], after) {
				gained = append(gained, after)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, n := range gained {
		f.unblockNode(n, index)
	}
	return nil
}
