package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// MonitorCommand streams the log lines of an agent.
type MonitorCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *MonitorCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad monitor [options]

  Stream the log lines of the agent the command talks to, from now on,
  at the given level whatever level the agent logs at, until
  interrupted.

  When ACLs are enabled, this command needs the 'agent:read' capability.

` + generalOptionsUsage() + `

Monitor Options:

  -log-level <level>
    The level of the lines: TRACE, DEBUG, INFO, WARN or ERROR.
    Default = INFO

  -log-include-location
    Accepted for compatibility; lines do not carry their source location.

  -node-id <id>
    The client agent to monitor; this server streams only the agent
    addressed, so it must be that agent's.

  -server-id <name>
    The server agent to monitor, with the same limit as -node-id.

  -json
    Stream the lines as JSON.
`)
}

// Synopsis implements cli.Command.
func (c *MonitorCommand) Synopsis() string { return "Stream logs from a Nomad agent" }

// Run implements cli.Command.
func (c *MonitorCommand) Run(args []string) int {
	var level, nodeID, serverID string
	var asJSON, location bool
	fs := c.flagSet("monitor", flagsClient)
	fs.StringVar(&level, "log-level", "INFO", "")
	fs.StringVar(&nodeID, "node-id", "", "")
	fs.StringVar(&serverID, "server-id", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.BoolVar(&location, "log-include-location", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	if nodeID != "" && serverID != "" {
		return c.usageError("monitor", "The -node-id and -server-id options cannot be used together")
	}
	params := url.Values{"plain": {"true"}, "log_level": {level}}
	if asJSON {
		params.Set("log_json", "true")
	}
	if nodeID != "" {
		params.Set("node_id", nodeID)
	}
	if serverID != "" {
		params.Set("server_id", serverID)
	}
	body, err := client.Raw().Response("/v1/agent/monitor?"+params.Encode(), c.query())
	if c.callFailed(err, "starting monitor") {
		return 1
	}
	defer body.Close()
	scanner := bufio.NewScanner(body)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		c.Ui.Output(scanner.Text())
	}
	// The user stopping the stream is its normal end.
	if err := scanner.Err(); err != nil && !errors.Is(err, context.Canceled) && c.ctx().Err() == nil {
		c.Ui.Error(fmt.Sprintf("Error reading the log stream: %s", c.describe(err)))
		return 1
	}
	return 0
}
