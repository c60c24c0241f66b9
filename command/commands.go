// Package command is the command-line interface of the nomad binary: every
// `nomad <noun> <verb>` command, speaking to an agent through the HTTP API
// (package api) only, with Nomad's flags, output and exit codes.
package command

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/hashicorp/cli"

	"github.com/opennomad/nomad/command/agent"
	"github.com/opennomad/nomad/version"
)

// Commands returns the factories of every command, keyed by its words
// ("job run"). Each factory copies meta, so commands never share flag
// state.
func Commands(meta Meta) map[string]cli.CommandFactory {
	all := map[string]func(Meta) cli.Command{
		"version": func(m Meta) cli.Command { return &VersionCommand{Meta: m} },
		"agent":   func(m Meta) cli.Command { return agent.NewCommand(m.Ui) },

		"job":                func(m Meta) cli.Command { return newGroup(m, "job", jobGroupHelp) },
		"job init":           func(m Meta) cli.Command { return &JobInitCommand{Meta: m} },
		"job run":            func(m Meta) cli.Command { return &JobRunCommand{Meta: m} },
		"job plan":           func(m Meta) cli.Command { return &JobPlanCommand{Meta: m} },
		"job status":         func(m Meta) cli.Command { return &JobStatusCommand{Meta: m} },
		"job stop":           func(m Meta) cli.Command { return &JobStopCommand{Meta: m} },
		"job inspect":        func(m Meta) cli.Command { return &JobInspectCommand{Meta: m} },
		"job history":        func(m Meta) cli.Command { return &JobHistoryCommand{Meta: m} },
		"job eval":           func(m Meta) cli.Command { return &JobEvalCommand{Meta: m} },
		"job validate":       func(m Meta) cli.Command { return &JobValidateCommand{Meta: m} },
		"job dispatch":       func(m Meta) cli.Command { return &JobDispatchCommand{Meta: m} },
		"job periodic":       func(m Meta) cli.Command { return newGroup(m, "job periodic", jobPeriodicGroupHelp) },
		"job periodic force": func(m Meta) cli.Command { return &JobPeriodicForceCommand{Meta: m} },
		"job revert":         func(m Meta) cli.Command { return &JobRevertCommand{Meta: m} },
		"job scale":          func(m Meta) cli.Command { return &JobScaleCommand{Meta: m} },
		"job scaling-events": func(m Meta) cli.Command { return &JobScalingEventsCommand{Meta: m} },
		"job tag":            func(m Meta) cli.Command { return newGroup(m, "job tag", jobTagGroupHelp) },
		"job tag apply":      func(m Meta) cli.Command { return &JobTagApplyCommand{Meta: m} },
		"job tag unset":      func(m Meta) cli.Command { return &JobTagUnsetCommand{Meta: m} },
		"job allocs":         func(m Meta) cli.Command { return &JobAllocsCommand{Meta: m} },
		"job start":          func(m Meta) cli.Command { return &JobStartCommand{Meta: m} },
		"job restart":        func(m Meta) cli.Command { return &JobRestartCommand{Meta: m} },
		"job action":         func(m Meta) cli.Command { return &JobActionCommand{Meta: m} },

		"node":                func(m Meta) cli.Command { return newGroup(m, "node", nodeGroupHelp) },
		"node status":         func(m Meta) cli.Command { return &NodeStatusCommand{Meta: m} },
		"node drain":          func(m Meta) cli.Command { return &NodeDrainCommand{Meta: m} },
		"node eligibility":    func(m Meta) cli.Command { return &NodeEligibilityCommand{Meta: m} },
		"node identity":       func(m Meta) cli.Command { return newGroup(m, "node identity", nodeIdentityGroupHelp) },
		"node identity get":   func(m Meta) cli.Command { return &NodeIdentityGetCommand{Meta: m} },
		"node identity renew": func(m Meta) cli.Command { return &NodeIdentityRenewCommand{Meta: m} },
		"node meta":           func(m Meta) cli.Command { return newGroup(m, "node meta", nodeMetaGroupHelp) },
		"node meta apply":     func(m Meta) cli.Command { return &NodeMetaApplyCommand{Meta: m} },
		"node meta read":      func(m Meta) cli.Command { return &NodeMetaReadCommand{Meta: m} },
		"node pool":           func(m Meta) cli.Command { return newGroup(m, "node pool", nodePoolGroupHelp) },
		"node pool apply":     func(m Meta) cli.Command { return &NodePoolApplyCommand{Meta: m} },
		"node pool delete":    func(m Meta) cli.Command { return &NodePoolDeleteCommand{Meta: m} },
		"node pool info":      func(m Meta) cli.Command { return &NodePoolInfoCommand{Meta: m} },
		"node pool init":      func(m Meta) cli.Command { return &NodePoolInitCommand{Meta: m} },
		"node pool jobs":      func(m Meta) cli.Command { return &NodePoolJobsCommand{Meta: m} },
		"node pool list":      func(m Meta) cli.Command { return &NodePoolListCommand{Meta: m} },
		"node pool nodes":     func(m Meta) cli.Command { return &NodePoolNodesCommand{Meta: m} },

		"alloc":         func(m Meta) cli.Command { return newGroup(m, "alloc", allocGroupHelp) },
		"alloc status":  func(m Meta) cli.Command { return &AllocStatusCommand{Meta: m} },
		"alloc stop":    func(m Meta) cli.Command { return &AllocStopCommand{Meta: m} },
		"alloc exec":    func(m Meta) cli.Command { return &AllocExecCommand{Meta: m} },
		"alloc logs":    func(m Meta) cli.Command { return &AllocLogsCommand{Meta: m} },
		"alloc restart": func(m Meta) cli.Command { return &AllocRestartCommand{Meta: m} },
		"alloc signal":  func(m Meta) cli.Command { return &AllocSignalCommand{Meta: m} },
		"alloc fs":      func(m Meta) cli.Command { return &AllocFSCommand{Meta: m} },
		"alloc checks":  func(m Meta) cli.Command { return &AllocChecksCommand{Meta: m} },

		"deployment":         func(m Meta) cli.Command { return newGroup(m, "deployment", deploymentGroupHelp) },
		"deployment list":    func(m Meta) cli.Command { return &DeploymentListCommand{Meta: m} },
		"deployment status":  func(m Meta) cli.Command { return &DeploymentStatusCommand{Meta: m} },
		"deployment promote": func(m Meta) cli.Command { return newDeploymentPromote(m) },
		"deployment pause":   func(m Meta) cli.Command { return newDeploymentPause(m) },
		"deployment resume":  func(m Meta) cli.Command { return newDeploymentResume(m) },
		"deployment fail":    func(m Meta) cli.Command { return newDeploymentFail(m) },
		"job deployments":    func(m Meta) cli.Command { return &JobDeploymentsCommand{Meta: m} },
		"job promote":        func(m Meta) cli.Command { return &JobPromoteCommand{Meta: m} },

		"eval":        func(m Meta) cli.Command { return newGroup(m, "eval", evalGroupHelp) },
		"eval list":   func(m Meta) cli.Command { return &EvalListCommand{Meta: m} },
		"eval status": func(m Meta) cli.Command { return &EvalStatusCommand{Meta: m} },
		"eval delete": func(m Meta) cli.Command { return &EvalDeleteCommand{Meta: m} },

		"server":             func(m Meta) cli.Command { return newGroup(m, "server", serverGroupHelp) },
		"server members":     func(m Meta) cli.Command { return &ServerMembersCommand{Meta: m} },
		"server join":        func(m Meta) cli.Command { return &ServerJoinCommand{Meta: m} },
		"server force-leave": func(m Meta) cli.Command { return &ServerForceLeaveCommand{Meta: m} },

		"operator":                          func(m Meta) cli.Command { return newGroup(m, "operator", operatorGroupHelp) },
		"operator raft":                     func(m Meta) cli.Command { return newGroup(m, "operator raft", operatorRaftGroupHelp) },
		"operator api":                      func(m Meta) cli.Command { return &OperatorAPICommand{Meta: m} },
		"operator autopilot":                func(m Meta) cli.Command { return newGroup(m, "operator autopilot", operatorAutopilotGroupHelp) },
		"operator autopilot get-config":     func(m Meta) cli.Command { return &OperatorAutopilotGetCommand{Meta: m} },
		"operator autopilot set-config":     func(m Meta) cli.Command { return &OperatorAutopilotSetCommand{Meta: m} },
		"operator autopilot health":         func(m Meta) cli.Command { return &OperatorAutopilotHealthCommand{Meta: m} },
		"operator raft list-peers":          func(m Meta) cli.Command { return &OperatorRaftListPeersCommand{Meta: m} },
		"operator raft remove-peer":         func(m Meta) cli.Command { return &OperatorRaftRemovePeerCommand{Meta: m} },
		"operator raft transfer-leadership": func(m Meta) cli.Command { return &OperatorRaftTransferLeadershipCommand{Meta: m} },
		"operator raft info":                func(m Meta) cli.Command { return &OperatorRaftInfoCommand{Meta: m} },
		"operator raft logs":                func(m Meta) cli.Command { return &OperatorRaftLogsCommand{Meta: m} },
		"operator raft state":               func(m Meta) cli.Command { return &OperatorRaftStateCommand{Meta: m} },
		"operator root":                     func(m Meta) cli.Command { return newGroup(m, "operator root", operatorRootGroupHelp) },
		"acl":                               func(m Meta) cli.Command { return newGroup(m, "acl", aclGroupHelp) },
		"acl bootstrap":                     func(m Meta) cli.Command { return &ACLBootstrapCommand{Meta: m} },
		"acl policy":                        func(m Meta) cli.Command { return newGroup(m, "acl policy", aclPolicyGroupHelp) },
		"acl policy apply":                  func(m Meta) cli.Command { return &ACLPolicyApplyCommand{Meta: m} },
		"acl policy list":                   func(m Meta) cli.Command { return &ACLPolicyListCommand{Meta: m} },
		"acl policy info":                   func(m Meta) cli.Command { return &ACLPolicyInfoCommand{Meta: m} },
		"acl policy delete":                 func(m Meta) cli.Command { return &ACLPolicyDeleteCommand{Meta: m} },
		"acl policy self":                   func(m Meta) cli.Command { return &ACLPolicySelfCommand{Meta: m} },
		"acl token":                         func(m Meta) cli.Command { return newGroup(m, "acl token", aclTokenGroupHelp) },
		"acl token create":                  func(m Meta) cli.Command { return &ACLTokenCreateCommand{Meta: m} },
		"acl token update":                  func(m Meta) cli.Command { return &ACLTokenUpdateCommand{Meta: m} },
		"acl token info":                    func(m Meta) cli.Command { return &ACLTokenInfoCommand{Meta: m} },
		"acl token self":                    func(m Meta) cli.Command { return &ACLTokenSelfCommand{Meta: m} },
		"acl token list":                    func(m Meta) cli.Command { return &ACLTokenListCommand{Meta: m} },
		"acl token delete":                  func(m Meta) cli.Command { return &ACLTokenDeleteCommand{Meta: m} },
		"acl role":                          func(m Meta) cli.Command { return newGroup(m, "acl role", aclRoleGroupHelp) },
		"acl role create":                   func(m Meta) cli.Command { return &ACLRoleCreateCommand{Meta: m} },
		"acl role update":                   func(m Meta) cli.Command { return &ACLRoleUpdateCommand{Meta: m} },
		"acl role info":                     func(m Meta) cli.Command { return &ACLRoleInfoCommand{Meta: m} },
		"acl role list":                     func(m Meta) cli.Command { return &ACLRoleListCommand{Meta: m} },
		"acl role delete":                   func(m Meta) cli.Command { return &ACLRoleDeleteCommand{Meta: m} },
		"acl auth-method":                   func(m Meta) cli.Command { return newGroup(m, "acl auth-method", aclAuthMethodGroupHelp) },
		"acl auth-method create":            func(m Meta) cli.Command { return &ACLAuthMethodCreateCommand{Meta: m} },
		"acl auth-method update":            func(m Meta) cli.Command { return &ACLAuthMethodUpdateCommand{Meta: m} },
		"acl auth-method info":              func(m Meta) cli.Command { return &ACLAuthMethodInfoCommand{Meta: m} },
		"acl auth-method list":              func(m Meta) cli.Command { return &ACLAuthMethodListCommand{Meta: m} },
		"acl auth-method delete":            func(m Meta) cli.Command { return &ACLAuthMethodDeleteCommand{Meta: m} },
		"acl binding-rule":                  func(m Meta) cli.Command { return newGroup(m, "acl binding-rule", aclBindingRuleGroupHelp) },
		"acl binding-rule create":           func(m Meta) cli.Command { return &ACLBindingRuleCreateCommand{Meta: m} },
		"acl binding-rule update":           func(m Meta) cli.Command { return &ACLBindingRuleUpdateCommand{Meta: m} },
		"acl binding-rule info":             func(m Meta) cli.Command { return &ACLBindingRuleInfoCommand{Meta: m} },
		"acl binding-rule list":             func(m Meta) cli.Command { return &ACLBindingRuleListCommand{Meta: m} },
		"acl binding-rule delete":           func(m Meta) cli.Command { return &ACLBindingRuleDeleteCommand{Meta: m} },
		"volume":                            func(m Meta) cli.Command { return newGroup(m, "volume", volumeGroupHelp) },
		"volume create":                     func(m Meta) cli.Command { return &VolumeCreateCommand{Meta: m} },
		"volume register":                   func(m Meta) cli.Command { return &VolumeCreateCommand{Meta: m, register: true} },
		"volume status":                     func(m Meta) cli.Command { return &VolumeStatusCommand{Meta: m} },
		"volume delete":                     func(m Meta) cli.Command { return &VolumeDeleteCommand{Meta: m} },
		"namespace":                         func(m Meta) cli.Command { return newGroup(m, "namespace", namespaceGroupHelp) },
		"namespace apply":                   func(m Meta) cli.Command { return &NamespaceApplyCommand{Meta: m} },
		"namespace list":                    func(m Meta) cli.Command { return &NamespaceListCommand{Meta: m} },
		"namespace status":                  func(m Meta) cli.Command { return &NamespaceStatusCommand{Meta: m} },
		"namespace inspect":                 func(m Meta) cli.Command { return &NamespaceInspectCommand{Meta: m} },
		"namespace delete":                  func(m Meta) cli.Command { return &NamespaceDeleteCommand{Meta: m} },
		"var":                               func(m Meta) cli.Command { return newGroup(m, "var", varGroupHelp) },
		"var init":                          func(m Meta) cli.Command { return &VarInitCommand{Meta: m} },
		"var put":                           func(m Meta) cli.Command { return &VarPutCommand{Meta: m} },
		"var get":                           func(m Meta) cli.Command { return &VarGetCommand{Meta: m} },
		"var list":                          func(m Meta) cli.Command { return &VarListCommand{Meta: m} },
		"var purge":                         func(m Meta) cli.Command { return &VarPurgeCommand{Meta: m} },
		"var lock":                          func(m Meta) cli.Command { return &VarLockCommand{Meta: m} },
		"service":                           func(m Meta) cli.Command { return newGroup(m, "service", serviceGroupHelp) },
		"service list":                      func(m Meta) cli.Command { return &ServiceListCommand{Meta: m} },
		"service info":                      func(m Meta) cli.Command { return &ServiceInfoCommand{Meta: m} },
		"service delete":                    func(m Meta) cli.Command { return &ServiceDeleteCommand{Meta: m} },

		"operator root keyring":         func(m Meta) cli.Command { return newGroup(m, "operator root keyring", operatorRootKeyringGroupHelp) },
		"operator root keyring list":    func(m Meta) cli.Command { return &OperatorRootKeyringListCommand{Meta: m} },
		"operator root keyring rotate":  func(m Meta) cli.Command { return &OperatorRootKeyringRotateCommand{Meta: m} },
		"operator root keyring remove":  func(m Meta) cli.Command { return &OperatorRootKeyringRemoveCommand{Meta: m} },
		"operator snapshot":             func(m Meta) cli.Command { return newGroup(m, "operator snapshot", operatorSnapshotGroupHelp) },
		"operator snapshot save":        func(m Meta) cli.Command { return &OperatorSnapshotSaveCommand{Meta: m} },
		"operator snapshot restore":     func(m Meta) cli.Command { return &OperatorSnapshotRestoreCommand{Meta: m} },
		"operator snapshot inspect":     func(m Meta) cli.Command { return &OperatorSnapshotInspectCommand{Meta: m} },
		"operator snapshot state":       func(m Meta) cli.Command { return &OperatorSnapshotStateCommand{Meta: m} },
		"operator snapshot redact":      func(m Meta) cli.Command { return &OperatorSnapshotRedactCommand{Meta: m} },
		"operator client-state":         func(m Meta) cli.Command { return &OperatorClientStateCommand{Meta: m} },
		"operator scheduler":            func(m Meta) cli.Command { return newGroup(m, "operator scheduler", operatorSchedulerGroupHelp) },
		"operator scheduler get-config": func(m Meta) cli.Command { return &OperatorSchedulerGetConfigCommand{Meta: m} },
		"operator scheduler set-config": func(m Meta) cli.Command { return &OperatorSchedulerSetConfigCommand{Meta: m} },
		"operator scheduler workers":    func(m Meta) cli.Command { return &OperatorSchedulerWorkersCommand{Meta: m} },

		"operator gossip": func(m Meta) cli.Command { return newGroup(m, "operator gossip", operatorGossipGroupHelp) },
		"operator gossip keyring": func(m Meta) cli.Command {
			return &OperatorKeyringFlagsCommand{Meta: m, name: "operator gossip keyring"}
		},
		"operator gossip keyring list":    func(m Meta) cli.Command { return &OperatorGossipKeyringOpCommand{Meta: m, op: "list"} },
		"operator gossip keyring install": func(m Meta) cli.Command { return &OperatorGossipKeyringOpCommand{Meta: m, op: "install"} },
		"operator gossip keyring use":     func(m Meta) cli.Command { return &OperatorGossipKeyringOpCommand{Meta: m, op: "use"} },
		"operator gossip keyring remove":  func(m Meta) cli.Command { return &OperatorGossipKeyringOpCommand{Meta: m, op: "remove"} },
		"operator gossip keyring generate": func(m Meta) cli.Command {
			return &OperatorGossipKeyringGenerateCommand{Meta: m, name: "operator gossip keyring generate"}
		},
		"operator keyring": func(m Meta) cli.Command { return &OperatorKeyringFlagsCommand{Meta: m, name: "operator keyring"} },
		"operator keygen": func(m Meta) cli.Command {
			return &OperatorGossipKeyringGenerateCommand{Meta: m, name: "operator keygen"}
		},

		"fmt":                 func(m Meta) cli.Command { return &FormatCommand{Meta: m} },
		"status":              func(m Meta) cli.Command { return &StatusCommand{Meta: m} },
		"agent-info":          func(m Meta) cli.Command { return &AgentInfoCommand{Meta: m} },
		"check":               func(m Meta) cli.Command { return &AgentCheckCommand{Meta: m} },
		"monitor":             func(m Meta) cli.Command { return &MonitorCommand{Meta: m} },
		"login":               func(m Meta) cli.Command { return &LoginCommand{Meta: m} },
		"ui":                  func(m Meta) cli.Command { return &UiCommand{Meta: m} },
		"node config":         func(m Meta) cli.Command { return &NodeConfigCommand{Meta: m} },
		"node intro":          func(m Meta) cli.Command { return newGroup(m, "node intro", nodeIntroGroupHelp) },
		"node intro create":   func(m Meta) cli.Command { return &NodeIntroCreateCommand{Meta: m} },
		"scaling":             func(m Meta) cli.Command { return newGroup(m, "scaling", scalingGroupHelp) },
		"scaling policy":      func(m Meta) cli.Command { return newGroup(m, "scaling policy", scalingPolicyGroupHelp) },
		"scaling policy list": func(m Meta) cli.Command { return &ScalingPolicyListCommand{Meta: m} },
		"scaling policy info": func(m Meta) cli.Command { return &ScalingPolicyInfoCommand{Meta: m} },
		"config":              func(m Meta) cli.Command { return newGroup(m, "config", configGroupHelp) },
		"config validate":     func(m Meta) cli.Command { return &ConfigValidateCommand{Meta: m} },

		"nodesim": func(m Meta) cli.Command { return &NodeSimCommand{Meta: m} },
		"loadgen": func(m Meta) cli.Command { return &LoadGenCommand{Meta: m} },

		"system":    func(m Meta) cli.Command { return newGroup(m, "system", systemGroupHelp) },
		"system gc": func(m Meta) cli.Command { return &SystemGCCommand{Meta: m} },
		"system reconcile": func(m Meta) cli.Command {
			return newGroup(m, "system reconcile", systemReconcileGroupHelp)
		},
		"system reconcile summaries": func(m Meta) cli.Command { return &SystemReconcileSummariesCommand{Meta: m} },
		"operator metrics":           func(m Meta) cli.Command { return &OperatorMetricsCommand{Meta: m} },
		"operator debug":             func(m Meta) cli.Command { return &OperatorDebugCommand{Meta: m} },

		"tls":             func(m Meta) cli.Command { return newGroup(m, "tls", tlsGroupHelp) },
		"tls ca":          func(m Meta) cli.Command { return newGroup(m, "tls ca", tlsCAGroupHelp) },
		"tls ca create":   func(m Meta) cli.Command { return &TLSCACreateCommand{Meta: m} },
		"tls ca info":     func(m Meta) cli.Command { return &TLSCAInfoCommand{Meta: m} },
		"tls cert":        func(m Meta) cli.Command { return newGroup(m, "tls cert", tlsCertGroupHelp) },
		"tls cert create": func(m Meta) cli.Command { return &TLSCertCreateCommand{Meta: m} },
		"tls cert info":   func(m Meta) cli.Command { return &TLSCertInfoCommand{Meta: m} },
	}
	// Nomad's short forms of the most used commands.
	for alias, target := range topLevelAliases {
		all[alias] = all[target]
	}
	for name, feature := range unsupportedCommands {
		all[name] = func(m Meta) cli.Command { return &UnsupportedCommand{Meta: m, name: name, feature: feature} }
	}

	out := make(map[string]cli.CommandFactory, len(all))
	for name, mk := range all {
		out[name] = func() (cli.Command, error) { return mk(meta), nil }
	}
	return out
}

