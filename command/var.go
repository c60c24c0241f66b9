package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/opennomad/nomad/api"
)

const varGroupHelp = `
Usage: nomad var <subcommand> [options] [args]

  Write, read, list and purge variables: small maps of strings stored,
  encrypted, by the servers at a path in a namespace.

      $ nomad var init
      $ nomad var put secret/creds passcode=my-long-passcode
      $ nomad var get secret/creds
      $ nomad var get -item=passcode secret/creds
      $ nomad var list secret/
      $ nomad var purge secret/creds
`

// Output formats of the var commands.
const (
	varOutTable = "table"
	varOutJSON  = "json"
	varOutHCL   = "hcl"
	varOutNone  = "none"
)

// defaultVarOut is table for a person at a terminal and JSON for a
// program reading the output, as Nomad chooses.
func defaultVarOut() string {
	if fi, err := os.Stdout.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return varOutTable
	}
	return varOutJSON
}

// formatVariable renders v in the format out.
func formatVariable(v *api.Variable, out string) (string, error) {
	switch out {
	case varOutJSON:
		return v.AsPrettyJSON(), nil
	case varOutHCL:
		return variableHCL(v), nil
	case varOutTable:
		rows := []string{
			"Namespace|" + v.Namespace,
			"Path|" + v.Path,
			"Create Time|" + formatUnixNano(v.CreateTime),
			fmt.Sprintf("Check Index|%d", v.ModifyIndex),
		}
		if v.Lock != nil {
			rows = append(rows, "Lock ID|"+v.Lock.ID)
		}
		text := formatKV(rows)
		if len(v.Items) > 0 {
			items := make([]string, 0, len(v.Items))
			for _, k := range sortedKeys(v.Items) {
				items = append(items, k+"|"+v.Items[k])
			}
			text += "\n\nItems\n" + formatKV(items)
		}
		return text, nil
	case varOutNone:
		return "", nil
	}
	return "", fmt.Errorf("unknown output format %q (want table, json, hcl or none)", out)
}

// variableHCL renders a variable as the specification var put reads.
func variableHCL(v *api.Variable) string {
	var b strings.Builder
	fmt.Fprintf(&b, "namespace = %q\npath      = %q\n\nitems {\n", v.Namespace, v.Path)
	for _, k := range sortedKeys(v.Items) {
		fmt.Fprintf(&b, "  %s = %q\n", hclKey(k), v.Items[k])
	}
	b.WriteString("}\n")
	return b.String()
}

// hclKey quotes a key that is not a plain HCL identifier.
func hclKey(k string) string {
	if hclIdentifier(k) {
		return k
	}
	return fmt.Sprintf("%q", k)
}

func hclIdentifier(s string) bool {
	for i, r := range s {
		letter := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || !(r == '-' || (r >= '0' && r <= '9'))) {
			return false
		}
	}
	return s != ""
}

// parseVariableSpec reads a variable specification: the API's JSON, or
// HCL with path, namespace and an items block.
func parseVariableSpec(filename string, data []byte, format string) (*api.Variable, error) {
	if format == varOutJSON {
		var v api.Variable
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		return &v, nil
	}
	f, diags := hclparse.NewParser().ParseHCL(data, filename)
	if diags.HasErrors() {
		return nil, diags
	}
	content, diags := f.Body.Content(&hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "path"}, {Name: "namespace"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "items"}},
	})
	if diags.HasErrors() {
		return nil, diags
	}
	v := &api.Variable{}
	for name, into := range map[string]*string{"path": &v.Path, "namespace": &v.Namespace} {
		if attr, ok := content.Attributes[name]; ok {
			s, err := hclString(attr)
			if err != nil {
				return nil, err
			}
			*into = s
		}
	}
	for _, block := range content.Blocks {
		attrs, diags := block.Body.JustAttributes()
		if diags.HasErrors() {
			return nil, diags
		}
		if v.Items == nil {
			v.Items = api.VariableItems{}
		}
		for name, attr := range attrs {
			s, err := hclString(attr)
			if err != nil {
				return nil, err
			}
			v.Items[name] = s
		}
	}
	return v, nil
}

func hclString(attr *hcl.Attribute) (string, error) {
	val, diags := attr.Expr.Value(nil)
	if diags.HasErrors() {
		return "", diags
	}
	if !val.Type().IsPrimitiveType() || val.IsNull() {
		return "", fmt.Errorf("%s: %q must be a string", attr.NameRange, attr.Name)
	}
	// Numbers and booleans are kept as written.
	switch val.Type().FriendlyName() {
	case "string":
		return val.AsString(), nil
	case "number":
		return val.AsBigFloat().Text('f', -1), nil
	}
	if val.True() {
		return "true", nil
	}
	return "false", nil
}

// VarGetCommand prints a variable.
type VarGetCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *VarGetCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad var get [options] <path>

  Print the variable at the path. Needs variables read on the path.

` + generalOptionsUsage() + `

Get Options:

  -item <key>
    Print only the value of this item, with no newline after it.

  -out (table|json|hcl|none)
    The format to print the variable in; table at a terminal, json
    otherwise.
