package command

import (
	"fmt"
	"strings"
)

// OperatorRaftRemovePeerCommand removes a server from the Raft
// configuration.
type OperatorRaftRemovePeerCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorRaftRemovePeerCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator raft remove-peer [options] -peer-id=<id>

  Remove the server with the given Raft ID from the Raft configuration.
  This is for servers that are gone for good and that gossip cannot remove
  ('nomad server force-leave' is the usual way). Removing a server that is
  still running leaves it outside the cluster until it is restarted.
  'nomad operator raft list-peers' shows the IDs.

` + generalOptionsUsage() + `

Remove Peer Options:

  -peer-id=<id>
    The Raft ID of the server to remove.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorRaftRemovePeerCommand) Synopsis() string {
	return "Remove a Nomad server from the Raft configuration"
}

// Run implements cli.Command.
func (c *OperatorRaftRemovePeerCommand) Run(args []string) int {
	const name = "operator raft remove-peer"
	var id, address string
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&id, "peer-id", "", "")
	fs.StringVar(&address, "peer-address", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	if address != "" {
		return c.usageError(name, "-peer-address is not supported: Raft names servers by ID; use -peer-id")
	}
	if id == "" {
		return c.usageError(name, "Missing -peer-id")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	if err := client.Operator().RaftRemovePeerByID(id, c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error removing peer: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Removed peer with id %q", id))
	return 0
}