// topLevelAliases maps Nomad's top-level shortcuts, and the one-word
// forms older Nomad versions had, to their commands.
var topLevelAliases = map[string]string{
	"run":                "job run",
	"action":             "job action",
	"plan":               "job plan",
	"stop":               "job stop",
	"start":              "job start",
	"init":               "job init",
	"validate":           "job validate",
	"inspect":            "job inspect",
	"logs":               "alloc logs",
	"exec":               "alloc exec",
	"fs":                 "alloc fs",
	"client-config":      "node config",
	"alloc-status":       "alloc status",
	"eval-status":        "eval status",
	"node-status":        "node status",
	"node-drain":         "node drain",
	"server-members":     "server members",
	"server-join":        "server join",
	"server-force-leave": "server force-leave",
	"debug":              "operator debug",
	"keygen":             "operator gossip keyring generate",
	"keyring":            "operator keyring",
}

// Main runs the CLI with args (without the program name) and returns the
// exit code. Ctrl-C and SIGTERM cancel the running command's context, so a
// monitor stops waiting and says so instead of dying mid-line.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ui := &cli.BasicUi{Reader: os.Stdin, Writer: os.Stdout, ErrorWriter: os.Stderr}
	return Run(args, Meta{Ui: ui, Ctx: ctx}, os.Stdout, os.Stderr)
}

