package command

import (
	"fmt"
	"strings"
)

// ServerForceLeaveCommand marks a failed server as having left.
type ServerForceLeaveCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ServerForceLeaveCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad server force-leave [options] <node>

  Mark a failed server as having left the cluster. The leader then removes
  it from the Raft configuration at once, instead of waiting for the
  dead-server cleanup. A server that is still alive rejoins by itself;
  use this only for servers that are gone. <node> is the member name
  shown by 'nomad server members' ("name.region") or the bare node name.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *ServerForceLeaveCommand) Synopsis() string {
	return "Force a server into the 'left' state"
}

// Run implements cli.Command.
func (c *ServerForceLeaveCommand) Run(args []string) int {
	const name = "server force-leave"
	fs := c.flagSet(name, flagsClient)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <node>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	node := fs.Arg(0)
	if err := client.Agent().ForceLeave(node); err != nil {
		c.Ui.Error(fmt.Sprintf("Error force-leaving server %s: %s", node, c.describe(err)))
		return 1
	}
	return 0
}
