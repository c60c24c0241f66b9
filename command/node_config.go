package command

import (
	"strings"
)

// NodeConfigCommand shows (or would change) a client agent's
// configuration: the servers it talks to.
type NodeConfigCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodeConfigCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node config [options]

  Show the configuration of the client agent the command talks to.

  When ACLs are enabled, this command needs the 'agent:read' capability
  ('agent:write' to update the servers).

` + generalOptionsUsage() + `

Client Config Options:

  -servers
    List the servers the client knows, one per line.

  -update-servers <addr>...
    Replace the client's servers with the addresses given. This agent
    refuses: its servers are set by its configuration only.
`)
}

// Synopsis implements cli.Command.
func (c *NodeConfigCommand) Synopsis() string { return "View or modify client configuration details" }

// Run implements cli.Command.
func (c *NodeConfigCommand) Run(args []string) int {
	const name = "node config"
	var listServers, updateServers bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&listServers, "servers", false, "")
	fs.BoolVar(&updateServers, "update-servers", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	switch {
	case listServers == updateServers:
		return c.usageError(name, "Exactly one of -servers or -update-servers is required")
	case listServers && fs.NArg() > 0:
		return c.usageError(name, "The -servers option takes no arguments")
	case updateServers && fs.NArg() == 0:
		return c.usageError(name, "The -update-servers option needs at least one address")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	if updateServers {
		err := client.Agent().SetServers(fs.Args())
		return c.reportChange(err, "updating server list", "Updated server list")
	}
	servers, err := client.Agent().Servers()
	if c.callFailed(err, "querying server list") {
		return 1
	}
	for _, s := range servers {
		c.Ui.Output(s)
	}
	return 0
}
