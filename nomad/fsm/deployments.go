package fsm

import (
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Deployment entries written by the deployment watcher and by operators
// acting on a deployment (see nomad/deploymentwatcher). Each carries the
// eval that moves the roll-out on, written in the same transaction.

// deploymentPromotionTxn promotes a deployment's canaries. The state
// store refuses a group whose canaries are not all healthy; the error
// comes back to the writer and nothing changes.
func (f *FSM) deploymentPromotionTxn(tx *state.Txn, body []byte) (func(), error) {
	var req structs.ApplyDeploymentPromoteRequest
	if err := decode(body, structs.DeploymentPromoteRequestType, &req); err != nil {
		return nil, err
	}
	if err := tx.UpdateDeploymentPromotion(&req); err != nil {
		return nil, err
	}
	return f.afterEvals(req.Eval), nil
}

// deploymentAllocHealthTxn records alloc health verdicts, with the
// failure, reverted job version and eval the entry may carry.
func (f *FSM) deploymentAllocHealthTxn(tx *state.Txn, body []byte) (func(), error) {
	var req structs.ApplyDeploymentAllocHealthRequest
	if err := decode(body, structs.DeploymentAllocHealthRequestType, &req); err != nil {
		return nil, err
	}
	tx.InternJobParts(req.Job)
	if err := tx.UpdateDeploymentAllocHealth(&req); err != nil {
		return nil, err
	}
	return f.afterEvals(req.Eval), nil
}

// deploymentAllocHealthBatchTxn records the verdicts of many
// DeploymentAllocHealth requests, each as its own entry would; the evals
// they carry go to the broker in request order. One request refused
// refuses the entry.
func (f *FSM) deploymentAllocHealthBatchTxn(tx *state.Txn, body []byte) (func(), error) {
	var req structs.DeploymentAllocHealthBatchRequest
	if err := decode(body, structs.DeploymentAllocHealthBatchRequestType, &req); err != nil {
		return nil, err
	}
	for _, r := range req.Requests {
		if r != nil {
			tx.InternJobParts(r.Job)
		}
	}
	if err := tx.UpdateDeploymentAllocHealthBatch(req.Requests); err != nil {
		return nil, err
	}
	evals := make([]*structs.Evaluation, len(req.Requests))
	for i, r := range req.Requests {
		evals[i] = r.Eval
	}
	return f.afterEvals(evals...), nil
}

// deploymentStatusUpdateTxn changes a deployment's status together with
// the job version it reverts to, if any, and the eval that follows up.
func (f *FSM) deploymentStatusUpdateTxn(tx *state.Txn, body []byte) (func(), error) {
	var req structs.DeploymentStatusUpdateRequest
	if err := decode(body, structs.DeploymentStatusUpdateRequestType, &req); err != nil {
		return nil, err
	}
	if req.DeploymentUpdate == nil {
		return nil, errMissing(structs.DeploymentStatusUpdateRequestType, "deployment update")
	}
	if err := tx.UpdateDeploymentStatus(req.DeploymentUpdate); err != nil {
		return nil, err
	}
	if req.Job != nil {
		tx.InternJobParts(req.Job)
		if err := tx.UpsertJob(req.Job); err != nil {
			return nil, err
		}
	}
	if req.Eval != nil {
		if err := tx.UpsertEvals([]*structs.Evaluation{req.Eval}); err != nil {
			return nil, err
		}
	}
	return f.afterEvals(req.Eval), nil
}

func (f *FSM) applyDeploymentDelete(body []byte, index uint64) interface{} {
	var req structs.DeploymentDeleteRequest
	if err := decode(body, structs.DeploymentDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteDeployments(index, req.Deployments)
}
