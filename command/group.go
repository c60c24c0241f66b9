package command

import (
	"strings"

	"github.com/hashicorp/cli"
)

// groupCommand is a noun such as "job" or "operator scheduler" whose only
// job is to print its help; the CLI library appends the list of its
// subcommands.
type groupCommand struct {
	Meta
	name string
	help string
}

func newGroup(m Meta, name, help string) *groupCommand {
	return &groupCommand{Meta: m, name: name, help: strings.TrimSpace(help)}
}

// Help implements cli.Command.
func (c *groupCommand) Help() string { return c.help }

// Synopsis implements cli.Command.
func (c *groupCommand) Synopsis() string {
	return groupSynopses[c.name]
}

// Run implements cli.Command: a bare noun prints its help.
func (c *groupCommand) Run([]string) int { return cli.RunResultHelp }

var groupSynopses = map[string]string{
	"job":                   "Interact with jobs",
	"job tag":               "Tag and untag job versions",
	"job periodic":          "Interact with periodic jobs",
	"node":                  "Interact with nodes",
	"node pool":             "Interact with node pools",
	"node identity":         "Read and renew node identities",
	"node meta":             "Interact with node metadata",
	"node intro":            "Manage node introduction tokens",
	"alloc":                 "Interact with allocations",
	"eval":                  "Interact with evaluations",
	"deployment":            "Interact with deployments",
	"server":                "Interact with servers",
	"operator":              "Cluster operator commands",
	"operator raft":         "Inspect and change the Raft configuration",
	"operator autopilot":    "Inspect and change the servers' Autopilot",
	"operator snapshot":     "Save and restore snapshots of the cluster state",
	"operator root":         "Manage the cluster's root keys",
	"operator root keyring": "List, rotate and remove the root keys",
	"acl":                   "Interact with ACL policies, tokens and roles",
	"namespace":             "Interact with namespaces",
	"volume":                "Interact with host volumes",
	"service":               "Interact with registered services",
	"var":                   "Interact with variables",
	"acl policy":            "Interact with ACL policies",
	"acl token":             "Interact with ACL tokens",
	"acl role":              "Interact with ACL roles",
	"acl auth-method":       "Interact with ACL auth methods",
	"acl binding-rule":      "Interact with ACL binding rules",
	"operator scheduler":    "Inspect and tune the schedulers",
	"operator gossip":       "Manage the encryption of the servers' gossip",
	"system":                "Interact with the system API",
	"scaling":               "Interact with the Nomad scaling endpoint",
	"scaling policy":        "Interact with Nomad scaling policies",
	"config":                "Interact with configurations",
	"system reconcile":      "Repair what the servers derive from their state",
	"tls":                   "Generate self-signed TLS certificates for Nomad",
	"tls ca":                "Create or inspect the certificate authority",
	"tls cert":              "Create or inspect server, client and CLI certificates",
}

const jobGroupHelp = `
Usage: nomad job <subcommand> [options] [args]

  Register, plan, inspect and stop jobs. A job file is written in HCL;
  'nomad job init' writes an example that runs on a dev agent as is.

  Plan a job and see what the scheduler would do:

      $ nomad job plan example.nomad.hcl

  Run it and follow its evaluation:

      $ nomad job run example.nomad.hcl

  Look at it, then stop it:

      $ nomad job status example
      $ nomad job stop example

  Run 'nomad job <subcommand> -help' for a subcommand's flags.
`

const nodeGroupHelp = `
Usage: nomad node <subcommand> [options] [args]

  List client nodes and control whether they take new work: drain a node
  to move its allocations elsewhere, or toggle its scheduling eligibility.

      $ nomad node status
      $ nomad node drain -enable -deadline 30m <node-id>
      $ nomad node eligibility -disable <node-id>
      $ nomad node pool list

  Run 'nomad node <subcommand> -help' for a subcommand's flags.
`

const nodeIdentityGroupHelp = `
Usage: nomad node identity <subcommand> [options] [args]

  Read and renew the identity the servers issue each node: a JWT signed
  with the cluster's active root key, renewed by the node before it
  expires. The commands talk to the client agent running the node.

      $ nomad node identity get <node_id>
      $ nomad node identity renew <node_id>

  Run 'nomad node identity <subcommand> -help' for a subcommand's flags.
`

const nodeMetaGroupHelp = `
Usage: nomad node meta <subcommand> [options] [args]

  Read and change a node's dynamic metadata: values set at run time over
  the static meta of the client's configuration, seen by constraints on
  ${meta.<key>}. The commands talk to the client agent running the node.

      $ nomad node meta read
      $ nomad node meta apply -unset=zone rack=r2

  Run 'nomad node meta <subcommand> -help' for a subcommand's flags.
`

const allocGroupHelp = `
Usage: nomad alloc <subcommand> [options] [args]

  Inspect, follow and stop allocations, the task groups placed on nodes.

      $ nomad alloc status <alloc-id>
      $ nomad alloc logs -f <alloc-id> <task>
      $ nomad alloc restart <alloc-id>
      $ nomad alloc signal -s SIGHUP <alloc-id>
      $ nomad alloc checks <alloc-id>
      $ nomad alloc stop <alloc-id>

  Run 'nomad alloc <subcommand> -help' for a subcommand's flags.
`

