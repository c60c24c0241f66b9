package command

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

// NodeStatusCommand lists client nodes or shows one in detail.
type NodeStatusCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodeStatusCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node status [options] [<node>]

  Without an argument, list the client nodes of the region. With a node ID
  (or a unique prefix), show the node: its attributes, drain, the resources
  its allocations hold against its capacity, recent events and its
  allocations.

` + generalOptionsUsage() + `

Node Status Options:

  -self
    Show the node of the agent the command talks to (a client agent).

  -allocs
    In the list, add the number of running allocations of each node.

  -short
    Show only the node's attributes.

  -verbose
    Show full IDs.
` + formatOutputFlagsUsage)
}

// Synopsis implements cli.Command.
func (c *NodeStatusCommand) Synopsis() string { return "Display status information about nodes" }

// Run implements cli.Command.
func (c *NodeStatusCommand) Run(args []string) int {
	const name = "node status"
	var self, allocs, short, verbose, asJSON bool
	var tmpl string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&self, "self", false, "")
	fs.BoolVar(&allocs, "allocs", false, "")
	fs.BoolVar(&short, "short", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() > 1 || (self && fs.NArg() == 1) {
		return c.usageError(name, "This command takes either one argument, <node>, or -self")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	length := idLength(verbose)

	if fs.NArg() == 0 && !self {
		nodes, _, err := client.Nodes().List(c.query())
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error querying node status: %s", c.describe(err)))
			return 1
		}
		if asJSON || tmpl != "" {
			return printData(&c.Meta, nodes, asJSON, tmpl)
		}
		if len(nodes) == 0 {
			c.Ui.Output("No nodes registered")
			return 0
		}
		if allocs {
			return c.listWithAllocs(client, nodes, length)
		}
		c.Ui.Output(formatNodeList(nodes, length))
		return 0
	}

	var node *api.Node
	var err error
	if self {
		var id string
		if id, err = localNodeID(&c.Meta, client); err == nil {
			node, _, err = client.Nodes().Info(id, c.query())
		}
	} else {
		node, err = resolveNode(&c.Meta, client, fs.Arg(0), length)
	}
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, node, asJSON, tmpl)
	}
	c.Ui.Output(formatKV(nodeBasics(node, length)))
	if short {
		return 0
	}
	nodeAllocs, _, err := client.Nodes().Allocations(node.ID, c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error querying node allocations: %s", c.describe(err)))
		return 1
	}
	if ds := node.DrainStrategy; ds != nil {
		c.Ui.Output("\nDrain Strategy")
		c.Ui.Output(formatKV(drainRows(ds)))
	}
	if verbose && len(node.HostVolumes) > 0 {
		c.Ui.Output("\nHost Volumes")
		c.Ui.Output(formatHostVolumes(node.HostVolumes))
	}
	if len(node.Events) > 0 {
		c.Ui.Output("\nNode Events")
		c.Ui.Output(formatNodeEvents(node.Events))
	}
	c.Ui.Output("\nAllocated Resources")
	c.Ui.Output(formatAllocatedResources(node, nodeAllocs))
	c.Ui.Output("\nAllocations")
	if len(nodeAllocs) == 0 {
		c.Ui.Output("No allocations placed")
	} else {
		c.Ui.Output(formatNodeAllocs(nodeAllocs, length))
	}
	return 0
}

// listWithAllocs is the node list with a "Running Allocs" column.
func (c *NodeStatusCommand) listWithAllocs(client *api.Client, nodes []*api.NodeListStub, length int) int {
	sortNodes(nodes)
	rows := []string{"ID|Node Pool|DC|Name|Class|Drain|Eligibility|Status|Running Allocs"}
	for _, n := range nodes {
		allocs, _, err := client.Nodes().Allocations(n.ID, c.query())
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error querying allocations of node %q: %s", n.ID, c.describe(err)))
			return 1
		}
		running := 0
		for _, a := range allocs {
			if a.ClientStatus == api.AllocClientStatusRunning {
				running++
			}
		}
		class := n.NodeClass
		if class == "" {
			class = "<none>"
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s|%t|%s|%s|%d", limit(n.ID, length), n.NodePool, n.Datacenter,
			n.Name, class, n.Drain, n.SchedulingEligibility, n.Status, running))
	}
	c.Ui.Output(formatList(rows))
	return 0
}

// formatHostVolumes lists the volumes a node offers, by name; ID is set
// for dynamic volumes only.
func formatHostVolumes(vols map[string]*api.HostVolumeInfo) string {
	rows := []string{"Name|ReadOnly|Source|ID"}
	for _, name := range slices.Sorted(maps.Keys(vols)) {
		v := vols[name]
		if v == nil {
			continue
		}
		rows = append(rows, fmt.Sprintf("%s|%t|%s|%s", name, v.ReadOnly, v.Path, v.ID))
	}
	return formatList(rows)
}

// nodeBasics is the node's key/value block.
func nodeBasics(n *api.Node, length int) []string {
	var drivers []string
	for name, d := range n.Drivers {
		if d != nil && d.Detected && d.Healthy {
			drivers = append(drivers, name)
		}
	}
	sort.Strings(drivers)
	var volumes []string
	for name := range n.HostVolumes {
		volumes = append(volumes, name)
	}
	sort.Strings(volumes)
	return []string{
		"ID|" + limit(n.ID, length),
		"Name|" + n.Name,
		"Node Pool|" + n.NodePool,
		"Class|" + n.NodeClass,
		"DC|" + n.Datacenter,
		"Address|" + n.HTTPAddr,
		fmt.Sprintf("Drain|%t", n.DrainStrategy != nil || n.Drain),
		"Eligibility|" + n.SchedulingEligibility,
		"Status|" + n.Status,
		"Status Description|" + n.StatusDescription,
		"Host Volumes|" + strings.Join(volumes, ","),
		"Drivers|" + strings.Join(drivers, ","),
	}
}

// drainRows describes an active drain.
func drainRows(ds *api.DrainStrategy) []string {
	deadline := "none (no deadline)"
	switch {
	case ds.Deadline < 0:
		deadline = "forced (allocations stopped at once)"
	case ds.Deadline > 0:
		deadline = ds.Deadline.String()
	}
	return []string{
		"Deadline|" + deadline,
		"Force Deadline|" + formatTime(ds.ForceDeadline),
		"Started At|" + formatTime(ds.StartedAt),
		fmt.Sprintf("Ignore System Jobs|%t", ds.IgnoreSystemJobs),
	}
}

// formatNodeEvents lists a node's most recent events, newest first.
func formatNodeEvents(events []*api.NodeEvent) string {
	sorted := append([]*api.NodeEvent(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Timestamp.After(sorted[j].Timestamp) })
	if len(sorted) > 10 {
		sorted = sorted[:10]
	}
	rows := []string{"Time|Subsystem|Message"}
	for _, e := range sorted {
		rows = append(rows, fmt.Sprintf("%s|%s|%s", formatTime(e.Timestamp), e.Subsystem, e.Message))
	}
	return formatList(rows)
}

// formatAllocatedResources sums what the node's live allocations hold and
// sets it against the node's schedulable capacity (total minus reserved).
func formatAllocatedResources(n *api.Node, allocs []*api.Allocation) string {
	var cpu, mem, disk int64
	for _, a := range allocs {
		if allocTerminal(a.DesiredStatus, a.ClientStatus) || a.AllocatedResources == nil {
			continue
		}
		for _, t := range a.AllocatedResources.Tasks {
			cpu += t.Cpu.CpuShares
			mem += t.Memory.MemoryMB
		}
		disk += a.AllocatedResources.Shared.DiskMB
	}
	var capCPU, capMem, capDisk int64
	if r := n.NodeResources; r != nil {
		capCPU, capMem, capDisk = r.Cpu.CpuShares, r.Memory.MemoryMB, r.Disk.DiskMB
	}
	if r := n.ReservedResources; r != nil {
		capCPU -= int64(r.Cpu.CpuShares)
		capMem -= int64(r.Memory.MemoryMB)
		capDisk -= int64(r.Disk.DiskMB)
	}
	return formatList([]string{
		"CPU|Memory|Disk",
		fmt.Sprintf("%d/%d MHz|%s/%s|%s/%s", cpu, capCPU, formatMB(mem), formatMB(capMem), formatMB(disk), formatMB(capDisk)),
	})
}

// allocTerminal reports whether an allocation no longer holds resources:
// the servers stopped it or it finished on its client.
func allocTerminal(desired, client string) bool {
	switch desired {
	case api.AllocDesiredStatusStop, api.AllocDesiredStatusEvict:
		return true
	}
	switch client {
	case api.AllocClientStatusComplete, api.AllocClientStatusFailed, api.AllocClientStatusLost:
		return true
	}
	return false
}

// formatNodeAllocs lists a node's allocations, newest first.
func formatNodeAllocs(allocs []*api.Allocation, length int) string {
	sort.Slice(allocs, func(i, j int) bool {
		if allocs[i].CreateIndex != allocs[j].CreateIndex {
			return allocs[i].CreateIndex > allocs[j].CreateIndex
		}
		return allocs[i].ID < allocs[j].ID
	})
	rows := []string{"ID|Job ID|Task Group|Version|Desired|Status|Created|Modified"}
	for _, a := range allocs {
		var version uint64
		if a.Job != nil {
			version = derefUint64(a.Job.Version)
		}
		rows = append(rows, strings.Join([]string{limit(a.ID, length), a.JobID, a.TaskGroup, strconv.FormatUint(version, 10),
			a.DesiredStatus, a.ClientStatus, formatUnixNano(a.CreateTime), formatUnixNano(a.ModifyTime)}, "|"))
	}
	return formatList(rows)
}

// localNodeID returns the node ID of the client agent the CLI talks to.
func localNodeID(m *Meta, c *api.Client) (string, error) {
	self, err := c.Agent().Self()
	if err != nil {
		return "", fmt.Errorf("querying the agent: %s", m.describe(err))
	}
	id := self.Stats["client"]["node_id"]
	if id == "" {
		return "", fmt.Errorf("the agent at %s is not a client; -self needs a client agent", c.Address())
	}
	return id, nil
}

// printData prints data as JSON or through a template.
func printData(m *Meta, data any, asJSON bool, tmpl string) int {
	out, err := dataFormat(data, asJSON, tmpl)
	if err != nil {
		m.Ui.Error(err.Error())
		return 1
	}
	m.Ui.Output(out)
	return 0
}
