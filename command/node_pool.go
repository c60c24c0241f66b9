package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/opennomad/nomad/api"
)

// The node pool commands that write: apply, init and delete. The
// listing ones are in node_pool_list.go.

const nodePoolGroupHelp = `
Usage: nomad node pool <subcommand> [options] [args]

  Create, list, inspect and delete node pools. A job runs only on the
  nodes of its node pool ("all": on any node); a node joins the pool its
  client configuration names, "default" if none.

      $ nomad node pool init
      $ nomad node pool apply pool.nomad.hcl
      $ nomad node pool list
      $ nomad node pool info prod
      $ nomad node pool nodes prod
      $ nomad node pool jobs prod
      $ nomad node pool delete prod

  Run 'nomad node pool <subcommand> -help' for a subcommand's flags.
`

// NodePoolApplyCommand creates or updates a node pool from a
// specification file.
type NodePoolApplyCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodePoolApplyCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node pool apply [options] <input>

  Create or update a node pool. The specification is read from the file
  <input>, or from standard input with "-": HCL, or JSON with -json.

      node_pool "prod" {
        description = "Node pool for production workloads."
        meta {
          env = "prod"
        }
      }

  With ACLs on, the token needs write on the pool in a node_pool policy.

` + generalOptionsUsage() + `

Apply Options:

  -json
    Parse the input as a JSON node pool specification.
`)
}

// Synopsis implements cli.Command.
func (c *NodePoolApplyCommand) Synopsis() string { return "Create or update a node pool" }

// Run implements cli.Command.
func (c *NodePoolApplyCommand) Run(args []string) int {
	const name = "node pool apply"
	var asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <input>")
	}
	path := fs.Arg(0)
	data, err := c.readFileOrStdin(path)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Failed to read input: %s", err))
		return 1
	}
	pool, err := parseNodePoolSpec(path, data, asJSON || strings.HasSuffix(path, ".json"))
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Failed to parse node pool: %s", err))
		return 1
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	if _, err := client.NodePools().Register(pool, c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error applying node pool: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Successfully applied node pool %q!", pool.Name))
	return 0
}

// nodePoolFile is a node pool specification file in HCL: one node_pool
// block, labelled with the pool's name.
type nodePoolFile struct {
	Pool *struct {
		Name            string `hcl:"name,label"`
		Description     string `hcl:"description,optional"`
		NodeIdentityTTL string `hcl:"node_identity_ttl,optional"`
		Meta            *struct {
			Body hcl.Body `hcl:",remain"`
		} `hcl:"meta,block"`
		SchedulerConfig *struct {
			SchedulerAlgorithm            string `hcl:"scheduler_algorithm,optional"`
			MemoryOversubscriptionEnabled *bool  `hcl:"memory_oversubscription_enabled,optional"`
		} `hcl:"scheduler_config,block"`
	} `hcl:"node_pool,block"`
}

// parseNodePoolSpec reads a node pool specification: JSON (the API's
// form) when asJSON, otherwise HCL.
func parseNodePoolSpec(filename string, data []byte, asJSON bool) (*api.NodePool, error) {
	if asJSON {
		var pool api.NodePool
		if err := json.Unmarshal(data, &pool); err != nil {
			return nil, err
		}
		if pool.Name == "" {
			return nil, errors.New("missing node pool name")
		}
		return &pool, nil
	}
	f, diags := hclparse.NewParser().ParseHCL(data, filename)
	if diags.HasErrors() {
		return nil, diags
	}
	var spec nodePoolFile
	if diags := gohcl.DecodeBody(f.Body, nil, &spec); diags.HasErrors() {
		return nil, diags
	}
	p := spec.Pool
	if p == nil {
		return nil, errors.New(`missing a node_pool "<name>" block`)
	}
	pool := &api.NodePool{Name: p.Name, Description: p.Description}
	if p.NodeIdentityTTL != "" {
		ttl, err := time.ParseDuration(p.NodeIdentityTTL)
		if err != nil {
			return nil, fmt.Errorf("node_identity_ttl: %w", err)
		}
		pool.NodeIdentityTTL = ttl
	}
	if p.Meta != nil {
		meta := map[string]string{}
		if diags := gohcl.DecodeBody(p.Meta.Body, nil, &meta); diags.HasErrors() {
			return nil, diags
		}
		pool.Meta = meta
	}
	if sc := p.SchedulerConfig; sc != nil {
		pool.SchedulerConfiguration = &api.NodePoolSchedulerConfiguration{
			SchedulerAlgorithm: sc.SchedulerAlgorithm, MemoryOversubscriptionEnabled: sc.MemoryOversubscriptionEnabled}
	}
	return pool, nil
}

// NodePoolInitCommand writes an example node pool specification.
type NodePoolInitCommand struct {
	Meta
}

// Example node pool specifications, and the files init writes them to.
const (
	nodePoolExampleHCLFile  = "pool.nomad.hcl"
	nodePoolExampleJSONFile = "pool.nomad.json"
	nodePoolExampleHCL      = `# A node pool groups client nodes. A client joins a pool with
