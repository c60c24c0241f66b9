package command

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/opennomad/nomad/api"
)

const namespaceGroupHelp = `
Usage: nomad namespace <subcommand> [options] [args]

  Create, list, inspect and delete namespaces. Writes need a management
  token; a token lists and reads the namespaces it may use.

      $ nomad namespace apply -description "team A" team-a
      $ nomad namespace apply team-a.hcl
      $ nomad namespace list
      $ nomad namespace status team-a
      $ nomad namespace inspect team-a
      $ nomad namespace delete team-a
`

// NamespaceApplyCommand creates or updates a namespace.
type NamespaceApplyCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NamespaceApplyCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad namespace apply [options] <namespace | file>

  Create or update a namespace. Given a name, the namespace is created, or
  the existing one changed by the flags given. Given a file ("-" for
  standard input), the namespace it specifies (HCL, or JSON with -json)
  replaces the one of its name. Needs a management token.

` + generalOptionsUsage() + `

Apply Options:

  -description <text>
    A description of the namespace.

  -meta <key>=<value>
    Metadata of the namespace; may be repeated.

  -json
    The file is the namespace in its JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *NamespaceApplyCommand) Synopsis() string { return "Create or update a namespace" }

// Run implements cli.Command.
func (c *NamespaceApplyCommand) Run(args []string) int {
	const name = "namespace apply"
	var description optionalString
	var meta stringSlice
	var asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.Var(&description, "description", "")
	fs.Var(&meta, "meta", "")
	fs.BoolVar(&asJSON, "json", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <namespace> or <file>")
	}
	arg := fs.Arg(0)
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}

	var ns *api.Namespace
	if isSpecFile(arg) {
		data, err := c.readFileOrStdin(arg)
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error reading the namespace specification: %s", err))
			return 1
		}
		if ns, err = parseNamespaceSpec(arg, data, asJSON); err != nil {
			c.Ui.Error(fmt.Sprintf("Error parsing the namespace specification: %s", err))
			return 1
		}
	} else {
		// A name: change the existing namespace, or start a new one.
		existing, _, err := client.Namespaces().Info(arg, c.query())
		if code, known := api.StatusCodeOf(err); err != nil && !(known && code == 404) {
			c.Ui.Error(fmt.Sprintf("Error reading namespace: %s", c.describe(err)))
			return 1
		}
		ns = &api.Namespace{Name: arg}
		if err == nil && existing != nil {
			ns = existing
		}
	}
	if description.set {
		ns.Description = description.value
	}
	for _, kv := range meta {
		k, v, found := strings.Cut(kv, "=")
		if !found || k == "" {
			return c.usageError(name, fmt.Sprintf("-meta %q is not <key>=<value>", kv))
		}
		if ns.Meta == nil {
			ns.Meta = map[string]string{}
		}
		ns.Meta[k] = v
	}
	if _, err := client.Namespaces().Register(ns, c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error applying namespace specification: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Successfully applied namespace %q!", ns.Name))
	return 0
}

// isSpecFile reports whether apply's argument names a file rather than a
// namespace: "-" (standard input) or a file that exists.
func isSpecFile(arg string) bool {
	if arg == "-" {
		return true
	}
	fi, err := os.Stat(arg)
	return err == nil && fi.Mode().IsRegular()
}

// namespaceSpec is a namespace as a specification file writes it, in
// Nomad's HCL.
type namespaceSpec struct {
	Name         string `hcl:"name"`
	Description  string `hcl:"description,optional"`
	Quota        string `hcl:"quota,optional"`
	Capabilities *struct {
		EnabledTaskDrivers   []string `hcl:"enabled_task_drivers,optional"`
		DisabledTaskDrivers  []string `hcl:"disabled_task_drivers,optional"`
		EnabledNetworkModes  []string `hcl:"enabled_network_modes,optional"`
		DisabledNetworkModes []string `hcl:"disabled_network_modes,optional"`
	} `hcl:"capabilities,block"`
	NodePool *struct {
		Default string   `hcl:"default,optional"`
		Allowed []string `hcl:"allowed,optional"`
		Denied  []string `hcl:"denied,optional"`
	} `hcl:"node_pool_config,block"`
	Meta *struct {
		Body hcl.Body `hcl:",remain"`
	} `hcl:"meta,block"`
}

// parseNamespaceSpec reads a namespace specification: JSON (the API's
// form) when asJSON, otherwise HCL.
func parseNamespaceSpec(filename string, data []byte, asJSON bool) (*api.Namespace, error) {
	if asJSON {
		var ns api.Namespace
		if err := json.Unmarshal(data, &ns); err != nil {
			return nil, err
		}
		return &ns, nil
	}
	f, diags := hclparse.NewParser().ParseHCL(data, filename)
	if diags.HasErrors() {
		return nil, diags
	}
	var spec namespaceSpec
	if diags := gohcl.DecodeBody(f.Body, nil, &spec); diags.HasErrors() {
		return nil, diags
	}
	ns := &api.Namespace{Name: spec.Name, Description: spec.Description, Quota: spec.Quota}
	if c := spec.Capabilities; c != nil {
		ns.Capabilities = &api.NamespaceCapabilities{
			EnabledTaskDrivers: c.EnabledTaskDrivers, DisabledTaskDrivers: c.DisabledTaskDrivers,
			EnabledNetworkModes: c.EnabledNetworkModes, DisabledNetworkModes: c.DisabledNetworkModes,
		}
	}
	if p := spec.NodePool; p != nil {
		ns.NodePoolConfiguration = &api.NamespaceNodePoolConfiguration{Default: p.Default, Allowed: p.Allowed, Denied: p.Denied}
	}
	if spec.Meta != nil {
		meta := map[string]string{}
		if diags := gohcl.DecodeBody(spec.Meta.Body, nil, &meta); diags.HasErrors() {
			return nil, diags
		}
		ns.Meta = meta
	}
	return ns, nil
}

