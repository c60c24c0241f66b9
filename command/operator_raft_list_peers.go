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
	var stale bool
	fs := c.flagSet("operator raft list-peers", flagsClient)
	fs.BoolVar(&stale, "stale", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	q := c.query()
	q.AllowStale = stale
	conf, err := client.Operator().RaftGetConfiguration(q)
	if c.callFailed(err, "getting peers") {
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
