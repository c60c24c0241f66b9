package acl

// Policy values: what a block's "policy" key may say.
const (
	PolicyDeny  = "deny"
	PolicyRead  = "read"
	PolicyList  = "list"
	PolicyWrite = "write"
	PolicyScale = "scale"
)

// Namespace capabilities, as Nomad spells them. A namespace block's
// "capabilities" list may name any of these.
const (
	NamespaceCapabilityDeny                      = "deny"
	NamespaceCapabilityListJobs                  = "list-jobs"
	NamespaceCapabilityParseJob                  = "parse-job"
	NamespaceCapabilityReadJob                   = "read-job"
	NamespaceCapabilitySubmitJob                 = "submit-job"
	NamespaceCapabilityDispatchJob               = "dispatch-job"
	NamespaceCapabilityReadLogs                  = "read-logs"
	NamespaceCapabilityReadFS                    = "read-fs"
	NamespaceCapabilityAllocExec                 = "alloc-exec"
	NamespaceCapabilityAllocNodeExec             = "alloc-node-exec"
	NamespaceCapabilityAllocLifecycle            = "alloc-lifecycle"
	NamespaceCapabilitySentinelOverride          = "sentinel-override"
	NamespaceCapabilityCSIRegisterPlugin         = "csi-register-plugin"
	NamespaceCapabilityCSIWriteVolume            = "csi-write-volume"
	NamespaceCapabilityCSIReadVolume             = "csi-read-volume"
	NamespaceCapabilityCSIListVolume             = "csi-list-volume"
	NamespaceCapabilityCSIMountVolume            = "csi-mount-volume"
	NamespaceCapabilityHostVolumeCreate          = "host-volume-create"
	NamespaceCapabilityHostVolumeRegister        = "host-volume-register"
	NamespaceCapabilityHostVolumeRead            = "host-volume-read"
	NamespaceCapabilityHostVolumeWrite           = "host-volume-write"
	NamespaceCapabilityHostVolumeDelete          = "host-volume-delete"
	NamespaceCapabilityListScalingPolicies       = "list-scaling-policies"
	NamespaceCapabilityReadScalingPolicy         = "read-scaling-policy"
	NamespaceCapabilityReadJobScaling            = "read-job-scaling"
	NamespaceCapabilityScaleJob                  = "scale-job"
	NamespaceCapabilitySubmitRecommendation      = "submit-recommendation"
	NamespaceCapabilityRegisterJob               = "register-job"
	NamespaceCapabilityRevertJob                 = "revert-job"
	NamespaceCapabilityDeregisterJob             = "deregister-job"
	NamespaceCapabilityPurgeJob                  = "purge-job"
	NamespaceCapabilityEvaluateJob               = "evaluate-job"
	NamespaceCapabilityPlanJob                   = "plan-job"
	NamespaceCapabilityTagJobVersion             = "tag-job-version"
	NamespaceCapabilityStableJob                 = "stable-job"
	NamespaceCapabilityFailDeployment            = "fail-deployment"
	NamespaceCapabilityPauseDeployment           = "pause-deployment"
	NamespaceCapabilityPromoteDeployment         = "promote-deployment"
	NamespaceCapabilityUnblockDeployment         = "unblock-deployment"
	NamespaceCapabilityCancelDeployment          = "cancel-deployment"
	NamespaceCapabilitySetAllocHealthDeployment  = "set-alloc-health-deployment"
	NamespaceCapabilityGCAllocation              = "gc-allocation"
	NamespaceCapabilityPauseAllocation           = "pause-allocation"
	NamespaceCapabilityForcePeriodicJob          = "force-periodic-job"
	NamespaceCapabilityDeleteServiceRegistration = "delete-service-registration"
)

// Node pool capabilities.
const (
	NodePoolCapabilityDeny   = "deny"
	NodePoolCapabilityRead   = "read"
	NodePoolCapabilityWrite  = "write"
	NodePoolCapabilityDelete = "delete"
)

// Host volume capabilities: whether a job may mount a host volume.
const (
	HostVolumeCapabilityDeny           = "deny"
	HostVolumeCapabilityMountReadOnly  = "mount-readonly"
	HostVolumeCapabilityMountReadWrite = "mount-readwrite"
)

// Operator capabilities: the operator actions checked one by one rather
// than by level.
const (
	OperatorCapabilityDeny          = "deny"
	OperatorCapabilitySnapshotSave  = "snapshot-save"
	OperatorCapabilityLicenseRead   = "license-read"
	OperatorCapabilityKeyringRotate = "keyring-rotate"
	OperatorCapabilityKeyringRead   = "keyring-read"
	OperatorCapabilityKeyringDelete = "keyring-delete"
)