`)
}

// Synopsis implements cli.Command.
func (c *VarGetCommand) Synopsis() string { return "Read a variable" }

// Run implements cli.Command.
func (c *VarGetCommand) Run(args []string) int {
	const name = "var get"
	var item, out string
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&item, "item", "", "")
	fs.StringVar(&out, "out", defaultVarOut(), "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <path>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	v, _, err := client.Variables().Read(fs.Arg(0), c.query())
	if err != nil {
		if errors.Is(err, api.ErrVariablePathNotFound) {
			c.Ui.Error("Variable not found")
			return 1
		}
		c.Ui.Error(fmt.Sprintf("Error retrieving variable: %s", c.describe(err)))
		return 1
	}
	if item != "" {
		val, found := v.Items[item]
		if !found {
			c.Ui.Error(fmt.Sprintf("Variable does not contain %q item", item))
			return 1
		}
		c.Ui.Output(val)
		return 0
	}
	text, err := formatVariable(v, out)
	if err != nil {
		return c.usageError(name, err.Error())
	}
	if text != "" {
		c.Ui.Output(text)
	}
	return 0
}

// VarListCommand lists variables.
type VarListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *VarListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad var list [options] [<prefix>]

  List the variables whose paths start with the prefix that the token may
  list; "-namespace=*" lists every namespace's.

` + generalOptionsUsage() + `

List Options:

  -json
    Print the list as JSON.

  -q
    Print only the paths.
`)
}

// Synopsis implements cli.Command.
func (c *VarListCommand) Synopsis() string { return "List variables" }

// Run implements cli.Command.
func (c *VarListCommand) Run(args []string) int {
	const name = "var list"
	var asJSON, quiet bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	fs.BoolVar(&quiet, "q", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() > 1 {
		return c.usageError(name, "This command takes at most one argument: <prefix>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	list, _, err := client.Variables().PrefixList(fs.Arg(0), c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error retrieving vars: %s", c.describe(err)))
		return 1
	}
	switch {
	case asJSON:
		b, err := json.MarshalIndent(list, "", "    ")
		if err != nil {
			c.Ui.Error(err.Error())
			return 1
		}
		c.Ui.Output(string(b))
	case quiet:
		for _, m := range list {
			c.Ui.Output(m.Path)
		}
	case len(list) == 0:
		c.Ui.Output("No matching variables found")
	default:
		rows := []string{"Namespace|Path|Last Updated"}
		for _, m := range list {
			rows = append(rows, fmt.Sprintf("%s|%s|%s", m.Namespace, m.Path, formatUnixNano(m.ModifyTime)))
		}
		c.Ui.Output(formatList(rows))
	}
	return 0
}

// VarPurgeCommand deletes a variable.
type VarPurgeCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *VarPurgeCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad var purge [options] <path>

  Permanently delete the variable at the path. Needs variables destroy on
  the path.

` + generalOptionsUsage() + `

Purge Options:

  -check-index <index>
    Delete only if the variable's modify index is this one (0: only if
    it does not exist).
`)
}

// Synopsis implements cli.Command.
func (c *VarPurgeCommand) Synopsis() string { return "Purge a variable" }

// Run implements cli.Command.
func (c *VarPurgeCommand) Run(args []string) int {
	const name = "var purge"
	var checkIndex optionalUint
	fs := c.flagSet(name, flagsClient)
	fs.Var(&checkIndex, "check-index", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <path>")
	}
	path := fs.Arg(0)
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	var err error
	if checkIndex.set {
		_, err = client.Variables().CheckedDelete(path, checkIndex.value, c.write())
	} else {
		_, err = client.Variables().Delete(path, c.write())
	}
	if err != nil {
		var conflict api.ErrCASConflict
		if errors.As(err, &conflict) {
			c.Ui.Error(fmt.Sprintf("Error purging variable: %s", err))
			return 1
		}
		c.Ui.Error(fmt.Sprintf("Error purging variable: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Successfully purged variable %q!", path))
	return 0
}

// VarInitCommand writes an example variable specification.
type VarInitCommand struct {
	Meta
}

const exampleVarHCL = `# A variable's path; the command line may give it instead.
path = "path/to/variable"

# The namespace to write it in; the -namespace flag overrides it.
namespace = "default"

# The items are what the servers encrypt and keep: string keys and values.
items {
  key1 = "value 1"
  key2 = "value 2"
}
`

const exampleVarJSON = `{
  "Path": "path/to/variable",
  "Namespace": "default",
  "Items": {
    "key1": "value 1",
    "key2": "value 2"
  }
}
`

// Help implements cli.Command.
func (c *VarInitCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad var init [options] [<filename>]

  Write an example variable specification, to edit and give to var put.
  The file is spec.nv.hcl (spec.nv.json with -out=json) unless named.

Init Options:

  -out (hcl|json)
    The format of the specification; hcl by default.

  -quiet
    Do not print the success message.
`)
}

// Synopsis implements cli.Command.
func (c *VarInitCommand) Synopsis() string { return "Create an example variable specification file" }

// Run implements cli.Command.
func (c *VarInitCommand) Run(args []string) int {
	const name = "var init"
	var out string
	var quiet bool
	fs := c.flagSet(name, flagsNone)
	fs.StringVar(&out, "out", varOutHCL, "")
	fs.BoolVar(&quiet, "quiet", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() > 1 {
		return c.usageError(name, "This command takes at most one argument: <filename>")
	}
	file, content := "spec.nv.hcl", exampleVarHCL
	switch out {
	case varOutHCL:
	case varOutJSON:
		file, content = "spec.nv.json", exampleVarJSON
	default:
		return c.usageError(name, fmt.Sprintf("unknown format %q (want hcl or json)", out))
	}
	if fs.NArg() == 1 {
		file = fs.Arg(0)
	}
	if _, err := os.Stat(file); err == nil {
		c.Ui.Error(fmt.Sprintf("Variable specification %q already exists", file))
		return 1
	}
	if err := os.WriteFile(file, []byte(content), 0o660); err != nil {
		c.Ui.Error(fmt.Sprintf("Failed to write %q: %v", file, err))
		return 1
	}
	if !quiet {
		c.Ui.Output(fmt.Sprintf("Example variable specification written to %s", file))
	}
	return 0
}