// NamespaceListCommand lists namespaces.
type NamespaceListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NamespaceListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad namespace list [options]

  List the namespaces the token may use.

` + generalOptionsUsage() + `

List Options:

  -json
    Output the namespaces in their JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *NamespaceListCommand) Synopsis() string { return "List namespaces" }

// Run implements cli.Command.
func (c *NamespaceListCommand) Run(args []string) int {
	const name = "namespace list"
	var asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
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
	list, _, err := client.Namespaces().List(c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error retrieving namespaces: %s", c.describe(err)))
		return 1
	}
	if asJSON {
		if list == nil {
			list = []*api.Namespace{}
		}
		return printData(&c.Meta, list, true, "")
	}
	if len(list) == 0 {
		c.Ui.Output("No namespaces found")
		return 0
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	rows := []string{"Name|Description"}
	for _, ns := range list {
		rows = append(rows, ns.Name+"|"+ns.Description)
	}
	c.Ui.Output(formatList(rows))
	return 0
}

// NamespaceStatusCommand shows a namespace.
type NamespaceStatusCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NamespaceStatusCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad namespace status [options] <namespace>

  Show a namespace: its description, capabilities and metadata.

` + generalOptionsUsage() + `

Status Options:

  -json
    Output the namespace in its JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *NamespaceStatusCommand) Synopsis() string { return "Display a namespace's status" }

// Run implements cli.Command.
func (c *NamespaceStatusCommand) Run(args []string) int {
	const name = "namespace status"
	var asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <namespace>")
	}
	ns, ok := c.namespaceInfo(fs.Arg(0))
	if !ok {
		return 1
	}
	if asJSON {
		return printData(&c.Meta, ns, true, "")
	}
	c.Ui.Output(formatNamespace(ns))
	return 0
}

// namespaceInfo reads one namespace, reporting an error to the user.
func (m *Meta) namespaceInfo(name string) (*api.Namespace, bool) {
	client, ok := m.clientOrError()
	if !ok {
		return nil, false
	}
	ns, _, err := client.Namespaces().Info(name, m.query())
	if err != nil {
		m.Ui.Error(fmt.Sprintf("Error retrieving namespace: %s", m.describe(err)))
		return nil, false
	}
	return ns, true
}

func formatNamespace(ns *api.Namespace) string {
	orNone := func(list []string) string {
		if len(list) == 0 {
			return "<none>"
		}
		return strings.Join(list, ",")
	}
	quota := ns.Quota
	if quota == "" {
		quota = "<none>"
	}
	rows := []string{
		"Name|" + ns.Name,
		"Description|" + ns.Description,
		"Quota|" + quota,
	}
	if c := ns.Capabilities; c != nil {
		rows = append(rows,
			"EnabledDrivers|"+orNone(c.EnabledTaskDrivers),
			"DisabledDrivers|"+orNone(c.DisabledTaskDrivers),
			"EnabledNetworkModes|"+orNone(c.EnabledNetworkModes),
			"DisabledNetworkModes|"+orNone(c.DisabledNetworkModes))
	}
	if p := ns.NodePoolConfiguration; p != nil {
		rows = append(rows, "NodePoolDefault|"+p.Default, "NodePoolAllowed|"+orNone(p.Allowed),
			"NodePoolDenied|"+orNone(p.Denied))
	}
	rows = append(rows, "CreateIndex|"+strconv.FormatUint(ns.CreateIndex, 10),
		"ModifyIndex|"+strconv.FormatUint(ns.ModifyIndex, 10))
	out := formatKV(rows)
	if len(ns.Meta) > 0 {
		keys := make([]string, 0, len(ns.Meta))
		for k := range ns.Meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		meta := make([]string, 0, len(keys))
		for _, k := range keys {
			meta = append(meta, k+"|"+ns.Meta[k])
		}
		out += "\n\nMetadata\n" + formatKV(meta)
	}
	return out
}

// NamespaceInspectCommand prints a namespace in its JSON format.
type NamespaceInspectCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NamespaceInspectCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad namespace inspect [options] <namespace>

  Output a namespace in its JSON format.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *NamespaceInspectCommand) Synopsis() string { return "Inspect a namespace" }

// Run implements cli.Command.
func (c *NamespaceInspectCommand) Run(args []string) int {
	const name = "namespace inspect"
	fs := c.flagSet(name, flagsClient)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <namespace>")
	}
	ns, ok := c.namespaceInfo(fs.Arg(0))
	if !ok {
		return 1
	}
	return printData(&c.Meta, ns, true, "")
}

// NamespaceDeleteCommand deletes a namespace.
type NamespaceDeleteCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NamespaceDeleteCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad namespace delete [options] <namespace>

  Delete a namespace. The default namespace, and a namespace that still
  has jobs that are not dead, cannot be deleted. Needs a management token.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *NamespaceDeleteCommand) Synopsis() string { return "Delete a namespace" }

// Run implements cli.Command.
func (c *NamespaceDeleteCommand) Run(args []string) int {
	const name = "namespace delete"
	fs := c.flagSet(name, flagsClient)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <namespace>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	if _, err := client.Namespaces().Delete(fs.Arg(0), c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error deleting namespace: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Successfully deleted namespace %q!", fs.Arg(0)))
	return 0
}
