package fsm

import (
	"github.com/opennomad/nomad/structs"
)

// Cluster-wide entries: the scheduler configuration, the cluster's
// identity and summary repair.

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

// applyAutopilotConfig writes the autopilot configuration. A CAS write
// returns whether it applied.
func (f *FSM) applyAutopilotConfig(body []byte, index uint64) interface{} {
	var req structs.AutopilotSetConfigRequest
	if err := decode(body, structs.AutopilotRequestType, &req); err != nil {
		return err
	}
	if req.CAS {
		applied, err := f.State().AutopilotCASConfig(index, req.Config.ModifyIndex, &req.Config)
		if err != nil {
			return err
		}
		return applied
	}
	if err := f.State().AutopilotSetConfig(index, &req.Config); err != nil {
		return err
	}
	return true
}