// Run runs the CLI with args and an explicit Meta and writers for help
// text, so tests can drive the same dispatch as the binary.
func Run(args []string, meta Meta, helpOut, errOut io.Writer) int {
	args = normalizeVersionArgs(args)
	if len(args) == 0 {
		fmt.Fprintln(errOut, helpFunc(topLevel(Commands(meta))))
		return 1
	}
	hidden := make([]string, 0, len(topLevelAliases))
	for alias := range topLevelAliases {
		hidden = append(hidden, alias)
	}
	c := &cli.CLI{
		Name:           "nomad",
		Args:           args,
		Commands:       Commands(meta),
		HiddenCommands: hidden,
		HelpFunc:       helpFunc,
		HelpWriter:     helpOut,
		ErrorWriter:    errOut,
	}
	code, err := c.Run()
	if err != nil {
		fmt.Fprintf(errOut, "Error executing CLI: %s\n", err)
		return 1
	}
	return code
}

// normalizeVersionArgs turns "nomad -v" and "nomad --version" into the
// version command, so they print the same thing.
func normalizeVersionArgs(args []string) []string {
	if len(args) == 1 {
		switch args[0] {
		case "-v", "-version", "--version":
			return []string{"version"}
		}
	}
	return args
}

// topLevel keeps the visible one-word commands.
func topLevel(all map[string]cli.CommandFactory) map[string]cli.CommandFactory {
	out := map[string]cli.CommandFactory{}
	for name, f := range all {
		if _, alias := topLevelAliases[name]; !alias && !strings.Contains(name, " ") {
			out[name] = f
		}
	}
	return out
}

