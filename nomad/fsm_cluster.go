package nomad

import (
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Cluster-wide entries: the scheduler configuration, the cluster's
// identity, deployments and summary repair.

// applySchedulerConfig writes the scheduler configuration. A CAS write
// returns whether it applied (a bool, not an error, when the index moved).
func (f *FSM) applySchedulerConfig(body []byte, index uint64) interface{} {
	var req structs.SchedulerSetConfigRequest
	if err := decode(body, structs.SchedulerConfigRequestType, &req); err != nil {
		return err
	}
	if req.CAS {
		applied, err := f.State().SchedulerCASConfig(index, req.Config.ModifyIndex, &req.Config)
		if err != nil {
			return err
		}
		return applied
	}
	if err := f.State().SchedulerSetConfig(index, &req.Config); err != nil {
		return err
	}
	return true
}

func (f *FSM) applyClusterMetadata(body []byte, index uint64) interface{} {
	var req structs.ClusterMetadataRequest
	if err := decode(body, structs.ClusterMetadataRequestType, &req); err != nil {
		return err
	}
	return f.State().ClusterSetMetadata(index, &req.Metadata)
}

func (f *FSM) applyReconcileJobSummaries(body []byte, index uint64) interface{} {
	var req structs.GenericRequest
	if err := decode(body, structs.ReconcileJobSummariesRequestType, &req); err != nil {
		return err
	}
	return f.State().ReconcileJobSummaries(index)
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
