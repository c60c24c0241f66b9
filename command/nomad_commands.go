package command

// nomadCommandTree is every command of Nomad's own CLI (community
// edition, with the commands it ships for Enterprise features, the
// one-word aliases and the older forms), in the order of its reference.
// The command-tree test holds the registered commands against it, and
// the compatibility page's table of commands is generated from it.
var nomadCommandTree = []string{
	"acl", "acl auth-method", "acl auth-method create", "acl auth-method delete", "acl auth-method info",
	"acl auth-method list", "acl auth-method update", "acl binding-rule", "acl binding-rule create",
	"acl binding-rule delete", "acl binding-rule info", "acl binding-rule list", "acl binding-rule update",
	"acl bootstrap", "acl policy", "acl policy apply", "acl policy delete", "acl policy info", "acl policy list",
	"acl policy self", "acl role", "acl role create", "acl role delete", "acl role info", "acl role list",
	"acl role update", "acl token", "acl token create", "acl token delete", "acl token info", "acl token list",
	"acl token self", "acl token update",
	"action",
	"agent", "agent-info",
	"alloc", "alloc checks", "alloc exec", "alloc fs", "alloc logs", "alloc pause", "alloc restart",
	"alloc signal", "alloc status", "alloc stop", "alloc-status",
	"check",
	"client-config",
	"config", "config validate",
	"debug",
	"deployment", "deployment fail", "deployment list", "deployment pause", "deployment promote",
	"deployment resume", "deployment status", "deployment unblock",
	"eval", "eval delete", "eval list", "eval status", "eval-status",
	"exec",
	"fmt",
	"fs",
	"init", "inspect",
	"job", "job action", "job allocs", "job deployments", "job dispatch", "job eval", "job history", "job init",
	"job inspect", "job periodic", "job periodic force", "job plan", "job promote", "job restart", "job revert",
	"job run", "job scale", "job scaling-events", "job start", "job status", "job stop", "job tag",
	"job tag apply", "job tag unset", "job validate",
	"keygen", "keyring",
	"license", "license get",
	"login",
	"logs",
	"monitor", "monitor export",
	"namespace", "namespace apply", "namespace delete", "namespace inspect", "namespace list", "namespace status",
	"node", "node config", "node drain", "node eligibility", "node identity", "node identity get",
	"node identity renew", "node intro", "node intro create", "node meta", "node meta apply", "node meta read",
	"node pool", "node pool apply", "node pool delete", "node pool info", "node pool init", "node pool jobs",
	"node pool list", "node pool nodes", "node status", "node-drain", "node-status",
	"operator", "operator api", "operator autopilot", "operator autopilot get-config",
	"operator autopilot health", "operator autopilot set-config", "operator client-state", "operator debug",
	"operator gossip", "operator gossip keyring", "operator gossip keyring generate",
	"operator gossip keyring install", "operator gossip keyring list", "operator gossip keyring remove",
	"operator gossip keyring use", "operator keygen", "operator keyring", "operator metrics", "operator raft",
	"operator raft info", "operator raft list-peers", "operator raft logs", "operator raft remove-peer",
	"operator raft state", "operator raft transfer-leadership", "operator root", "operator root keyring",
	"operator root keyring list", "operator root keyring remove", "operator root keyring rotate",
	"operator scheduler", "operator scheduler get-config", "operator scheduler get-num-schedulers",
	"operator scheduler set-config", "operator scheduler set-num-schedulers", "operator snapshot",
	"operator snapshot agent", "operator snapshot inspect", "operator snapshot redact",
	"operator snapshot restore", "operator snapshot save", "operator snapshot state", "operator utilization",
	"plan",
	"plugin", "plugin status",
	"quota", "quota apply", "quota delete", "quota init", "quota inspect", "quota list", "quota status",
	"recommendation", "recommendation apply", "recommendation dismiss", "recommendation info",
	"recommendation list",
	"run",
	"scaling", "scaling policy", "scaling policy info", "scaling policy list",
	"sentinel", "sentinel apply", "sentinel delete", "sentinel list", "sentinel read",
	"server", "server force-leave", "server join", "server members", "server-force-leave", "server-join",
	"server-members",
	"service", "service delete", "service info", "service list",
	"setup", "setup consul", "setup vault",
	"start", "status", "stop",
	"system", "system gc", "system reconcile", "system reconcile summaries",
	"tls", "tls ca", "tls ca create", "tls ca info", "tls cert", "tls cert create", "tls cert info",
	"ui",
	"validate",
	"var", "var get", "var init", "var list", "var lock", "var purge", "var put",
	"version",
	"volume", "volume claim", "volume claim delete", "volume claim list", "volume create", "volume delete",
	"volume deregister", "volume detach", "volume init", "volume register", "volume snapshot",
	"volume snapshot create", "volume snapshot delete", "volume snapshot list", "volume status",
}

// ownCommands are registered commands Nomad does not have: this
// project's benchmarking tools and an extra scheduler view.
var ownCommands = map[string]string{
	"nodesim":                    "the node simulator of the benchmarks",
	"loadgen":                    "the load generator of the benchmarks",
	"operator scheduler workers": "the scheduler workers of the agent, paused or resumed",
}

// commandDifferences says how a registered command differs from Nomad's,
// for the compatibility page. A command not listed behaves as Nomad's.
var commandDifferences = map[string]string{
	"job restart":               "the progress lines may be worded differently from Nomad's",
	"job allocs":                "times are absolute, not relative",
	"eval delete":               "`-filter` is refused (the server does not delete by filter)",
	"operator debug":            "logs and profiles of the agent addressed only (others are listed in the capture's errors.txt); no event stream, no Consul or Vault data",
	"fmt":                       "files are parsed with HCL2 only (as Nomad does since 1.5)",
	"alloc fs":                  "`-f` (follow) is refused: files are read once",
	"ui":                        "`-authenticate` is refused (no one-time tokens)",
	"operator snapshot inspect": "prints the Raft metadata only, not the count of each object type",
	"operator client-state":     "Nomad's JSON shape read from this client's own store; `LocalState` holds only `TaskHandle` (driver, task ID, start time, driver data)",
	"operator snapshot state":   "namespaces, node pools, nodes, jobs, evaluations, allocations and deployments; no secrets (node secret IDs blanked, no ACL tokens, keys or variables)",
	"node config":               "`-update-servers` is refused by the agent: a client's servers come from its configuration",
	"monitor":                   "streams the agent addressed only; `-log-include-location` is accepted and ignored",
	"keygen":                    "Nomad removed the one-word form",
	"keyring":                   "Nomad removed the one-word form",
	"volume create":             "host volumes only (the client's built-in `mkdir` plugin); a CSI specification is refused",
	"volume register":           "host volumes only; a CSI specification is refused",
	"volume status":             "host volumes only (`-type csi` is refused)",
	"volume delete":             "host volumes only: `-type` defaults to `host` (Nomad's default is `csi`)",
}

// missingCommandReasons says why a Nomad command is not registered, when
// there is more to say than that it is not built yet.
var missingCommandReasons = map[string]string{
	"monitor export":                        "no export of agent log files",
	"operator scheduler get-num-schedulers": "not built; `nomad operator scheduler workers` reads the agent's scheduler workers",
	"operator scheduler set-num-schedulers": "not built; `nomad operator scheduler workers -num` sets the agent's scheduler workers",
}
