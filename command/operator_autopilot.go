package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

const operatorAutopilotGroupHelp = `
Usage: nomad operator autopilot <subcommand> [options]

  Inspect and change how the servers manage themselves: when the leader
  removes dead servers from Raft, and what makes a server healthy.

      $ nomad operator autopilot get-config
      $ nomad operator autopilot set-config -cleanup-dead-servers=false
      $ nomad operator autopilot health

  Run 'nomad operator autopilot <subcommand> -help' for a subcommand's flags.
`

// OperatorAutopilotGetCommand prints the autopilot configuration.
type OperatorAutopilotGetCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorAutopilotGetCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator autopilot get-config [options]

  Display the current autopilot configuration. Requires operator:read.

` + generalOptionsUsage() + `

Autopilot Get Config Options:
` + formatOutputFlagsUsage)
}

// Synopsis implements cli.Command.
func (c *OperatorAutopilotGetCommand) Synopsis() string {
	return "Display the current Autopilot configuration"
}

// Run implements cli.Command.
func (c *OperatorAutopilotGetCommand) Run(args []string) int {
	var asJSON bool
	var tmpl string
	fs := c.flagSet("operator autopilot get-config", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	conf, _, err := client.Operator().AutopilotGetConfiguration(c.query())
	if c.callFailed(err, "querying Autopilot configuration") {
		return 1
	}
	if asJSON || tmpl != "" {
		out, err := dataFormat(conf, asJSON, tmpl)
		if err != nil {
			c.Ui.Error(err.Error())
			return 1
		}
		c.Ui.Output(out)
		return 0
	}
	c.Ui.Output(formatKV([]string{
		fmt.Sprintf("CleanupDeadServers|%t", conf.CleanupDeadServers),
		fmt.Sprintf("LastContactThreshold|%s", conf.LastContactThreshold),
		fmt.Sprintf("MaxTrailingLogs|%d", conf.MaxTrailingLogs),
		fmt.Sprintf("MinQuorum|%d", conf.MinQuorum),
		fmt.Sprintf("ServerStabilizationTime|%s", conf.ServerStabilizationTime),
		fmt.Sprintf("EnableRedundancyZones|%t", conf.EnableRedundancyZones),
		fmt.Sprintf("DisableUpgradeMigration|%t", conf.DisableUpgradeMigration),
		fmt.Sprintf("EnableCustomUpgrades|%t", conf.EnableCustomUpgrades),
	}))
	return 0
}

// OperatorAutopilotSetCommand changes the autopilot configuration.
type OperatorAutopilotSetCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorAutopilotSetCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator autopilot set-config [options]

  Modify the current autopilot configuration: only the settings named by
  flags change. The write is a check-and-set on the configuration read
  first, so a concurrent change is never overwritten. Requires
  operator:write.

` + generalOptionsUsage() + `

Autopilot Set Config Options:

  -cleanup-dead-servers=[true|false]
    Whether the leader removes servers that failed or left from the Raft
    configuration.

  -max-trailing-logs=<value>
    How many log entries a server may trail the leader by and be healthy.

  -min-quorum=<value>
    The fewest voters the dead-server cleanup leaves.

  -last-contact-threshold=<value>
    How long a server may go without contact from the leader and be
    healthy, e.g. "200ms".

  -server-stabilization-time=<value>
    How long a new server must be healthy before it counts as stable,
    e.g. "10s".

  -enable-redundancy-zones=[true|false]
  -disable-upgrade-migration=[true|false]
  -enable-custom-upgrades=[true|false]
    Enterprise features: stored, not acted on.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorAutopilotSetCommand) Synopsis() string {
	return "Modify the current Autopilot configuration"
}

// Run implements cli.Command.
func (c *OperatorAutopilotSetCommand) Run(args []string) int {
	const name = "operator autopilot set-config"
	var (
		cleanup, redundancy, noMigration, customUpgrades optionalBool
		trailing, minQuorum                              optionalUint
		lastContact, stabilization                       optionalString
	)
	fs := c.flagSet(name, flagsClient)
	fs.Var(&cleanup, "cleanup-dead-servers", "")
	fs.Var(&trailing, "max-trailing-logs", "")
	fs.Var(&minQuorum, "min-quorum", "")
	fs.Var(&lastContact, "last-contact-threshold", "")
	fs.Var(&stabilization, "server-stabilization-time", "")
	fs.Var(&redundancy, "enable-redundancy-zones", "")
	fs.Var(&noMigration, "disable-upgrade-migration", "")
	fs.Var(&customUpgrades, "enable-custom-upgrades", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	durations := map[string]*optionalString{"-last-contact-threshold": &lastContact, "-server-stabilization-time": &stabilization}
	parsed := map[string]time.Duration{}
	for flagName, v := range durations {
		if !v.set {
			continue
		}
		d, err := time.ParseDuration(v.value)
		if err != nil || d < 0 {
			return c.usageError(name, fmt.Sprintf("Invalid %s %q: must be a duration such as 200ms", flagName, v.value))
		}
		parsed[flagName] = d
	}

	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	conf, _, err := client.Operator().AutopilotGetConfiguration(c.query())
	if c.callFailed(err, "querying Autopilot configuration") {
		return 1
	}
	cleanup.apply(&conf.CleanupDeadServers)
	redundancy.apply(&conf.EnableRedundancyZones)
	noMigration.apply(&conf.DisableUpgradeMigration)
	customUpgrades.apply(&conf.EnableCustomUpgrades)
	if trailing.set {
		conf.MaxTrailingLogs = trailing.value
	}
	if minQuorum.set {
		conf.MinQuorum = uint(minQuorum.value)
	}
	if d, ok := parsed["-last-contact-threshold"]; ok {
		conf.LastContactThreshold = d
	}
	if d, ok := parsed["-server-stabilization-time"]; ok {
		conf.ServerStabilizationTime = d
	}
	updated, _, err := client.Operator().AutopilotCASConfiguration(conf, c.write())
	if c.callFailed(err, "setting Autopilot configuration") {
		return 1
	}
	if !updated {
		c.Ui.Error("Configuration could not be atomically updated, please try again")
		return 1
	}
	c.Ui.Output("Configuration updated!")
	return 0
}

// OperatorAutopilotHealthCommand prints the servers' health.
type OperatorAutopilotHealthCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorAutopilotHealthCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator autopilot health [options]

  Display the health of every server as the leader judges it: whether
  gossip sees it alive, how long since it heard from the leader and how
  far its log trails. Exits 1 when any server is unhealthy. Requires
  operator:read.

` + generalOptionsUsage() + `

Autopilot Health Options:

  -json
    Output the health in its JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorAutopilotHealthCommand) Synopsis() string {
	return "Display the current Autopilot health"
}

// Run implements cli.Command.
func (c *OperatorAutopilotHealthCommand) Run(args []string) int {
	var asJSON bool
	fs := c.flagSet("operator autopilot health", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	health, _, err := client.Operator().AutopilotServerHealth(c.query())
	if health == nil && c.callFailed(err, "querying Autopilot health") {
		return 1
	}
	if asJSON {
		out, err := dataFormat(health, true, "")
		if err != nil {
			c.Ui.Error(err.Error())
			return 1
		}
		c.Ui.Output(out)
	} else {
		c.Ui.Output(formatAutopilotHealth(health))
	}
	if !health.Healthy {
		return 1
	}
	return 0
}

// formatAutopilotHealth renders the summary, then a row per server.
func formatAutopilotHealth(h *api.OperatorHealthReply) string {
	var b strings.Builder
	b.WriteString(formatKV([]string{
		fmt.Sprintf("Healthy|%t", h.Healthy),
		fmt.Sprintf("FailureTolerance|%d", h.FailureTolerance),
		"Leader|" + h.Leader,
		"Voters|" + strings.Join(h.Voters, ", "),
	}))
	b.WriteString("\n\nServers\n")
	rows := []string{"ID|Name|Address|Serf Status|Version|Leader|Voter|Healthy|Last Contact|Last Term|Last Index|Stable Since"}
	for _, s := range h.Servers {
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s|%t|%t|%t|%s|%d|%d|%s",
			s.ID, s.Name, s.Address, s.SerfStatus, s.Version, s.Leader, s.Voter, s.Healthy,
			s.LastContact, s.LastTerm, s.LastIndex, s.StableSince.UTC().Format(time.RFC3339)))
	}
	b.WriteString(formatList(rows))
	return b.String()
}