const evalGroupHelp = `
Usage: nomad eval <subcommand> [options] [args]

  Inspect evaluations, the servers' units of scheduling work. An
  evaluation's status says whether the scheduler placed everything it was
  asked to, and if not, why.

      $ nomad eval list
      $ nomad eval status <eval-id>

  Run 'nomad eval <subcommand> -help' for a subcommand's flags.
`

const serverGroupHelp = `
Usage: nomad server <subcommand> [options] [args]

  Inspect the servers of the region and join them together.

      $ nomad server members
      $ nomad server join 10.0.0.2
      $ nomad server force-leave server-3.global

  Run 'nomad server <subcommand> -help' for a subcommand's flags.
`

const operatorGroupHelp = `
Usage: nomad operator <subcommand> [options] [args]

  Commands for cluster operators: the Raft peer set, snapshots of the
  cluster state, the cluster-wide scheduler configuration, the
  scheduler workers of each server, the root keyring and the gossip
  encryption keys.

      $ nomad operator raft list-peers
      $ nomad operator gossip keyring list
      $ nomad operator root keyring list
      $ nomad operator snapshot save backup.snap
      $ nomad operator scheduler get-config
      $ nomad operator scheduler workers

  Run 'nomad operator <subcommand> -help' for a subcommand's flags.
`

const operatorRaftGroupHelp = `
Usage: nomad operator raft <subcommand> [options]

  Inspect the servers' Raft configuration, and remove a server that is
  gone for good.

      $ nomad operator raft list-peers
      $ nomad operator raft remove-peer -peer-id=<id>
`

const operatorRootGroupHelp = `
Usage: nomad operator root <subcommand> [options]

  Manage the cluster's root keys: the keys that seal data at rest and
  sign workload identities.

      $ nomad operator root keyring list
      $ nomad operator root keyring rotate -now
`

const operatorRootKeyringGroupHelp = `
Usage: nomad operator root keyring <subcommand> [options] [args]

  List, rotate and remove the cluster's root keys. The leader makes the
  first key when the cluster starts and rotates it when it is older than
  server.root_key_rotation_threshold; the public halves of the signing
  keys are published at /.well-known/jwks.json.

  List the keys:

      $ nomad operator root keyring list

  Make a new active key at once, or publish one an hour before it becomes
  active:

      $ nomad operator root keyring rotate -now
      $ nomad operator root keyring rotate -prepublish 1h

  Remove an old key:

      $ nomad operator root keyring remove <key id>
`

const operatorSnapshotGroupHelp = `
Usage: nomad operator snapshot <subcommand> [options] <file>

  Save the cluster's whole state to a file, and restore it. Take one
  regularly as a backup: it is what brings a cluster back after losing
  its quorum.

      $ nomad operator snapshot save backup.snap
      $ nomad operator snapshot restore backup.snap

  'redact' removes the root keys' material from a saved file before it is
  handed over.
`

const operatorSchedulerGroupHelp = `
Usage: nomad operator scheduler <subcommand> [options]

  Read and change the cluster-wide scheduler configuration (stored in
  Raft, the same on every server), and list, pause, resume or resize the
  scheduler workers of one server.

      $ nomad operator scheduler get-config
      $ nomad operator scheduler set-config -scheduler-algorithm=spread
      $ nomad operator scheduler workers -num 4
`

const operatorGossipGroupHelp = `
Usage: nomad operator gossip <subcommand> [options] [args]

  Manage the keys that encrypt the gossip between the servers.

      $ nomad operator gossip keyring generate
      $ nomad operator gossip keyring list
      $ nomad operator gossip keyring install <key>
`

const systemGroupHelp = `
Usage: nomad system <subcommand> [options]

  Cluster-wide maintenance.

      $ nomad system gc
      $ nomad system reconcile summaries
`

const systemReconcileGroupHelp = `
Usage: nomad system reconcile <subcommand> [options]

  Recompute what the servers derive from their state.

      $ nomad system reconcile summaries
`

const configGroupHelp = `
Usage: nomad config <subcommand> [options]

  Check agent configuration files without starting an agent.

      $ nomad config validate /etc/nomad.d
`

const jobPeriodicGroupHelp = `
Usage: nomad job periodic <subcommand> [options]

  Interact with periodic jobs.

      $ nomad job periodic force <job>
`

const scalingGroupHelp = `
Usage: nomad scaling <subcommand> [options]

  Interact with the scaling policies of jobs.

      $ nomad scaling policy list
`

const scalingPolicyGroupHelp = `
Usage: nomad scaling policy <subcommand> [options]

  List and read the scaling policies of jobs.

      $ nomad scaling policy list
      $ nomad scaling policy info <policy>
`

const nodeIntroGroupHelp = `
Usage: nomad node intro <subcommand> [options]

  Manage the tokens new client nodes present when they first register.

      $ nomad node intro create -node-name=node-1 -ttl=15m
`
