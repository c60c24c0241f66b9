package command

import (
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/opennomad/nomad/api"
)

// ServerMembersCommand lists the servers known to the gossip pool.
type ServerMembersCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ServerMembersCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad server members [options]

  List the servers the agent knows through gossip, with their status and
  which one leads its region.

` + generalOptionsUsage() + `

Server Members Options:

  -verbose
    Add the gossip protocol version and every tag of each server.

  -json
    Output the members in JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ServerMembersCommand) Synopsis() string {
	return "Display a list of known servers and their status"
}

// Run implements cli.Command.
func (c *ServerMembersCommand) Run(args []string) int {
	var verbose, asJSON bool
	fs := c.flagSet("server members", flagsClient)
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	members, err := client.Agent().Members()
	if c.callFailed(err, "querying servers") {
		return 1
	}
	if asJSON {
		return printData(&c.Meta, members.Members, true, "")
	}
	if len(members.Members) == 0 {
		c.Ui.Output("No servers known")
		return 0
	}
	// One leader lookup per region; a region that cannot be asked has no
	// leader marked rather than failing the whole listing.
	leaders := map[string]string{}
	for _, m := range members.Members {
		region := m.Tags["region"]
		if _, done := leaders[region]; done {
			continue
		}
		leader, err := client.Status().RegionLeader(region)
		if err != nil {
			c.Ui.Warn(fmt.Sprintf("Could not find the leader of region %q: %s", region, c.describe(err)))
		}
		leaders[region] = leader
	}
	c.Ui.Output(formatMembers(members.Members, leaders, verbose))
	return 0
}

// formatMembers renders the member table; leaders maps region to the
// leader's RPC address.
func formatMembers(members []*api.AgentMember, leaders map[string]string, verbose bool) string {
	sort.Slice(members, func(i, j int) bool { return members[i].Name < members[j].Name })
	header := "Name|Address|Port|Status|Leader|Raft Version|Build|Datacenter|Region"
	if verbose {
		header += "|Protocol|Tags"
	}
	rows := []string{header}
	for _, m := range members {
		rpc := net.JoinHostPort(m.Tags["rpc_addr"], m.Tags["port"])
		leader := leaders[m.Tags["region"]] != "" && leaders[m.Tags["region"]] == rpc
		row := fmt.Sprintf("%s|%s|%d|%s|%t|%s|%s|%s|%s", m.Name, m.Addr, m.Port, m.Status, leader,
			m.Tags["raft_vsn"], m.Tags["build"], m.Tags["dc"], m.Tags["region"])
		if verbose {
			var tags []string
			for _, k := range sortedKeys(m.Tags) {
				tags = append(tags, k+"="+m.Tags[k])
			}
			row += fmt.Sprintf("|%d|%s", m.ProtocolCur, strings.Join(tags, ","))
		}
		rows = append(rows, row)
	}
	return formatList(rows)
}
