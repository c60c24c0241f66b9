package structs_test

import (
	"testing"

	"github.com/opennomad/nomad/structs"
)

// TestMessageTypeNumbers pins every Raft message type to its number. The
// numbers are written into every Raft log entry and snapshot: changing one
// makes existing logs decode as the wrong request. If this test fails,
// restore the number; new types only ever get new numbers.
func TestMessageTypeNumbers(t *testing.T) {
	pinned := []struct {
		typ  structs.MessageType
		num  uint8
		name string
	}{
		{structs.NodeRegisterRequestType, 0, "NodeRegister"},
		{structs.NodeDeregisterRequestType, 1, "NodeDeregister"},
		{structs.NodeUpdateStatusRequestType, 2, "NodeUpdateStatus"},
		{structs.NodeUpdateDrainRequestType, 3, "NodeUpdateDrain"},
		{structs.JobRegisterRequestType, 4, "JobRegister"},
		{structs.JobDeregisterRequestType, 5, "JobDeregister"},
		{structs.EvalUpdateRequestType, 6, "EvalUpdate"},
		{structs.EvalDeleteRequestType, 7, "EvalDelete"},
		{structs.AllocUpdateRequestType, 8, "AllocUpdate"},
		{structs.AllocClientUpdateRequestType, 9, "AllocClientUpdate"},
		{structs.ReconcileJobSummariesRequestType, 10, "ReconcileJobSummaries"},
		{structs.ApplyPlanResultsRequestType, 13, "ApplyPlanResults"},
		{structs.DeploymentStatusUpdateRequestType, 14, "DeploymentStatusUpdate"},
		{structs.DeploymentPromoteRequestType, 15, "DeploymentPromote"},
		{structs.DeploymentAllocHealthRequestType, 16, "DeploymentAllocHealth"},
		{structs.DeploymentDeleteRequestType, 17, "DeploymentDelete"},
		{structs.JobStabilityRequestType, 18, "JobStability"},
		{structs.JobBatchDeregisterRequestType, 26, "JobBatchDeregister"},
		{structs.AllocUpdateDesiredTransitionRequestType, 27, "AllocUpdateDesiredTransition"},
		{structs.NodeUpdateEligibilityRequestType, 28, "NodeUpdateEligibility"},
		{structs.BatchNodeUpdateDrainRequestType, 29, "BatchNodeUpdateDrain"},
		{structs.SchedulerConfigRequestType, 30, "SchedulerConfig"},
		{structs.NodeBatchDeregisterRequestType, 31, "NodeBatchDeregister"},
		{structs.ClusterMetadataRequestType, 32, "ClusterMetadata"},
		{structs.DeploymentAllocHealthBatchRequestType, 33, "DeploymentAllocHealthBatch"},
		{structs.RootKeyUpsertRequestType, 100, "RootKeyUpsert"},
		{structs.RootKeyDeleteRequestType, 101, "RootKeyDelete"},
		{structs.ACLPoliciesUpsertRequestType, 102, "ACLPoliciesUpsert"},
		{structs.ACLPoliciesDeleteRequestType, 103, "ACLPoliciesDelete"},
		{structs.ACLTokensUpsertRequestType, 104, "ACLTokensUpsert"},
		{structs.ACLTokensDeleteRequestType, 105, "ACLTokensDelete"},
		{structs.ACLTokenBootstrapRequestType, 106, "ACLTokenBootstrap"},
		{structs.ACLRolesUpsertRequestType, 107, "ACLRolesUpsert"},
		{structs.ACLRolesDeleteRequestType, 108, "ACLRolesDelete"},
		{structs.OneTimeTokenUpsertRequestType, 109, "OneTimeTokenUpsert"},
		{structs.OneTimeTokenDeleteRequestType, 110, "OneTimeTokenDelete"},
		{structs.NamespaceUpsertRequestType, 111, "NamespaceUpsert"},
		{structs.NamespaceDeleteRequestType, 112, "NamespaceDelete"},
		{structs.NodePoolUpsertRequestType, 113, "NodePoolUpsert"},
		{structs.NodePoolDeleteRequestType, 114, "NodePoolDelete"},
		{structs.VarApplyStateRequestType, 115, "VarApplyState"},
		{structs.ScalingEventRegisterRequestType, 117, "ScalingEventRegister"},
		{structs.JobVersionTagRequestType, 118, "JobVersionTag"},
		{structs.ACLAuthMethodsUpsertRequestType, 119, "ACLAuthMethodsUpsert"},
		{structs.ACLAuthMethodsDeleteRequestType, 120, "ACLAuthMethodsDelete"},
		{structs.ACLBindingRulesUpsertRequestType, 121, "ACLBindingRulesUpsert"},
		{structs.ACLBindingRulesDeleteRequestType, 122, "ACLBindingRulesDelete"},
		{structs.AutopilotRequestType, 126, "Autopilot"},
		{structs.ServiceRegistrationUpsertRequestType, 123, "ServiceRegistrationUpsert"},
		{structs.ServiceRegistrationDeleteByIDRequestType, 124, "ServiceRegistrationDeleteByID"},
		{structs.ServiceRegistrationDeleteByAllocIDsRequestType, 125, "ServiceRegistrationDeleteByAllocIDs"},
		{structs.HostVolumeApplyRequestType, 127, "HostVolumeApply"},
	}
	seen := map[uint8]string{}
	for _, p := range pinned {
		if uint8(p.typ) != p.num {
			t.Errorf("%s is %d, must stay %d", p.name, uint8(p.typ), p.num)
		}
		if other, dup := seen[uint8(p.typ)]; dup {
			t.Errorf("%s and %s share number %d", p.name, other, uint8(p.typ))
		}
		seen[uint8(p.typ)] = p.name
		if got := p.typ.String(); got != p.name {
			t.Errorf("%d.String() = %q, want %q", p.num, got, p.name)
		}
		// The ignore flag keeps the name: old servers log what they skip.
		if got := (p.typ | structs.IgnoreUnknownTypeFlag).String(); got != p.name {
			t.Errorf("flagged %d.String() = %q", p.num, got)
		}
	}
	if structs.IgnoreUnknownTypeFlag != 0x80 {
		t.Errorf("IgnoreUnknownTypeFlag = %#x, must stay 0x80", uint8(structs.IgnoreUnknownTypeFlag))
	}
	if got := structs.MessageType(99).String(); got != "MessageType(99)" {
		t.Errorf("unknown type renders %q", got)
	}
}
