package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// defaultDrainDeadline is the deadline of `node drain -enable` without
// -deadline, -force or -no-deadline.
const defaultDrainDeadline = time.Hour

// NodeDrainCommand starts, stops or follows the drain of a node.
type NodeDrainCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodeDrainCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node drain [options] <node>

  Drain a node: mark it ineligible for new work and move its allocations
  to other nodes, respecting each group's migrate block. Allocations still
  running at the deadline are stopped. System jobs are stopped last, once
  everything else has left (unless -ignore-system).

  With -enable the command follows the drain until it completes, printing
  each allocation as it is marked for migration, stopped and replaced.
  Ctrl-C stops following; the drain goes on. If the drain has not
  completed a minute after its deadline the command says so and exits 1.

  If <node> is a prefix that matches another node ID, you are asked to
  confirm (skip with -yes).

` + generalOptionsUsage() + `

Node Drain Options:

  -enable
    Start draining the node.

  -disable
    Stop draining the node. The node becomes eligible again unless
    -keep-ineligible is given.

  -deadline=<duration>
    How long allocations may take to migrate before the servers stop them,
    e.g. "30m". Default 1h.

  -force
    Stop every allocation at once, without waiting for migrations.

  -no-deadline
    Never stop allocations: wait for them to migrate however long it takes.

  -ignore-system
    Leave system-job allocations running on the node.

  -keep-ineligible
    With -disable: keep the node ineligible for new work.

  -detach
    Return once the drain is set, without following it.

  -monitor
    Follow a drain that is already running, changing nothing.

  -m=<message>
    A message recorded with the drain (in the node's drain metadata).

  -meta=<key>=<value>
    Metadata recorded with the drain. Repeatable.

  -self
    Drain the node of the agent the command talks to (a client agent).

  -yes
    Do not ask for confirmation.

  -verbose
    Show full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *NodeDrainCommand) Synopsis() string { return "Toggle drain mode on a given node" }

// drainFlags are the parsed options of a drain command.
type drainFlags struct {
	enable, disable, force, noDeadline, ignoreSystem bool
	keepIneligible, detach, monitor, self, yes       bool
	verbose                                          bool
	deadline                                         string
	message                                          string
	meta                                             stringSlice
}

// validate checks the combination of flags and returns the deadline to
// send: -1 to force, 0 for none, otherwise the duration.
func (f *drainFlags) validate(nargs int) (time.Duration, error) {
	switch {
	case f.monitor && (f.enable || f.disable):
		return 0, fmt.Errorf("-monitor follows an existing drain; it cannot be combined with -enable or -disable")
	case !f.monitor && f.enable == f.disable:
		return 0, fmt.Errorf("exactly one of -enable or -disable must be given (or -monitor)")
	case f.self == (nargs == 1) || nargs > 1:
		return 0, fmt.Errorf("this command takes either one argument, <node>, or -self")
	case f.keepIneligible && !f.disable:
		return 0, fmt.Errorf("-keep-ineligible applies only with -disable")
	}
	chosen := 0
	for _, set := range []bool{f.deadline != "", f.force, f.noDeadline} {
		if set {
			chosen++
		}
	}
	if chosen > 0 && !f.enable {
		return 0, fmt.Errorf("-deadline, -force and -no-deadline apply only with -enable")
	}
	if chosen > 1 {
		return 0, fmt.Errorf("only one of -deadline, -force and -no-deadline may be given")
	}
	switch {
	case !f.enable:
		return 0, nil
	case f.force:
		return -1, nil
	case f.noDeadline:
		return 0, nil
	case f.deadline != "":
		d, err := time.ParseDuration(f.deadline)
		if err != nil {
			return 0, fmt.Errorf("invalid -deadline %q: %v", f.deadline, err)
		}
		if d <= 0 {
			return 0, fmt.Errorf("invalid -deadline %q: must be positive (use -force to stop allocations at once)", f.deadline)
		}
		return d, nil
	}
	return defaultDrainDeadline, nil
}

// Run implements cli.Command.
func (c *NodeDrainCommand) Run(args []string) int {
	const name = "node drain"
	var f drainFlags
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&f.enable, "enable", false, "")
	fs.BoolVar(&f.disable, "disable", false, "")
	fs.StringVar(&f.deadline, "deadline", "", "")
	fs.BoolVar(&f.force, "force", false, "")
	fs.BoolVar(&f.noDeadline, "no-deadline", false, "")
	fs.BoolVar(&f.ignoreSystem, "ignore-system", false, "")
	fs.BoolVar(&f.keepIneligible, "keep-ineligible", false, "")
	fs.BoolVar(&f.detach, "detach", false, "")
	fs.BoolVar(&f.monitor, "monitor", false, "")
	fs.StringVar(&f.message, "m", "", "")
	fs.Var(&f.meta, "meta", "")
	fs.BoolVar(&f.self, "self", false, "")
	fs.BoolVar(&f.yes, "yes", false, "")
	fs.BoolVar(&f.verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	deadline, err := f.validate(fs.NArg())
	if err != nil {
		return c.usageError(name, "Error: "+err.Error())
	}
	meta := map[string]string{}
	for _, kv := range f.meta {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return c.usageError(name, fmt.Sprintf("Error: invalid -meta %q: expected key=value", kv))
		}
		meta[k] = v
	}
	if f.message != "" {
		meta["message"] = f.message
	}

	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	length := idLength(f.verbose)
	var node *api.Node
	if f.self {
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

	if f.monitor {
		if node.DrainStrategy == nil {
			c.Ui.Output(fmt.Sprintf("Node %q is not draining", limit(node.ID, length)))
			return 0
		}
		return newDrainMonitor(&c.Meta, client, node, length, false).run()
	}

	if !f.self && node.ID != fs.Arg(0) && !f.yes {
		verb := "enable"
		if f.disable {
			verb = "disable"
		}
		if !confirm(&c.Meta, fmt.Sprintf("Are you sure you want to %s drain mode for node %q? [y/N]", verb, node.ID)) {
			c.Ui.Output("Canceling drain toggle")
			return 0
		}
	}

	req := &api.NodeUpdateDrainRequest{Meta: meta}
	if f.enable {
		req.DrainSpec = &api.DrainSpec{Deadline: deadline, IgnoreSystemJobs: f.ignoreSystem}
	} else {
		req.MarkEligible = !f.keepIneligible
	}
	if len(req.Meta) == 0 {
		req.Meta = nil
	}
	if _, _, err := client.Nodes().UpdateDrainOpts(node.ID, req, c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error updating drain of node %q: %s", limit(node.ID, length), c.describe(err)))
		return 1
	}
	if f.disable {
		c.Ui.Output(fmt.Sprintf("Node %q drain strategy unset", limit(node.ID, length)))
		return 0
	}
	c.Ui.Output(fmt.Sprintf("Node %q drain strategy set", limit(node.ID, length)))
	if f.detach {
		return 0
	}
	// Read the node back for the deadline the servers computed.
	nodeID := node.ID
	node, _, err = client.Nodes().Info(nodeID, c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading node %q: %s", limit(nodeID, length), c.describe(err)))
		return 1
	}
	if node.DrainStrategy == nil {
		c.Ui.Output(fmt.Sprintf("%s: Node %q drain complete", formatTime(c.now()), limit(node.ID, length)))
		return 0
	}
	return newDrainMonitor(&c.Meta, client, node, length, true).run()
}