// helpFunc renders `nomad -help`: the top-level commands with their
// synopses.
func helpFunc(commands map[string]cli.CommandFactory) string {
	names := make([]string, 0, len(commands))
	width := 0
	for name := range commands {
		names = append(names, name)
		width = max(width, len(name))
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("Usage: nomad [-version] [-help] <command> [args]\n\n")
	b.WriteString("Commands:\n")
	for _, name := range names {
		cmd, err := commands[name]()
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "    %s    %s\n", pad(name, width), cmd.Synopsis())
	}
	b.WriteString("\nRun 'nomad <command> -help' for a command's usage and flags.\n")
	b.WriteString("Shortcuts: nomad run, plan, stop, start, init, validate and inspect\n")
	b.WriteString("are the job commands of the same name; logs, exec and fs the alloc ones;\n")
	b.WriteString("debug is operator debug.")
	return b.String()
}

// VersionCommand prints the version of this binary.
type VersionCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *VersionCommand) Help() string {
	return "Usage: nomad version\n\n  Prints the version of this nomad binary."
}

// Synopsis implements cli.Command.
func (c *VersionCommand) Synopsis() string { return "Print the version" }

// Run implements cli.Command.
func (c *VersionCommand) Run(args []string) int {
	if len(args) != 0 {
		return c.usageError("version", "This command takes no arguments")
	}
	c.Ui.Output("Nomad v" + version.String())
	return 0
}
