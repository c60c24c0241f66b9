package command

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/opennomad/nomad/api"
)

// The node pool commands that read: list, info, and the nodes and jobs
// of a pool. A pool is named by its name or a prefix of it that matches
// one pool.

// poolListFlags are the list flags shared by list, nodes and jobs.
type poolListFlags struct {
	filter, pageToken, tmpl string
	perPage                 int
	asJSON                  bool
}

func (p *poolListFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.filter, "filter", "", "")
	fs.StringVar(&p.pageToken, "page-token", "", "")
	fs.IntVar(&p.perPage, "per-page", 0, "")
	fs.BoolVar(&p.asJSON, "json", false, "")
	fs.StringVar(&p.tmpl, "t", "", "")
}

// query is the list query the flags ask for.
func (p *poolListFlags) query(m *Meta) *api.QueryOptions {
	q := m.query()
	q.Filter, q.NextToken, q.PerPage = p.filter, p.pageToken, int32(p.perPage)
	return q
}

const poolListOptionsUsage = `
  -filter <expression>
    Show only the results the expression matches.

  -json
    Output the results in their JSON format.

  -page-token <token>
    Where to start the page.

  -per-page <n>
    How many results to show per page; 0 (the default) shows all.

  -t <template>
    Format and display the results with a Go template.`

// paginated tells the user how to get the next page, if any.
func (m *Meta) paginated(command, next string) {
	if next != "" {
		m.Ui.Output(fmt.Sprintf("\nResults have been paginated. To get the next page run:\n\n%s -page-token %s", command, next))
	}
}

// NodePoolListCommand lists node pools.
type NodePoolListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodePoolListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node pool list [options]

  List the node pools the token may read.

` + generalOptionsUsage() + `

List Options:
` + poolListOptionsUsage)
}

// Synopsis implements cli.Command.
func (c *NodePoolListCommand) Synopsis() string { return "List node pools" }

// Run implements cli.Command.
func (c *NodePoolListCommand) Run(args []string) int {
	const name = "node pool list"
	var lf poolListFlags
	fs := c.flagSet(name, flagsClient)
	lf.register(fs)
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
	pools, qm, err := client.NodePools().List(lf.query(&c.Meta))
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error retrieving node pools: %s", c.describe(err)))
		return 1
	}
	if lf.asJSON || lf.tmpl != "" {
		if pools == nil {
			pools = []*api.NodePool{}
		}
		return printData(&c.Meta, pools, lf.asJSON, lf.tmpl)
	}
	if len(pools) == 0 {
		c.Ui.Output("No node pools found")
		return 0
	}
	c.Ui.Output(formatNodePoolList(pools))
	c.paginated("nomad node pool list", qm.NextToken)
	return 0
}

func formatNodePoolList(pools []*api.NodePool) string {
	sort.Slice(pools, func(i, j int) bool { return pools[i].Name < pools[j].Name })
	rows := []string{"Name|Description"}
	for _, p := range pools {
		rows = append(rows, p.Name+"|"+p.Description)
	}
	return formatList(rows)
}

// resolveNodePool finds the pool named name, or the one pool whose name
// starts with it.
func resolveNodePool(m *Meta, c *api.Client, name string) (*api.NodePool, error) {
	pools, _, err := c.NodePools().PrefixList(name, m.query())
	if err != nil {
		return nil, fmt.Errorf("Error retrieving node pools: %s", m.describe(err))
	}
	for _, p := range pools {
		if p.Name == name {
			return p, nil
		}
	}
	switch len(pools) {
	case 0:
		return nil, fmt.Errorf("No node pool with prefix %q found", name)
	case 1:
		return pools[0], nil
	}
	return nil, &ambiguousError{kind: "node pools", list: formatNodePoolList(pools)}
}

// NodePoolInfoCommand shows a node pool.
type NodePoolInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodePoolInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node pool info [options] <node-pool>

  Show a node pool: its description, node identity TTL and metadata.
  With ACLs on, the token needs read on the pool in a node_pool policy.

` + generalOptionsUsage() + `

Info Options:

  -json
    Output the node pool in its JSON format.

  -t <template>
    Format and display the node pool with a Go template.
`)
}

// Synopsis implements cli.Command.
func (c *NodePoolInfoCommand) Synopsis() string { return "Fetch information on an existing node pool" }

// Run implements cli.Command.
func (c *NodePoolInfoCommand) Run(args []string) int {
	const name = "node pool info"
	var asJSON bool
	var tmpl string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <node-pool>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	pool, err := resolveNodePool(&c.Meta, client, fs.Arg(0))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, pool, asJSON, tmpl)
	}
	c.Ui.Output(formatNodePool(pool))
	return 0
}

