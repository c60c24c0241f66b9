package command

import (
	"fmt"
	"strings"
)

// OperatorRaftTransferLeadershipCommand hands the leadership to another
// server.
type OperatorRaftTransferLeadershipCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorRaftTransferLeadershipCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator raft transfer-leadership [options] [-peer-address=<addr>|-peer-id=<id>]

  Ask the leader to hand its leadership to another voter, for instance
  before maintenance on the leader's machine. The command returns once
  Raft completed the transfer. 'nomad operator raft list-peers' shows the
  servers' IDs and addresses. Requires operator:write.

` + generalOptionsUsage() + `

Transfer Leadership Options:

  -peer-address=<addr>
    The RPC address ("IP:port") of the server that should lead.

  -peer-id=<id>
    The Raft ID of the server that should lead.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorRaftTransferLeadershipCommand) Synopsis() string {
	return "Transfer leadership to a specified Nomad server"
}

// Run implements cli.Command.
func (c *OperatorRaftTransferLeadershipCommand) Run(args []string) int {
	const name = "operator raft transfer-leadership"
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
	if (id == "") == (address == "") {
		return c.usageError(name, "Exactly one of -peer-id or -peer-address must be given")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	var err error
	target := fmt.Sprintf("id %q", id)
	if address != "" {
		target = fmt.Sprintf("address %q", address)
		err = client.Operator().RaftTransferLeadershipByAddress(address, c.write())
	} else {
		err = client.Operator().RaftTransferLeadershipByID(id, c.write())
	}
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error transferring leadership to peer with %s: %s", target, c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Transferred leadership to peer with %s", target))
	return 0
}
