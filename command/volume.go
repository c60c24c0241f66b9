package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

const volumeGroupHelp = `
Usage: nomad volume <subcommand> [options] [args]

  Create, register, inspect and delete dynamic host volumes: volumes of
  one node, made by its client (create, with the built-in "mkdir" plugin)
  or already there (register). Jobs mount them as any host volume, with a
  group volume block of type "host" whose source is the volume's name.
  CSI volumes are not supported by this server.

      $ nomad volume create data.volume.hcl
      $ nomad volume register logs.volume.hcl
      $ nomad volume status
      $ nomad volume status <id>
      $ nomad volume delete -type host <id>
`

// volumeWaitReady bounds how long create and register wait for the
// node to report the volume.
const volumeWaitReady = time.Minute

// VolumeCreateCommand creates a host volume from a specification file.
type VolumeCreateCommand struct {
	Meta
	register bool
}

// Help implements cli.Command.
func (c *VolumeCreateCommand) Help() string {
	verb, what := "create", "Create a host volume: the client of its node makes it with the\n  built-in \"mkdir\" plugin (a directory under the client's host_volumes_dir)."
	if c.register {
		verb, what = "register", "Register a host volume that already exists at host_path on its node\n  (node_id)."
	}
	return strings.TrimSpace(`
Usage: nomad volume ` + verb + ` [options] <file>

  ` + what + ` The file ("-" for standard input) is a volume
  specification in HCL (or JSON, for a ".json" file) with type = "host".
  Unless -detach, waits until the node reports the volume ready.

` + generalOptionsUsage() + `

Volume Options:

  -detach
    Return once the volume is recorded, without waiting for it to be ready.

  -id <id>
    Update the volume with this ID instead of creating a new one.

  -policy-override
    Accepted for Nomad's scripts; there are no Sentinel policies here.

  -verbose
    Display full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *VolumeCreateCommand) Synopsis() string {
	if c.register {
		return "Register an existing host volume"
	}
	return "Create a host volume"
}

// Run implements cli.Command.
func (c *VolumeCreateCommand) Run(args []string) int {
	name := "volume create"
	if c.register {
		name = "volume register"
	}
	var detach, verbose, override bool
	var id string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&override, "policy-override", false, "")
	fs.StringVar(&id, "id", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <file>")
	}
	data, err := c.readFileOrStdin(fs.Arg(0))
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading file: %s", err))
		return 1
	}
	vol, err := parseVolumeSpec(fs.Arg(0), data)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error parsing the volume specification: %s", err))
		return 1
	}
	if id != "" {
		vol.ID = id
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	w := c.write()
	if vol.Namespace != "" && c.namespace == "" {
		w.Namespace = vol.Namespace
	}
	req := &api.HostVolumeCreateRequest{Volume: vol, PolicyOverride: override}
	var out *api.HostVolumeCreateResponse
	verb := "Created"
	if c.register {
		verb = "Registered"
		out, _, err = client.HostVolumes().Register(req, w)
	} else {
		out, _, err = client.HostVolumes().Create(req, w)
	}
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error %s volume: %s", strings.ToLower(verb[:len(verb)-1])+"ing", c.describe(err)))
		return 1
	}
	if out.Warnings != "" {
		c.Ui.Warn(out.Warnings)
	}
	length := idLength(verbose)
	c.Ui.Output(fmt.Sprintf("==> %s host volume %s with ID %s", verb, out.Volume.Name, out.Volume.ID))
	if detach {
		return 0
	}
	v, err := c.waitVolumeReady(client, out.Volume)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error waiting for volume: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("  ✓ Host volume %q %s\n", limit(v.ID, length), v.State))
	c.Ui.Output(formatKV(hostVolumeRows(v, length)))
	if v.State != api.HostVolumeStateReady {
		return 1
	}
	return 0
}

// waitVolumeReady follows the volume with blocking queries until it is
// ready or unavailable, or volumeWaitReady passed.
func (m *Meta) waitVolumeReady(client *api.Client, v *api.HostVolume) (*api.HostVolume, error) {
	deadline := m.now().Add(volumeWaitReady)
	q := m.query()
	q.Namespace = v.Namespace
	for v.State == api.HostVolumeStatePending && m.now().Before(deadline) {
		q.WaitIndex, q.WaitTime = v.ModifyIndex, m.monitorWait()
		next, _, err := client.HostVolumes().Get(v.ID, q)
		if err != nil {
			return nil, err
		}
		v = next
	}
	return v, nil
}

// hostVolumeRows is a volume's key/value block.
func hostVolumeRows(v *api.HostVolume, length int) []string {
	capacity := "<none>"
	if v.CapacityBytes > 0 {
		capacity = humanBytes(v.CapacityBytes)
	}
	return []string{
		"ID|" + limit(v.ID, length),
		"Name|" + v.Name,
		"Namespace|" + v.Namespace,
		"Plugin ID|" + orNone(v.PluginID),
		"Node ID|" + limit(v.NodeID, length),
		"Node Pool|" + v.NodePool,
		"Capacity|" + capacity,
		"State|" + string(v.State),
		"Host Path|" + orNone(v.HostPath),
	}
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// VolumeStatusCommand lists host volumes or shows one.
type VolumeStatusCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *VolumeStatusCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad volume status [options] [id]

  Without an argument, list the host volumes (of the namespace, or of all
  with -namespace "*"). With an ID or an ID prefix, show that volume and the
  allocations that mount it.

` + generalOptionsUsage() + `

Status Options:

  -type <host|csi>
    The kind of volume; only "host" is supported by this server.

  -node <id>
    List only the volumes of this node.

  -node-pool <pool>
    List only the volumes of this node pool.

  -json
    Output the volume(s) in JSON.

  -t <template>
    Format the output with a Go template.

  -verbose
    Display full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *VolumeStatusCommand) Synopsis() string {
	return "Display status information about host volumes"
}

// Run implements cli.Command.
func (c *VolumeStatusCommand) Run(args []string) int {
	const name = "volume status"
	var typ, nodeID, pool, tmpl string
	var verbose, asJSON, short bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&typ, "type", "host", "")
	fs.StringVar(&nodeID, "node", "", "")
	fs.StringVar(&pool, "node-pool", "", "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.BoolVar(&short, "short", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if err := checkVolumeType(typ); err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if fs.NArg() > 1 {
		return c.usageError(name, "This command takes zero or one argument: [id]")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	length := idLength(verbose)
	if fs.NArg() == 0 {
		vols, _, err := client.HostVolumes().List(&api.HostVolumeListRequest{NodeID: nodeID, NodePool: pool}, c.query())
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error querying host volumes: %s", c.describe(err)))
			return 1
		}
		if asJSON || tmpl != "" {
			return printData(&c.Meta, vols, asJSON, tmpl)
		}
		if len(vols) == 0 {
			c.Ui.Output("No host volumes")
			return 0
		}
		c.Ui.Output(formatHostVolumeList(vols, length))
		return 0
	}
	v, err := c.resolveHostVolume(client, fs.Arg(0), length)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, v, asJSON, tmpl)
	}
	c.Ui.Output(formatKV(hostVolumeRows(v, length)))
	if short {
		return 0
	}
	c.Ui.Output("\nAllocations")
	if len(v.Allocations) == 0 {
		c.Ui.Output("No allocations placed")
		return 0
	}
	rows := []string{"ID|Node ID|Task Group|Version|Desired|Status"}
	for _, a := range v.Allocations {
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%d|%s|%s", limit(a.ID, length), limit(a.NodeID, length),
			a.TaskGroup, a.JobVersion, a.DesiredStatus, a.ClientStatus))
	}
	c.Ui.Output(formatList(rows))
	return 0
}

func formatHostVolumeList(vols []*api.HostVolumeStub, length int) string {
	sort.Slice(vols, func(i, j int) bool { return vols[i].ID < vols[j].ID })
	rows := []string{"ID|Name|Namespace|Plugin ID|Node ID|Node Pool|State"}
	for _, v := range vols {
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s", limit(v.ID, length), v.Name, v.Namespace,
			orNone(v.PluginID), limit(v.NodeID, length), v.NodePool, v.State))
	}
	return formatList(rows)
}

// resolveHostVolume reads the volume with this ID, or the one volume
// whose ID starts with it.
func (m *Meta) resolveHostVolume(client *api.Client, prefix string, length int) (*api.HostVolume, error) {
	if len(prefix) < 2 {
		return nil, fmt.Errorf("Identifier %q must contain at least two characters.", prefix)
	}
	q := m.query()
	q.Prefix = prefix
	vols, _, err := client.HostVolumes().List(nil, q)
	if err != nil {
		return nil, fmt.Errorf("Error querying host volumes: %s", m.describe(err))
	}
	var match *api.HostVolumeStub
	for _, v := range vols {
		if v.ID == prefix {
			match = v
			break
		}
	}
	switch {
	case match != nil:
	case len(vols) == 0:
		return nil, fmt.Errorf("No host volume with prefix or ID %q found", prefix)
	case len(vols) > 1:
		return nil, fmt.Errorf("Prefix matched multiple host volumes\n\n%s", formatHostVolumeList(vols, length))
	default:
		match = vols[0]
	}
	q = m.query()
	q.Namespace = match.Namespace
	v, _, err := client.HostVolumes().Get(match.ID, q)
	if err != nil {
		return nil, fmt.Errorf("Error querying host volume: %s", m.describe(err))
	}
	return v, nil
}

// VolumeDeleteCommand deletes a host volume.
type VolumeDeleteCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *VolumeDeleteCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad volume delete [options] <id>

  Delete a host volume. A volume that allocations still mount is refused.
  The client of its node removes what its plugin made; a registered
  volume's directory is left in place.

` + generalOptionsUsage() + `

Delete Options:

  -type <host|csi>
    The kind of volume. Nomad's default is "csi"; this server has host
    volumes only, so "host" is assumed when it is left out.

  -force
    Passed to the server as Nomad's CLI does.
`)
}

// Synopsis implements cli.Command.
func (c *VolumeDeleteCommand) Synopsis() string { return "Delete a host volume" }

// Run implements cli.Command.
func (c *VolumeDeleteCommand) Run(args []string) int {
	const name = "volume delete"
	var typ string
	var force bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&typ, "type", "host", "")
	fs.BoolVar(&force, "force", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if err := checkVolumeType(typ); err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <id>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	v, err := c.resolveHostVolume(client, fs.Arg(0), fullIDLength)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	w := c.write()
	w.Namespace = v.Namespace
	if _, _, err := client.HostVolumes().Delete(&api.HostVolumeDeleteRequest{ID: v.ID, Force: force}, w); err != nil {
		c.Ui.Error(fmt.Sprintf("Error deleting volume: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Successfully deleted volume %q!", v.ID))
	return 0
}
