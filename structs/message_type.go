package structs

import "fmt"

// MessageType is the first byte of every Raft log entry; the rest is the
// msgpack body of the request it names. The numbers are part of the
// on-disk format: never renumber or reuse one, only append. Numbers not
// listed are reserved for features Nomad numbers but this server does not
// implement (ACLs, CSI, variables, ...), so a log can be read by both.
type MessageType uint8

// Raft message types, numbered as in Nomad.
const (
	NodeRegisterRequestType                 MessageType = 0
	NodeDeregisterRequestType               MessageType = 1
	NodeUpdateStatusRequestType             MessageType = 2
	NodeUpdateDrainRequestType              MessageType = 3
	JobRegisterRequestType                  MessageType = 4
	JobDeregisterRequestType                MessageType = 5
	EvalUpdateRequestType                   MessageType = 6
	EvalDeleteRequestType                   MessageType = 7
	AllocUpdateRequestType                  MessageType = 8 // deprecated: a no-op kept for numbering
	AllocClientUpdateRequestType            MessageType = 9
	ReconcileJobSummariesRequestType        MessageType = 10
	ApplyPlanResultsRequestType             MessageType = 13
	DeploymentStatusUpdateRequestType       MessageType = 14
	DeploymentPromoteRequestType            MessageType = 15
	DeploymentAllocHealthRequestType        MessageType = 16
	DeploymentDeleteRequestType             MessageType = 17
	JobStabilityRequestType                 MessageType = 18
	JobBatchDeregisterRequestType           MessageType = 26
	AllocUpdateDesiredTransitionRequestType MessageType = 27
	NodeUpdateEligibilityRequestType        MessageType = 28
	BatchNodeUpdateDrainRequestType         MessageType = 29
	SchedulerConfigRequestType              MessageType = 30
	NodeBatchDeregisterRequestType          MessageType = 31
	ClusterMetadataRequestType              MessageType = 32
	// DeploymentAllocHealthBatchRequestType carries many
	// DeploymentAllocHealth requests in one entry: ours (Nomad has no
	// such entry), in a number Nomad leaves free.
	DeploymentAllocHealthBatchRequestType MessageType = 33
	// Keyring entries. Nomad numbers its own keyring entries elsewhere;
	// these are ours, well above Nomad's.
	RootKeyUpsertRequestType MessageType = 100
	RootKeyDeleteRequestType MessageType = 101
	// ACL entries: ours too, numbered after the keyring's.
	ACLPoliciesUpsertRequestType  MessageType = 102
	ACLPoliciesDeleteRequestType  MessageType = 103
	ACLTokensUpsertRequestType    MessageType = 104
	ACLTokensDeleteRequestType    MessageType = 105
	ACLTokenBootstrapRequestType  MessageType = 106
	ACLRolesUpsertRequestType     MessageType = 107
	ACLRolesDeleteRequestType     MessageType = 108
	OneTimeTokenUpsertRequestType MessageType = 109
	OneTimeTokenDeleteRequestType MessageType = 110
	NamespaceUpsertRequestType    MessageType = 111
	NamespaceDeleteRequestType    MessageType = 112
	NodePoolUpsertRequestType     MessageType = 113
	NodePoolDeleteRequestType     MessageType = 114
	// VarApplyStateRequestType carries every write to a variable; the
	// request's Op says which.
	VarApplyStateRequestType MessageType = 115
	// Job scaling events and version tags: ours, after the namespaces'.
	ScalingEventRegisterRequestType MessageType = 117
	JobVersionTagRequestType        MessageType = 118
	// Auth methods and binding rules: ours, after the job entries.
	ACLAuthMethodsUpsertRequestType  MessageType = 119
	ACLAuthMethodsDeleteRequestType  MessageType = 120
	ACLBindingRulesUpsertRequestType MessageType = 121
	ACLBindingRulesDeleteRequestType MessageType = 122
	// AutopilotRequestType writes the autopilot configuration (Nomad's
	// number for it is 24; ours follows our own).
	AutopilotRequestType MessageType = 126
	// Native service registrations: ours, after the ACL entries.
	ServiceRegistrationUpsertRequestType           MessageType = 123
	ServiceRegistrationDeleteByIDRequestType       MessageType = 124
	ServiceRegistrationDeleteByAllocIDsRequestType MessageType = 125
	// HostVolumeApplyRequestType carries every write to dynamic host
	// volumes; the request's Op says which. One type for all: the numbers
	// above 127 carry IgnoreUnknownTypeFlag. (Nomad numbers its host
	// volume entries 75 and 76.)
	HostVolumeApplyRequestType MessageType = 127
)

