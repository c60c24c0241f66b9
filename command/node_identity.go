package command

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// NodeIdentityGetCommand shows the claims of a node's identity.
type NodeIdentityGetCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodeIdentityGetCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node identity get [options] <node_id>

  Show the claims of the identity the servers issued a node: a JWT signed
  with the cluster's active root key, which the node renews before it
  expires. The node's agent answers; any agent forwards the request there.

  Reading a node identity requires node:read.
` + generalOptionsUsage() + `
Get Options:

  -json
    Output the claims in their JSON format.

  -t
    Format and display the claims using a Go template.
`)
}

// Synopsis implements cli.Command.
func (c *NodeIdentityGetCommand) Synopsis() string { return "Detail a node's identity claims" }

// Run implements cli.Command.
func (c *NodeIdentityGetCommand) Run(args []string) int {
	const name = "node identity get"
	var asJSON bool
	var tmpl string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	client, node, ok := identityNode(&c.Meta, name, fs, args)
	if !ok {
		return 1
	}
	resp, err := client.Nodes().Identity().Get(&api.NodeIdentityGetRequest{NodeID: node.ID}, c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error requesting node identity: %s", c.describe(err)))
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, resp.Claims, asJSON, tmpl)
	}
	c.Ui.Output(formatList(identityClaimRows(resp.Claims)))
	return 0
}

// identityClaimRows lists the claims, the registered ones first and then
// Nomad's (nomad_*), each group by name; times are shown as times.
func identityClaimRows(claims map[string]any) []string {
	keys := make([]string, 0, len(claims))
	for k := range claims {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ni, nj := strings.HasPrefix(keys[i], "nomad"), strings.HasPrefix(keys[j], "nomad")
		if ni != nj {
			return nj
		}
		return keys[i] < keys[j]
	})
	rows := []string{"Claim Key|Claim Value"}
	for _, k := range keys {
		v := claims[k]
		if secs, ok := v.(float64); ok && !strings.HasPrefix(k, "nomad") {
			rows = append(rows, fmt.Sprintf("%s|%s", k, formatTime(time.Unix(int64(secs), 0))))
			continue
		}
		rows = append(rows, fmt.Sprintf("%s|%v", k, v))
	}
	return rows
}

// NodeIdentityRenewCommand asks a node to renew its identity.
type NodeIdentityRenewCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodeIdentityRenewCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node identity renew [options] <node_id>

  Make a node ask the servers for a new identity with its next heartbeat,
  whatever the age of its current one. The command returns at once; 'nomad
  node identity get' shows the new identity once the node has it.

  Renewing a node identity requires node:write.
` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *NodeIdentityRenewCommand) Synopsis() string { return "Force a node to renew its identity" }

// Run implements cli.Command.
func (c *NodeIdentityRenewCommand) Run(args []string) int {
	const name = "node identity renew"
	client, node, ok := identityNode(&c.Meta, name, c.flagSet(name, flagsClient), args)
	if !ok {
		return 1
	}
	if _, err := client.Nodes().Identity().Renew(&api.NodeIdentityRenewRequest{NodeID: node.ID}, c.query()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error requesting node identity renewal: %s", c.describe(err)))
		return 1
	}
	return 0
}

// identityNode parses the flags of a node identity command and its one
// <node_id> argument, and resolves the node; ok false means the problem
// was reported and the command ends with 1.
func identityNode(m *Meta, name string, fs *flag.FlagSet, args []string) (*api.Client, *api.Node, bool) {
	if !m.parseFlags(fs, args, name) {
		return nil, nil, false
	}
	if fs.NArg() != 1 {
		m.usageError(name, "This command takes one argument: <node_id>")
		return nil, nil, false
	}
	client, ok := m.clientOrError()
	if !ok {
		return nil, nil, false
	}
	node, err := resolveNode(m, client, fs.Arg(0), fullIDLength)
	if err != nil {
		m.Ui.Error(err.Error())
		return nil, nil, false
	}
	return client, node, true
}