func formatNodePool(p *api.NodePool) string {
	rows := []string{"Name|" + p.Name, "Description|" + p.Description}
	if p.NodeIdentityTTL != 0 {
		rows = append(rows, "Node Identity TTL|"+p.NodeIdentityTTL.String())
	}
	out := formatKV(rows) + "\n\nMetadata\n"
	if len(p.Meta) == 0 {
		return out + "No metadata"
	}
	keys := make([]string, 0, len(p.Meta))
	for k := range p.Meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	meta := make([]string, 0, len(keys))
	for _, k := range keys {
		meta = append(meta, k+"|"+p.Meta[k])
	}
	return out + formatKV(meta)
}

// NodePoolNodesCommand lists the nodes of a node pool.
type NodePoolNodesCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodePoolNodesCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node pool nodes [options] <node-pool>

  List the nodes of a node pool ("all": every node). With ACLs on, the
  token needs node read and read on the pool in a node_pool policy.

` + generalOptionsUsage() + `

Nodes Options:
` + poolListOptionsUsage + `

  -verbose
    Show full node IDs.
`)
}

// Synopsis implements cli.Command.
func (c *NodePoolNodesCommand) Synopsis() string { return "Retrieve a list of nodes in a node pool" }

// Run implements cli.Command.
func (c *NodePoolNodesCommand) Run(args []string) int {
	const name = "node pool nodes"
	var lf poolListFlags
	var verbose bool
	fs := c.flagSet(name, flagsClient)
	lf.register(fs)
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <node-pool>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	pool, err := resolveNodePool(&c.Meta, client, fs.Arg(0))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	nodes, qm, err := client.NodePools().ListNodes(pool.Name, lf.query(&c.Meta))
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error querying nodes: %s", c.describe(err)))
		return 1
	}
	if lf.asJSON || lf.tmpl != "" {
		if nodes == nil {
			nodes = []*api.NodeListStub{}
		}
		return printData(&c.Meta, nodes, lf.asJSON, lf.tmpl)
	}
	if len(nodes) == 0 {
		c.Ui.Output(fmt.Sprintf("No nodes in node pool %q", pool.Name))
		return 0
	}
	sortNodes(nodes)
	length := idLength(verbose)
	rows := []string{"ID|DC|Name|Class|Drain|Eligibility|Status"}
	for _, n := range nodes {
		class := n.NodeClass
		if class == "" {
			class = "<none>"
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%t|%s|%s", limit(n.ID, length), n.Datacenter, n.Name, class,
			n.Drain, n.SchedulingEligibility, n.Status))
	}
	c.Ui.Output(formatList(rows))
	c.paginated("nomad node pool nodes "+strings.Join(args, " "), qm.NextToken)
	return 0
}

// NodePoolJobsCommand lists the jobs of a node pool.
type NodePoolJobsCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodePoolJobsCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node pool jobs [options] <node-pool>

  List the jobs of a node pool in the namespace (-namespace '*': in every
  namespace the token may list). With ACLs on, the token needs read on
  the pool in a node_pool policy; jobs are shown from the namespaces where
  it may list jobs.

` + generalOptionsUsage() + `

Jobs Options:
` + poolListOptionsUsage + `
`)
}

// Synopsis implements cli.Command.
func (c *NodePoolJobsCommand) Synopsis() string { return "Retrieve a list of jobs in a node pool" }

// Run implements cli.Command.
func (c *NodePoolJobsCommand) Run(args []string) int {
	const name = "node pool jobs"
	var lf poolListFlags
	fs := c.flagSet(name, flagsClient)
	lf.register(fs)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <node-pool>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	pool, err := resolveNodePool(&c.Meta, client, fs.Arg(0))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	q := lf.query(&c.Meta)
	jobs, qm, err := client.NodePools().ListJobs(pool.Name, q)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error querying jobs: %s", c.describe(err)))
		return 1
	}
	if lf.asJSON || lf.tmpl != "" {
		if jobs == nil {
			jobs = []*api.JobListStub{}
		}
		return printData(&c.Meta, jobs, lf.asJSON, lf.tmpl)
	}
	if len(jobs) == 0 {
		c.Ui.Output("No jobs found")
		return 0
	}
	c.Ui.Output(formatJobList(jobs, c.allNamespaces()))
	c.paginated("nomad node pool jobs "+strings.Join(args, " "), qm.NextToken)
	return 0
}
