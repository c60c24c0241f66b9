package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opennomad/nomad/api"
)

// NodeMetaApplyCommand changes a node's dynamic metadata.
type NodeMetaApplyCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodeMetaApplyCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node meta apply [-node-id ...] [-unset ...] key1=value1 ... kN=vN

  Modify a node's metadata. The changes apply at once on the node and are
  sent to the servers, so that constraints on ${meta.<key>} see them; the
  node keeps them across client restarts. Dynamic metadata overrides the
  static metadata of the client's configuration.

  Changing metadata requires node:write. The command must talk to the
  client agent running the node.

` + generalOptionsUsage() + `

Node Meta Apply Options:

  -node-id
    Update the metadata of the given node (an ID or a unique prefix). If
    not given, the node of the agent the command talks to is changed.

  -unset
    Comma separated list of keys to remove from the node's metadata,
    static or dynamic.
`)
}

// Synopsis implements cli.Command.
func (c *NodeMetaApplyCommand) Synopsis() string { return "Modify node metadata" }

// Run implements cli.Command.
func (c *NodeMetaApplyCommand) Run(args []string) int {
	const name = "node meta apply"
	var nodeID, unset string
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&nodeID, "node-id", "", "")
	fs.StringVar(&unset, "unset", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() == 0 && unset == "" {
		return c.usageError(name, "Error: must specify metadata to apply or -unset")
	}
	changes, err := parseMetaChanges(fs.Args(), unset)
	if err != nil {
		return c.usageError(name, "Error: "+err.Error())
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	if nodeID, ok = c.metaNodeID(client, nodeID); !ok {
		return 1
	}
	req := &api.NodeMetaApplyRequest{NodeID: nodeID, Meta: changes}
	if _, err := client.Nodes().Meta().Apply(req, c.query()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error applying dynamic node metadata: %s", c.describe(err)))
		return 1
	}
	return 0
}

// parseMetaChanges reads key=value arguments and the -unset list into
// the request's map (nil values remove keys).
func parseMetaChanges(args []string, unset string) (map[string]*string, error) {
	changes := map[string]*string{}
	for _, arg := range args {
		k, v, ok := strings.Cut(arg, "=")
		if !ok {
			return nil, fmt.Errorf("metadata must be given as key=value, got %q", arg)
		}
		changes[k] = &v
	}
	if unset != "" {
		for _, k := range strings.Split(unset, ",") {
			k = strings.TrimSpace(k)
			if _, set := changes[k]; set {
				return nil, fmt.Errorf("key %q is both set and unset", k)
			}
			changes[k] = nil
		}
	}
	return changes, nil
}

// metaNodeID resolves a -node-id prefix to a full ID; empty stays empty
// (the agent's own node).
func (m *Meta) metaNodeID(client *api.Client, prefix string) (string, bool) {
	if prefix == "" {
		return "", true
	}
	node, err := resolveNode(m, client, prefix, fullIDLength)
	if err != nil {
		m.Ui.Error(err.Error())
		return "", false
	}
	return node.ID, true
}

// NodeMetaReadCommand shows a node's metadata.
type NodeMetaReadCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodeMetaReadCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node meta read [-json] [-node-id ...]

  Read a node's metadata: all of it as the node registers it, the dynamic
  part applied with 'nomad node meta apply', and the static part from the
  client's configuration.

  Reading metadata requires node:read. The command must talk to the
  client agent running the node.

` + generalOptionsUsage() + `

Node Meta Read Options:

  -json
    Output the metadata in its JSON format.

  -node-id
    Read the metadata of the given node (an ID or a unique prefix). If not
    given, the node of the agent the command talks to is read.
`)
}

// Synopsis implements cli.Command.
func (c *NodeMetaReadCommand) Synopsis() string { return "Read node metadata" }

// Run implements cli.Command.
func (c *NodeMetaReadCommand) Run(args []string) int {
	const name = "node meta read"
	var nodeID string
	var asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&nodeID, "node-id", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "Error: this command takes no arguments")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	if nodeID, ok = c.metaNodeID(client, nodeID); !ok {
		return 1
	}
	meta, err := client.Nodes().Meta().Read(nodeID, c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading dynamic node metadata: %s", c.describe(err)))
		return 1
	}
	if asJSON {
		out, err := dataFormat(meta, true, "")
		if err != nil {
			c.Ui.Error(err.Error())
			return 1
		}
		c.Ui.Output(out)
		return 0
	}
	c.Ui.Output("All Meta")
	c.Ui.Output(formatNodeMeta(meta.Meta))
	dynamic := make(map[string]string, len(meta.Dynamic))
	for k, v := range meta.Dynamic {
		if v == nil {
			dynamic[k] = "<unset>"
		} else {
			dynamic[k] = *v
		}
	}
	c.Ui.Output("\nDynamic Meta")
	c.Ui.Output(formatNodeMeta(dynamic))
	c.Ui.Output("\nStatic Meta")
	c.Ui.Output(formatNodeMeta(meta.Static))
	return 0
}

// formatNodeMeta renders metadata as sorted key = value lines.
func formatNodeMeta(meta map[string]string) string {
	if len(meta) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rows := make([]string, len(keys))
	for i, k := range keys {
		rows[i] = k + "|" + meta[k]
	}
	return formatKV(rows)
}
