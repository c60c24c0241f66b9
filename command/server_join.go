package command

import (
	"fmt"
	"strings"
)

// ServerJoinCommand joins the agent's server to other servers' gossip.
type ServerJoinCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ServerJoinCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad server join [options] <addr> [<addr>...]

  Join the server of the agent this command talks to with the servers at
  the given gossip addresses ("host" or "host:port", port 4648 by
  default). One reachable server is enough: the rest are learned from it.
  A new server joined this way is added to Raft by the leader.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *ServerJoinCommand) Synopsis() string { return "Join server nodes together" }

// Run implements cli.Command.
func (c *ServerJoinCommand) Run(args []string) int {
	const name = "server join"
	fs := c.flagSet(name, flagsClient)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() < 1 {
		return c.usageError(name, "One or more server addresses are required")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	n, err := client.Agent().Join(fs.Args()...)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error joining: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Joined %d servers successfully", n))
	return 0
}