// Variables capabilities, granted per (namespace, path glob).
const (
	VariablesCapabilityList    = "list"
	VariablesCapabilityRead    = "read"
	VariablesCapabilityWrite   = "write"
	VariablesCapabilityDestroy = "destroy"
	VariablesCapabilityDeny    = "deny"
)

// set builds a membership set of words.
func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

var (
	// policyValues are the values "policy" may take in every block but
	// plugin. scale is accepted everywhere, though it grants something only
	// in a namespace.
	policyValues = set(PolicyDeny, PolicyRead, PolicyWrite, PolicyScale)
	// pluginPolicyValues are the values of plugin's "policy".
	pluginPolicyValues = set(PolicyDeny, PolicyRead, PolicyList, PolicyWrite)

	namespaceCapabilities = set(
		NamespaceCapabilityDeny, NamespaceCapabilityListJobs, NamespaceCapabilityParseJob,
		NamespaceCapabilityReadJob, NamespaceCapabilitySubmitJob, NamespaceCapabilityDispatchJob,
		NamespaceCapabilityReadLogs, NamespaceCapabilityReadFS, NamespaceCapabilityAllocExec,
		NamespaceCapabilityAllocNodeExec, NamespaceCapabilityAllocLifecycle, NamespaceCapabilitySentinelOverride,
		NamespaceCapabilityCSIRegisterPlugin, NamespaceCapabilityCSIWriteVolume, NamespaceCapabilityCSIReadVolume,
		NamespaceCapabilityCSIListVolume, NamespaceCapabilityCSIMountVolume, NamespaceCapabilityHostVolumeCreate,
		NamespaceCapabilityHostVolumeRegister, NamespaceCapabilityHostVolumeRead, NamespaceCapabilityHostVolumeWrite,
		NamespaceCapabilityHostVolumeDelete, NamespaceCapabilityListScalingPolicies,
		NamespaceCapabilityReadScalingPolicy, NamespaceCapabilityReadJobScaling, NamespaceCapabilityScaleJob,
		NamespaceCapabilitySubmitRecommendation, NamespaceCapabilityRegisterJob, NamespaceCapabilityRevertJob,
		NamespaceCapabilityDeregisterJob, NamespaceCapabilityPurgeJob, NamespaceCapabilityEvaluateJob,
		NamespaceCapabilityPlanJob, NamespaceCapabilityTagJobVersion, NamespaceCapabilityStableJob,
		NamespaceCapabilityFailDeployment, NamespaceCapabilityPauseDeployment, NamespaceCapabilityPromoteDeployment,
		NamespaceCapabilityUnblockDeployment, NamespaceCapabilityCancelDeployment,
		NamespaceCapabilitySetAllocHealthDeployment, NamespaceCapabilityGCAllocation,
		NamespaceCapabilityPauseAllocation, NamespaceCapabilityForcePeriodicJob,
		NamespaceCapabilityDeleteServiceRegistration,
	)
	nodePoolCapabilities = set(NodePoolCapabilityDeny, NodePoolCapabilityRead, NodePoolCapabilityWrite,
		NodePoolCapabilityDelete)
	hostVolumeCapabilities = set(HostVolumeCapabilityDeny, HostVolumeCapabilityMountReadOnly,
		HostVolumeCapabilityMountReadWrite)
	operatorCapabilities = set(OperatorCapabilityDeny, OperatorCapabilitySnapshotSave,
		OperatorCapabilityLicenseRead, OperatorCapabilityKeyringRotate, OperatorCapabilityKeyringRead,
		OperatorCapabilityKeyringDelete)
	variablesCapabilities = set(VariablesCapabilityList, VariablesCapabilityRead, VariablesCapabilityWrite,
		VariablesCapabilityDestroy, VariablesCapabilityDeny)
)

