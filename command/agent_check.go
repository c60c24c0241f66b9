package command

import (
	"fmt"
	"strconv"
	"strings"
)

// The exit codes of nomad check, as health-check tools read them.
const (
	healthPass     = 0
	healthCritical = 2
)

// AgentCheckCommand checks the health of the agent it talks to: a server
// must know enough Raft peers, a client enough servers.
type AgentCheckCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *AgentCheckCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad check [options]

  Check the health of the agent the command talks to, for use as a health
  check: a server must know at least -min-peers other Raft peers, a
  client at least -min-servers servers. Exit code 0 means healthy, 2
  critical (with the reason printed).

` + generalOptionsUsage() + `

Check Options:

  -min-peers=<n>
    The fewest other Raft peers a server must know. Default = 0

  -min-servers=<n>
    The fewest servers a client must know. Default = 1
`)
}

// Synopsis implements cli.Command.
func (c *AgentCheckCommand) Synopsis() string { return "Displays health of the local Nomad agent" }

// Run implements cli.Command.
func (c *AgentCheckCommand) Run(args []string) int {
	var minPeers, minServers int
	fs := c.flagSet("check", flagsClient)
	fs.IntVar(&minPeers, "min-peers", 0, "")
	fs.IntVar(&minServers, "min-servers", 1, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	self, err := client.Agent().Self()
	if err != nil {
		c.Ui.Output(fmt.Sprintf("unable to query agent info: %s", c.describe(err)))
		return healthCritical
	}
	if raft, isServer := self.Stats["raft"]; isServer {
		peers, err := strconv.Atoi(raft["num_peers"])
		if err != nil {
			c.Ui.Output("unable to get known peers")
			return healthCritical
		}
		if peers < minPeers {
			c.Ui.Output(fmt.Sprintf("known peers: %d, is less than expected number of peers: %d", peers, minPeers))
			return healthCritical
		}
		return healthPass
	}
	servers, err := client.Agent().Servers()
	if err != nil {
		c.Ui.Output(fmt.Sprintf("unable to get known servers: %s", c.describe(err)))
		return healthCritical
	}
	if len(servers) < minServers {
		c.Ui.Output(fmt.Sprintf("known servers: %d, is less than expected number of servers: %d", len(servers), minServers))
		return healthCritical
	}
	return healthPass
}