# client { node_pool = "example" } in its configuration; a job runs in
# it with node_pool = "example".
node_pool "example" {
  # A description shown in the list of pools.
  description = "Example node pool"

  # Metadata, free-form key/value pairs.
  meta {
    environment = "prod"
    owner       = "sre"
  }
}
`
	nodePoolExampleJSON = `{
  "Name": "example",
  "Description": "Example node pool",
  "Meta": {
    "environment": "prod",
    "owner": "sre"
  }
}
`
)

// Help implements cli.Command.
func (c *NodePoolInitCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node pool init [options] [<filename>]

  Write an example node pool specification to <filename> (default:
  ` + nodePoolExampleHCLFile + `, or ` + nodePoolExampleJSONFile + ` with -out=json), to change
  and then apply with 'nomad node pool apply'. An existing file is never
  overwritten.

Init Options:

  -out <hcl|json>
    Format of the specification. Defaults to hcl.

  -quiet
    Do not print the success message.
`)
}

// Synopsis implements cli.Command.
func (c *NodePoolInitCommand) Synopsis() string {
	return "Create an example node pool specification file"
}

// Run implements cli.Command.
func (c *NodePoolInitCommand) Run(args []string) int {
	const name = "node pool init"
	var out string
	var quiet bool
	flags := c.flagSet(name, flagsNone)
	flags.StringVar(&out, "out", "hcl", "")
	flags.BoolVar(&quiet, "quiet", false, "")
	if !c.parseFlags(flags, args, name) {
		return 1
	}
	if flags.NArg() > 1 {
		return c.usageError(name, "This command takes zero or one argument: [<filename>]")
	}
	path, content := nodePoolExampleHCLFile, nodePoolExampleHCL
	switch out {
	case "hcl":
	case "json":
		path, content = nodePoolExampleJSONFile, nodePoolExampleJSON
	default:
		return c.usageError(name, fmt.Sprintf("Invalid -out %q: must be hcl or json", out))
	}
	if flags.NArg() == 1 {
		path = flags.Arg(0)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			c.Ui.Error(fmt.Sprintf("Node pool specification %q already exists", path))
			return 1
		}
		c.Ui.Error(fmt.Sprintf("Failed to create %q: %v", path, err))
		return 1
	}
	_, werr := f.WriteString(content)
	if err := errors.Join(werr, f.Close()); err != nil {
		c.Ui.Error(fmt.Sprintf("Failed to write %q: %v", path, err))
		return 1
	}
	if !quiet {
		c.Ui.Output(fmt.Sprintf("Example node pool specification written to %s", path))
	}
	return 0
}

// NodePoolDeleteCommand deletes a node pool.
type NodePoolDeleteCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *NodePoolDeleteCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad node pool delete [options] <node-pool>

  Delete a node pool. The built-in pools "all" and "default", and a pool
  that still has nodes or jobs that are not dead, cannot be deleted. With
  ACLs on, the token needs delete on the pool in a node_pool policy.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *NodePoolDeleteCommand) Synopsis() string { return "Delete a node pool" }

// Run implements cli.Command.
func (c *NodePoolDeleteCommand) Run(args []string) int {
	const name = "node pool delete"
	fs := c.flagSet(name, flagsClient)
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
	pool := fs.Arg(0)
	if _, err := client.NodePools().Delete(pool, c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error deleting node pool: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Successfully deleted node pool %q!", pool))
	return 0
}
