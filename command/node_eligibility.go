package command

import (
	"fmt"
	"strings"

	"github.com/opennomad/nomad/api"
)

// NodeEligibilityCommand toggles whether a node takes new allocations.
type NodeEligibilityCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodeEligibilityCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node eligibility [options] <node>

  Mark a node eligible or ineligible for new allocations. Allocations
  already on the node keep running; to move them away use 'nomad node
  drain'. A draining node cannot be made eligible until its drain is
  disabled.

` + generalOptionsUsage() + `

Node Eligibility Options:

  -enable
    Make the node eligible for scheduling.

  -disable
    Make the node ineligible for scheduling.

  -self
    Act on the node of the agent the command talks to (a client agent).

  -verbose
    Show full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *NodeEligibilityCommand) Synopsis() string {
	return "Toggle scheduling eligibility for a given node"
}

// Run implements cli.Command.
func (c *NodeEligibilityCommand) Run(args []string) int {
	const name = "node eligibility"
	var enable, disable, self, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&enable, "enable", false, "")
	fs.BoolVar(&disable, "disable", false, "")
	fs.BoolVar(&self, "self", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if enable == disable {
		return c.usageError(name, "Error: exactly one of -enable or -disable must be given")
	}
	if self == (fs.NArg() == 1) || fs.NArg() > 1 {
		return c.usageError(name, "Error: this command takes either one argument, <node>, or -self")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	length := idLength(verbose)
	var nodeID string
	if self {
		id, err := localNodeID(&c.Meta, client)
		if err != nil {
			c.Ui.Error(err.Error())
			return 1
		}
		nodeID = id
	} else {
		node, err := resolveNode(&c.Meta, client, fs.Arg(0), length)
		if err != nil {
			c.Ui.Error(err.Error())
			return 1
		}
		nodeID = node.ID
	}
	if _, _, err := client.Nodes().ToggleEligibility(nodeID, enable, c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error updating scheduling eligibility of node %q: %s", limit(nodeID, length), c.describe(err)))
		return 1
	}
	state := api.NodeSchedulingIneligible
	if enable {
		state = api.NodeSchedulingEligible
	}
	c.Ui.Output(fmt.Sprintf("Node %q scheduling eligibility set: %s for scheduling", limit(nodeID, length), state))
	return 0
}
