package fsm

import (
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Deployment entries written by the deployment watcher and by operators
// acting on a deployment (see nomad/deploymentwatcher). Each carries the
// eval that moves the roll-out on, written in the same transaction.

// applyDeploymentPromotion promotes a deployment's canaries. The state
// store refuses a group whose canaries are not all healthy; the error
// comes back to the writer and nothing changes.
func (f *FSM) applyDeploymentPromotion(body []byte, index uint64) interface{} {
	var req structs.ApplyDeploymentPromoteRequest
	if err := decode(body, structs.DeploymentPromoteRequestType, &req); err != nil {
		return err
	}
	if err := f.State().UpdateDeploymentPromotion(index, &req); err != nil {
		return err
	}
	if req.Eval != nil {
		f.handleEvals([]*structs.Evaluation{req.Eval})
	}
	return nil
}

// applyDeploymentAllocHealth records alloc health verdicts, with the
// failure, reverted job version and eval the entry may carry.
func (f *FSM) applyDeploymentAllocHealth(body []byte, index uint64) interface{} {
	var req structs.ApplyDeploymentAllocHealthRequest
	if err := decode(body, structs.DeploymentAllocHealthRequestType, &req); err != nil {
		return err
	}
	if err := f.State().UpdateDeploymentAllocHealth(index, &req); err != nil {
		return err
	}
	if req.Eval != nil {
		f.handleEvals([]*structs.Evaluation{req.Eval})
	}
	return nil
}

// applyDeploymentStatusUpdate changes a deployment's status together with
// the job version it reverts to, if any, and the eval that follows up.
func (f *FSM) applyDeploymentStatusUpdate(body []byte, index uint64) interface{} {
	var req structs.DeploymentStatusUpdateRequest
	if err := decode(body, structs.DeploymentStatusUpdateRequestType, &req); err != nil {
		return err
	}
	if req.DeploymentUpdate == nil {
		return errMissing(structs.DeploymentStatusUpdateRequestType, "deployment update")
	}
	err := f.State().WithWriteTxn(index, func(tx *state.Txn) error {
		if err := tx.UpdateDeploymentStatus(req.DeploymentUpdate); err != nil {
			return err
		}
		if req.Job != nil {
			if err := tx.UpsertJob(req.Job); err != nil {
				return err
			}
		}
		if req.Eval == nil {
			return nil
		}
		return tx.UpsertEvals([]*structs.Evaluation{req.Eval})
	})
	if err != nil {
		return err
	}
	if req.Eval != nil {
		f.handleEvals([]*structs.Evaluation{req.Eval})
	}
	return nil
}

func (f *FSM) applyDeploymentDelete(body []byte, index uint64) interface{} {
	var req structs.DeploymentDeleteRequest
	if err := decode(body, structs.DeploymentDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteDeployments(index, req.Deployments)
}
