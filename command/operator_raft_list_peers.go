package command

import (
	"fmt"
	"strings"
)

// OperatorRaftListPeersCommand lists the Raft peers.
type OperatorRaftListPeersCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorRaftListPeersCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator raft list-peers [options]

  List the servers of the Raft configuration: which one leads, which vote.
  A server listed here but not alive in 'nomad server members' still
  counts toward the quorum.

` + generalOptionsUsage() + `

List Peers Options:

  -stale
    Let any server answer from its own state, even without a leader.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorRaftListPeersCommand) Synopsis() string {
	return "Display the current Raft peer configuration"
}

// Run implements cli.Command.
func (c *OperatorRaftListPeersCommand) Run(args []string) int {
	const name = "operator raft list-peers"
	var stale bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&stale, "stale", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	q := c.query()
	q.AllowStale = stale
	conf, err := client.Operator().RaftGetConfiguration(q)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error getting peers: %s", c.describe(err)))
		return 1
	}
	rows := []string{"Node|ID|Address|State|Voter|RaftProtocol"}
	for _, s := range conf.Servers {
		state := "follower"
		if s.Leader {
			state = "leader"
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%t|%s", s.Node, s.ID, s.Address, state, s.Voter, s.RaftProtocol))
	}
	c.Ui.Output(formatList(rows))
	return 0
}
