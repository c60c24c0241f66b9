package agent

// nomadEndpoint is one endpoint of Nomad's HTTP API as its API
// documentation lists it: a method and a path pattern whose ":name"
// segments stand for an object's ID or name. A query after "?" is part of
// what tells two endpoints on one path apart (the volume lists by type,
// the variable lock operations).
type nomadEndpoint struct {
	Method, Path string
}

func (e nomadEndpoint) String() string { return e.Method + " " + e.Path }

// nomadEndpoints is every endpoint of Nomad's HTTP API, community edition
// and Enterprise, page by page of its API documentation. The agent's own
// endpoints that Nomad does not have are not listed (they are this
// project's extensions).
var nomadEndpoints = []nomadEndpoint{
	// ACL policies.
	{"GET", "/v1/acl/policies"},
	{"POST", "/v1/acl/policy/:policy_name"},
	{"GET", "/v1/acl/policy/:policy_name"},
	{"GET", "/v1/acl/policy/self"},
	{"DELETE", "/v1/acl/policy/:policy_name"},
	// ACL tokens.
	{"POST", "/v1/acl/bootstrap"},
	{"GET", "/v1/acl/tokens"},
	{"POST", "/v1/acl/token"},
	{"POST", "/v1/acl/token/:accessor_id"},
	{"GET", "/v1/acl/token/:accessor_id"},
	{"GET", "/v1/acl/token/self"},
	{"DELETE", "/v1/acl/token/:accessor_id"},
	{"POST", "/v1/acl/token/onetime"},
	{"POST", "/v1/acl/token/onetime/exchange"},
	// ACL roles.
	{"POST", "/v1/acl/role"},
	{"POST", "/v1/acl/role/:role_id"},
	{"GET", "/v1/acl/roles"},
	{"GET", "/v1/acl/role/:role_id"},
	{"GET", "/v1/acl/role/name/:role_name"},
	{"DELETE", "/v1/acl/role/:role_id"},
	// ACL auth methods.
	{"POST", "/v1/acl/auth-method"},
	{"POST", "/v1/acl/auth-method/:method_name"},
	{"GET", "/v1/acl/auth-methods"},
	{"GET", "/v1/acl/auth-method/:method_name"},
	{"DELETE", "/v1/acl/auth-method/:method_name"},
	// ACL binding rules.
	{"POST", "/v1/acl/binding-rule"},
	{"POST", "/v1/acl/binding-rule/:binding_rule_id"},
	{"GET", "/v1/acl/binding-rules"},
	{"GET", "/v1/acl/binding-rule/:binding_rule_id"},
	{"DELETE", "/v1/acl/binding-rule/:binding_rule_id"},
	// ACL login (OIDC and JWT) and client introduction.
	{"POST", "/v1/acl/oidc/auth-url"},
	{"POST", "/v1/acl/oidc/complete-auth"},
	{"POST", "/v1/acl/login"},
	{"POST", "/v1/acl/identity/client-introduction-token"},

	// Agent.
	{"GET", "/v1/agent/members"},
	{"GET", "/v1/agent/servers"},
	{"PUT", "/v1/agent/servers"},
	{"GET", "/v1/agent/self"},
	{"PUT", "/v1/agent/join"},
	{"PUT", "/v1/agent/force-leave"},
	{"GET", "/v1/agent/health"},
	{"GET", "/v1/agent/host"},
	{"PUT", "/v1/agent/reload"},
	{"GET", "/v1/agent/schedulers"},
	{"GET", "/v1/agent/schedulers/config"},
	{"POST", "/v1/agent/schedulers/config"},
	{"GET", "/v1/agent/monitor"},
	{"GET", "/v1/agent/monitor/export"},
	{"GET", "/v1/agent/pprof/cmdline"},
	{"GET", "/v1/agent/pprof/profile"},
	{"GET", "/v1/agent/pprof/trace"},
	{"GET", "/v1/agent/pprof/goroutine"},
	{"GET", "/v1/agent/pprof/heap"},
	{"GET", "/v1/agent/pprof/allocs"},
	{"GET", "/v1/agent/pprof/threadcreate"},
	{"GET", "/v1/agent/pprof/block"},
	{"GET", "/v1/agent/pprof/mutex"},
	{"GET", "/v1/agent/keyring/list"},
	{"PUT", "/v1/agent/keyring/install"},
	{"PUT", "/v1/agent/keyring/use"},
	{"PUT", "/v1/agent/keyring/remove"},

	// Allocations.
	{"GET", "/v1/allocations"},
	{"GET", "/v1/allocation/:alloc_id"},
	{"POST", "/v1/allocation/:alloc_id/stop"},
	{"GET", "/v1/allocation/:alloc_id/services"},

	// Client: the agent that runs the allocation or is the node.
	{"GET", "/v1/client/stats"},
	{"GET", "/v1/client/gc"},
	{"GET", "/v1/client/metadata"},
	{"POST", "/v1/client/metadata"},
	{"GET", "/v1/client/identity"},
	{"POST", "/v1/client/identity/renew"},
	{"GET", "/v1/client/allocation/:alloc_id/stats"},
	{"GET", "/v1/client/allocation/:alloc_id/checks"},
	{"GET", "/v1/client/allocation/:alloc_id/gc"},
	{"POST", "/v1/client/allocation/:alloc_id/restart"},
	{"POST", "/v1/client/allocation/:alloc_id/signal"},
	{"GET", "/v1/client/allocation/:alloc_id/exec"},
	{"GET", "/v1/client/allocation/:alloc_id/pause"},
	{"POST", "/v1/client/allocation/:alloc_id/pause"},
	{"GET", "/v1/client/fs/ls/:alloc_id"},
	{"GET", "/v1/client/fs/stat/:alloc_id"},
	{"GET", "/v1/client/fs/readat/:alloc_id"},
	{"GET", "/v1/client/fs/cat/:alloc_id"},
	{"GET", "/v1/client/fs/stream/:alloc_id"},
	{"GET", "/v1/client/fs/logs/:alloc_id"},

	// Deployments.
	{"GET", "/v1/deployments"},
	{"GET", "/v1/deployment/:deployment_id"},
	{"GET", "/v1/deployment/allocations/:deployment_id"},
	{"POST", "/v1/deployment/fail/:deployment_id"},
	{"POST", "/v1/deployment/pause/:deployment_id"},
	{"POST", "/v1/deployment/promote/:deployment_id"},
	{"POST", "/v1/deployment/allocation-health/:deployment_id"},
	{"POST", "/v1/deployment/unblock/:deployment_id"},

	// Evaluations.
	{"GET", "/v1/evaluations"},
	{"GET", "/v1/evaluations/count"},
	{"DELETE", "/v1/evaluations"},
	{"GET", "/v1/evaluation/:eval_id"},
	{"GET", "/v1/evaluation/:eval_id/allocations"},

	// Events.
	{"GET", "/v1/event/stream"},

	// Jobs.
	{"GET", "/v1/jobs"},
	{"POST", "/v1/jobs"},
	{"POST", "/v1/jobs/parse"},
	{"GET", "/v1/jobs/statuses"},
	{"GET", "/v1/job/:job_id"},
	{"POST", "/v1/job/:job_id"},
	{"DELETE", "/v1/job/:job_id"},
	{"GET", "/v1/job/:job_id/versions"},
	{"POST", "/v1/job/:job_id/versions/:tag_name/tag"},
	{"DELETE", "/v1/job/:job_id/versions/:tag_name/tag"},
	{"GET", "/v1/job/:job_id/submission"},
	{"GET", "/v1/job/:job_id/allocations"},
	{"GET", "/v1/job/:job_id/evaluations"},
	{"GET", "/v1/job/:job_id/deployments"},
	{"GET", "/v1/job/:job_id/deployment"},
	{"GET", "/v1/job/:job_id/summary"},
	{"POST", "/v1/job/:job_id/plan"},
	{"POST", "/v1/job/:job_id/evaluate"},
	{"POST", "/v1/job/:job_id/dispatch"},
	{"POST", "/v1/job/:job_id/revert"},
	{"POST", "/v1/job/:job_id/stable"},
	{"POST", "/v1/job/:job_id/periodic/force"},
	{"GET", "/v1/job/:job_id/scale"},
	{"POST", "/v1/job/:job_id/scale"},
	{"GET", "/v1/job/:job_id/services"},
	{"GET", "/v1/job/:job_id/actions"},
	{"GET", "/v1/job/:job_id/action"},
	{"POST", "/v1/validate/job"},

	// Metrics.
	{"GET", "/v1/metrics"},

	// Namespaces.
	{"GET", "/v1/namespaces"},
	{"GET", "/v1/namespace/:namespace"},
	{"POST", "/v1/namespace"},
	{"POST", "/v1/namespace/:namespace"},
	{"DELETE", "/v1/namespace/:namespace"},

	// Nodes.
	{"GET", "/v1/nodes"},
	{"GET", "/v1/node/:node_id"},
	{"GET", "/v1/node/:node_id/allocations"},
	{"POST", "/v1/node/:node_id/evaluate"},
	{"POST", "/v1/node/:node_id/drain"},
	{"POST", "/v1/node/:node_id/purge"},
	{"POST", "/v1/node/:node_id/eligibility"},

	// Node pools.
	{"GET", "/v1/node/pools"},
	{"GET", "/v1/node/pool/:pool_name"},
	{"POST", "/v1/node/pools"},
	{"POST", "/v1/node/pool/:pool_name"},
	{"DELETE", "/v1/node/pool/:pool_name"},
	{"GET", "/v1/node/pool/:pool_name/nodes"},
	{"GET", "/v1/node/pool/:pool_name/jobs"},

	// Operator: Raft, autopilot, keyring, scheduler, snapshot, license,
	// utilization, upgrade check.
	{"GET", "/v1/operator/raft/configuration"},
	{"DELETE", "/v1/operator/raft/peer"},
	{"PUT", "/v1/operator/raft/transfer-leadership"},
	{"GET", "/v1/operator/autopilot/configuration"},
	{"PUT", "/v1/operator/autopilot/configuration"},
	{"GET", "/v1/operator/autopilot/health"},
	{"GET", "/v1/operator/keyring/keys"},
	{"PUT", "/v1/operator/keyring/rotate"},
	{"DELETE", "/v1/operator/keyring/key/:key_id"},
	{"GET", "/v1/operator/scheduler/configuration"},
	{"POST", "/v1/operator/scheduler/configuration"},
	{"GET", "/v1/operator/snapshot"},
	{"PUT", "/v1/operator/snapshot"},
	{"GET", "/v1/operator/license"},
	{"PUT", "/v1/operator/license"},
	{"POST", "/v1/operator/utilization"},
	{"GET", "/v1/operator/upgrade-check/vault-workload-identity"},

	// Plugins (CSI).
	{"GET", "/v1/plugins?type=csi"},
	{"GET", "/v1/plugin/csi/:plugin_id"},

	// Quotas (Enterprise).
	{"GET", "/v1/quotas"},
	{"GET", "/v1/quota/:quota_name"},
	{"POST", "/v1/quota"},
	{"POST", "/v1/quota/:quota_name"},
	{"DELETE", "/v1/quota/:quota_name"},
	{"GET", "/v1/quota-usages"},
	{"GET", "/v1/quota/usage/:quota_name"},

	// Recommendations (Enterprise).
	{"GET", "/v1/recommendations"},
	{"GET", "/v1/recommendation/:recommendation_id"},
	{"POST", "/v1/recommendation"},
	{"DELETE", "/v1/recommendation/:recommendation_id"},
	{"POST", "/v1/recommendations/apply"},

	// Regions.
	{"GET", "/v1/regions"},

	// Scaling policies.
	{"GET", "/v1/scaling/policies"},
	{"GET", "/v1/scaling/policy/:policy_id"},

	// Search.
	{"POST", "/v1/search"},
	{"POST", "/v1/search/fuzzy"},

	// Sentinel policies (Enterprise).
	{"GET", "/v1/sentinel/policies"},
	{"POST", "/v1/sentinel/policy/:policy_name"},
	{"GET", "/v1/sentinel/policy/:policy_name"},
	{"DELETE", "/v1/sentinel/policy/:policy_name"},

	// Services.
	{"GET", "/v1/services"},
	{"GET", "/v1/service/:service_name"},
	{"DELETE", "/v1/service/:service_name/:service_id"},

	// Status.
	{"GET", "/v1/status/leader"},
	{"GET", "/v1/status/peers"},

	// System.
	{"PUT", "/v1/system/gc"},
	{"PUT", "/v1/system/reconcile/summaries"},

	// Variables.
	{"GET", "/v1/vars"},
	{"GET", "/v1/var/:var_path"},
	{"PUT", "/v1/var/:var_path"},
	{"DELETE", "/v1/var/:var_path"},
	{"PUT", "/v1/var/:var_path?lock-acquire"},
	{"PUT", "/v1/var/:var_path?lock-renew"},
	{"PUT", "/v1/var/:var_path?lock-release"},

	// Volumes: CSI.
	{"GET", "/v1/volumes?type=csi"},
	{"GET", "/v1/volume/csi/:volume_id"},
	{"PUT", "/v1/volume/csi/:volume_id"},
	{"PUT", "/v1/volume/csi/:volume_id/create"},
	{"DELETE", "/v1/volume/csi/:volume_id"},
	{"DELETE", "/v1/volume/csi/:volume_id/delete"},
	{"DELETE", "/v1/volume/csi/:volume_id/detach"},
	{"GET", "/v1/volumes/external"},
	{"POST", "/v1/volumes/snapshot"},
	{"DELETE", "/v1/volumes/snapshot"},
	{"GET", "/v1/volumes/snapshot"},

	// Volumes: host (dynamic host volumes and their claims).
	{"GET", "/v1/volumes?type=host"},
	{"GET", "/v1/volume/host/:volume_id"},
	{"PUT", "/v1/volume/host/create"},
	{"PUT", "/v1/volume/host/register"},
	{"DELETE", "/v1/volume/host/:volume_id"},
	{"GET", "/v1/volumes/claims"},
	{"DELETE", "/v1/volumes/claim/:claim_id"},

	// Workload identity: the keys that verify it, for third parties.
	{"GET", "/.well-known/jwks.json"},
	{"GET", "/.well-known/openid-configuration"},
}