// IgnoreUnknownTypeFlag marks a message type that an older server may skip
// rather than refuse; used for entries that carry optional bookkeeping.
const IgnoreUnknownTypeFlag MessageType = 0x80

var messageTypeNames = map[MessageType]string{
	NodeRegisterRequestType:                        "NodeRegister",
	NodeDeregisterRequestType:                      "NodeDeregister",
	NodeUpdateStatusRequestType:                    "NodeUpdateStatus",
	NodeUpdateDrainRequestType:                     "NodeUpdateDrain",
	JobRegisterRequestType:                         "JobRegister",
	JobDeregisterRequestType:                       "JobDeregister",
	EvalUpdateRequestType:                          "EvalUpdate",
	EvalDeleteRequestType:                          "EvalDelete",
	AllocUpdateRequestType:                         "AllocUpdate",
	AllocClientUpdateRequestType:                   "AllocClientUpdate",
	ReconcileJobSummariesRequestType:               "ReconcileJobSummaries",
	ApplyPlanResultsRequestType:                    "ApplyPlanResults",
	DeploymentStatusUpdateRequestType:              "DeploymentStatusUpdate",
	DeploymentPromoteRequestType:                   "DeploymentPromote",
	DeploymentAllocHealthRequestType:               "DeploymentAllocHealth",
	DeploymentDeleteRequestType:                    "DeploymentDelete",
	JobStabilityRequestType:                        "JobStability",
	JobBatchDeregisterRequestType:                  "JobBatchDeregister",
	AllocUpdateDesiredTransitionRequestType:        "AllocUpdateDesiredTransition",
	NodeUpdateEligibilityRequestType:               "NodeUpdateEligibility",
	BatchNodeUpdateDrainRequestType:                "BatchNodeUpdateDrain",
	SchedulerConfigRequestType:                     "SchedulerConfig",
	NodeBatchDeregisterRequestType:                 "NodeBatchDeregister",
	ClusterMetadataRequestType:                     "ClusterMetadata",
	DeploymentAllocHealthBatchRequestType:          "DeploymentAllocHealthBatch",
	RootKeyUpsertRequestType:                       "RootKeyUpsert",
	RootKeyDeleteRequestType:                       "RootKeyDelete",
	ACLPoliciesUpsertRequestType:                   "ACLPoliciesUpsert",
	ACLPoliciesDeleteRequestType:                   "ACLPoliciesDelete",
	ACLTokensUpsertRequestType:                     "ACLTokensUpsert",
	ACLTokensDeleteRequestType:                     "ACLTokensDelete",
	ACLTokenBootstrapRequestType:                   "ACLTokenBootstrap",
	ACLRolesUpsertRequestType:                      "ACLRolesUpsert",
	ACLRolesDeleteRequestType:                      "ACLRolesDelete",
	OneTimeTokenUpsertRequestType:                  "OneTimeTokenUpsert",
	OneTimeTokenDeleteRequestType:                  "OneTimeTokenDelete",
	NamespaceUpsertRequestType:                     "NamespaceUpsert",
	NamespaceDeleteRequestType:                     "NamespaceDelete",
	NodePoolUpsertRequestType:                      "NodePoolUpsert",
	NodePoolDeleteRequestType:                      "NodePoolDelete",
	VarApplyStateRequestType:                       "VarApplyState",
	ScalingEventRegisterRequestType:                "ScalingEventRegister",
	JobVersionTagRequestType:                       "JobVersionTag",
	ACLAuthMethodsUpsertRequestType:                "ACLAuthMethodsUpsert",
	ACLAuthMethodsDeleteRequestType:                "ACLAuthMethodsDelete",
	ACLBindingRulesUpsertRequestType:               "ACLBindingRulesUpsert",
	ACLBindingRulesDeleteRequestType:               "ACLBindingRulesDelete",
	AutopilotRequestType:                           "Autopilot",
	ServiceRegistrationUpsertRequestType:           "ServiceRegistrationUpsert",
	ServiceRegistrationDeleteByIDRequestType:       "ServiceRegistrationDeleteByID",
	ServiceRegistrationDeleteByAllocIDsRequestType: "ServiceRegistrationDeleteByAllocIDs",
	HostVolumeApplyRequestType:                     "HostVolumeApply",
}

// String names the message type for logs and metrics.
func (t MessageType) String() string {
	if n, ok := messageTypeNames[t&^IgnoreUnknownTypeFlag]; ok {
		return n
	}
	return fmt.Sprintf("MessageType(%d)", uint8(t))
}
