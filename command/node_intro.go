package command

import (
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// NodeIntroCreateCommand asks the servers for a client introduction
// token: the JWT a new client presents when it first registers.
type NodeIntroCreateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodeIntroCreateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node intro create [options]

  Generate a client introduction token, which a new client node presents
  to the servers when it first registers. Scope it to one node with
  -node-name when you can.

  When ACLs are enabled, this command needs the 'node:write' capability.

` + generalOptionsUsage() + `

Create Options:

  -node-name <name>
    The node the token is for. Default: any node.

  -node-pool <pool>
    The node pool the token is for. Default = default

  -ttl <duration>
    How long the token is valid. Default: the servers' setting.

  -json
    Print the answer as JSON.

  -t <template>
    Format the answer with a Go template.
`)
}

// Synopsis implements cli.Command.
func (c *NodeIntroCreateCommand) Synopsis() string { return "Generate a new node introduction token" }

// Run implements cli.Command.
func (c *NodeIntroCreateCommand) Run(args []string) int {
	var nodeName, nodePool, tmpl string
	var ttl time.Duration
	var asJSON bool
	fs := c.flagSet("node intro create", flagsClient)
	fs.StringVar(&nodeName, "node-name", "", "")
	fs.StringVar(&nodePool, "node-pool", "", "")
	fs.DurationVar(&ttl, "ttl", 0, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	resp, _, err := client.ACLIdentity().CreateClientIntroductionToken(
		&api.ACLIdentityClientIntroductionTokenRequest{TTL: ttl, NodeName: nodeName, NodePool: nodePool}, c.write())
	if c.callFailed(err, "generating client introduction token") {
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, resp, asJSON, tmpl)
	}
	c.Ui.Output("Successfully generated client introduction token:\n" + resp.JWT)
	return 0
}