// Shorthand expansions: the capabilities a block's policy value adds to
// its explicit list.
var (
	namespaceReadCaps = []string{
		NamespaceCapabilityListJobs, NamespaceCapabilityParseJob, NamespaceCapabilityReadJob,
		NamespaceCapabilityCSIListVolume, NamespaceCapabilityCSIReadVolume, NamespaceCapabilityReadJobScaling,
		NamespaceCapabilityListScalingPolicies, NamespaceCapabilityReadScalingPolicy,
		NamespaceCapabilityHostVolumeRead,
	}
	// namespaceWriteCaps is read plus these. alloc-node-exec is left out on
	// purpose: it must be granted by name.
	namespaceWriteCaps = append(append([]string{}, namespaceReadCaps...),
		NamespaceCapabilityScaleJob, NamespaceCapabilitySubmitJob, NamespaceCapabilityDispatchJob,
		NamespaceCapabilityReadLogs, NamespaceCapabilityReadFS, NamespaceCapabilityAllocExec,
		NamespaceCapabilityAllocLifecycle, NamespaceCapabilityCSIMountVolume, NamespaceCapabilityCSIWriteVolume,
		NamespaceCapabilitySubmitRecommendation, NamespaceCapabilityHostVolumeCreate,
	)
	namespaceScaleCaps = []string{
		NamespaceCapabilityListScalingPolicies, NamespaceCapabilityReadScalingPolicy,
		NamespaceCapabilityReadJobScaling, NamespaceCapabilityScaleJob, NamespaceCapabilityReadJob,
		NamespaceCapabilitySubmitRecommendation,
	}
)

// expandNamespacePolicy is what a namespace policy value grants.
func expandNamespacePolicy(policy string) []string {
	switch policy {
	case PolicyDeny:
		return []string{NamespaceCapabilityDeny}
	case PolicyRead:
		return namespaceReadCaps
	case PolicyWrite:
		return namespaceWriteCaps
	case PolicyScale:
		return namespaceScaleCaps
	}
	return nil
}

// expandHostVolumeNamespaceCaps adds what the host-volume namespace
// capabilities imply: write ⇒ register, create, delete, read; register ⇒
// create, read; create ⇒ read. caps is not modified.
func expandHostVolumeNamespaceCaps(caps []string) []string {
	out := append([]string{}, caps...)
	for _, c := range caps {
		switch c {
		case NamespaceCapabilityHostVolumeWrite:
			out = append(out, NamespaceCapabilityHostVolumeRegister, NamespaceCapabilityHostVolumeCreate,
				NamespaceCapabilityHostVolumeDelete, NamespaceCapabilityHostVolumeRead)
		case NamespaceCapabilityHostVolumeRegister:
			out = append(out, NamespaceCapabilityHostVolumeCreate, NamespaceCapabilityHostVolumeRead)
		case NamespaceCapabilityHostVolumeCreate:
			out = append(out, NamespaceCapabilityHostVolumeRead)
		}
	}
	return out
}

// expandNodePoolPolicy is what a node_pool policy value grants.
func expandNodePoolPolicy(policy string) []string {
	switch policy {
	case PolicyDeny:
		return []string{NodePoolCapabilityDeny}
	case PolicyRead:
		return []string{NodePoolCapabilityRead}
	case PolicyWrite:
		return []string{NodePoolCapabilityDelete, NodePoolCapabilityRead, NodePoolCapabilityWrite}
	}
	return nil
}

// expandHostVolumePolicy is what a host_volume policy value grants.
func expandHostVolumePolicy(policy string) []string {
	switch policy {
	case PolicyDeny:
		return []string{HostVolumeCapabilityDeny}
	case PolicyRead:
		return []string{HostVolumeCapabilityMountReadOnly}
	case PolicyWrite:
		return []string{HostVolumeCapabilityMountReadOnly, HostVolumeCapabilityMountReadWrite}
	}
	return nil
}

// expandOperatorPolicy is what an operator policy value grants.
func expandOperatorPolicy(policy string) []string {
	switch policy {
	case PolicyDeny:
		return []string{OperatorCapabilityDeny}
	case PolicyRead:
		return []string{OperatorCapabilityLicenseRead, OperatorCapabilityKeyringRead}
	case PolicyWrite:
		return []string{OperatorCapabilitySnapshotSave, OperatorCapabilityLicenseRead,
			OperatorCapabilityKeyringRotate, OperatorCapabilityKeyringRead, OperatorCapabilityKeyringDelete}
	}
	return nil
}

// expandVariablesCapabilities applies the variables rules: deny replaces
// every other capability, read implies list.
func expandVariablesCapabilities(caps []string) []string {
	out := make([]string, 0, len(caps)+1)
	hasList, hasRead := false, false
	for _, c := range caps {
		switch c {
		case VariablesCapabilityDeny:
			return []string{VariablesCapabilityDeny}
		case VariablesCapabilityList:
			hasList = true
		case VariablesCapabilityRead:
			hasRead = true
		}
		out = append(out, c)
	}
	if hasRead && !hasList {
		out = append(out, VariablesCapabilityList)
	}
	return out
}
