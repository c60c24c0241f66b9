package command

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/opennomad/nomad/api"
)

// VarPutCommand writes a variable.
type VarPutCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *VarPutCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad var put [options] <path> [<spec file>] [<key>=<value>]...
       nomad var put [options] <spec file> [<key>=<value>]...

  Create or update the variable at the path. Its items come from a
  specification (a file as @<file>, or "-" for standard input, which
  needs -in) and from <key>=<value> arguments, which win over the
  specification's. A value may be @<file> to read it from a file, or "-"
  to read it from standard input. Needs variables write on the path.

  A specification that carries a modify index (as var get prints it) is
  written only if the variable still has that index, unless -force.

` + generalOptionsUsage() + `

Put Options:

  -check-index <index>
    Write only if the variable's modify index is this one (0: only if it
    does not exist yet).

  -force
    Write whatever the variable's modify index is.

  -in (hcl|json)
    The format of a specification read from standard input; hcl by
    default.

  -out (none|table|json|hcl)
    Print the variable written in this format; none by default.
`)
}

// Synopsis implements cli.Command.
func (c *VarPutCommand) Synopsis() string { return "Create or update a variable" }

// Run implements cli.Command.
func (c *VarPutCommand) Run(args []string) int {
	const name = "var put"
	var checkIndex optionalUint
	var force bool
	var in, out string
	fs := c.flagSet(name, flagsClient)
	fs.Var(&checkIndex, "check-index", "")
	fs.BoolVar(&force, "force", false, "")
	fs.StringVar(&in, "in", varOutHCL, "")
	fs.StringVar(&out, "out", varOutNone, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if in != varOutHCL && in != varOutJSON {
		return c.usageError(name, fmt.Sprintf("-in %q is not hcl or json", in))
	}
	if force && checkIndex.set {
		return c.usageError(name, "-force and -check-index cannot be used together")
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return c.usageError(name, "This command takes at least one argument: <path> or a specification")
	}

	v := &api.Variable{}
	var path string
	if isVarSpecRef(rest[0]) {
		spec, err := readVarSpec(c.stdin(), rest[0], in)
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error parsing variable specification: %s", err))
			return 1
		}
		v, rest = spec, rest[1:]
	} else {
		path, rest = rest[0], rest[1:]
		if len(rest) > 0 && isVarSpecRef(rest[0]) {
			spec, err := readVarSpec(c.stdin(), rest[0], in)
			if err != nil {
				c.Ui.Error(fmt.Sprintf("Error parsing variable specification: %s", err))
				return 1
			}
			v, rest = spec, rest[1:]
		}
	}
	if path != "" {
		v.Path = path
	}
	if v.Path == "" {
		return c.usageError(name, "A variable path is required, as an argument or in the specification")
	}
	for _, kv := range rest {
		k, val, found := strings.Cut(kv, "=")
		if !found || k == "" {
			return c.usageError(name, fmt.Sprintf("%q is not <key>=<value>", kv))
		}
		val, err := c.itemValue(val)
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error reading value of %q: %s", k, err))
			return 1
		}
		if v.Items == nil {
			v.Items = api.VariableItems{}
		}
		v.Items[k] = val
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	// The -namespace flag wins over the specification's namespace, which
	// the servers use over the request's.
	if ns := c.clientConfig().Namespace; ns != "" {
		v.Namespace = ns
	}

	// The index to check: the flag's, else the specification's.
	cas, check := checkIndex.value, checkIndex.set
	if !check && !force && v.ModifyIndex > 0 {
		cas, check = v.ModifyIndex, true
	}
	verb := "Updated"
	var written *api.Variable
	var err error
	if check {
		v.ModifyIndex = cas
		written, _, err = client.Variables().CheckedUpdate(v, c.write())
		if cas == 0 {
			verb = "Created"
		}
	} else {
		if existing, _, perr := client.Variables().Peek(v.Path, c.query()); perr == nil && existing == nil {
			verb = "Created"
		}
		written, _, err = client.Variables().Update(v, c.write())
	}
	if err != nil {
		var conflict api.ErrCASConflict
		if errors.As(err, &conflict) {
			c.Ui.Error(fmt.Sprintf("Error writing variable: %s", err))
			return 1
		}
		c.Ui.Error(fmt.Sprintf("Error creating variable: %s", c.describe(err)))
		return 1
	}
	switch out {
	case varOutNone:
		c.Ui.Output(fmt.Sprintf("%s variable %q with modify index %d", verb, written.Path, written.ModifyIndex))
	case varOutTable:
		text, _ := formatVariable(written, out)
		c.Ui.Output(fmt.Sprintf("Successfully %s variable %q!\n\n%s", strings.ToLower(verb), written.Path, text))
	default:
		text, err := formatVariable(written, out)
		if err != nil {
			c.Ui.Error(err.Error())
			return 1
		}
		c.Ui.Output(text)
	}
	return 0
}

// isVarSpecRef reports whether an argument names a specification: "-"
// (standard input) or "@<file>".
func isVarSpecRef(arg string) bool { return arg == "-" || strings.HasPrefix(arg, "@") }

// readVarSpec reads the specification ref names; a file's format is its
// extension's (JSON for .json), standard input's is in.
func readVarSpec(stdin io.Reader, ref, in string) (*api.Variable, error) {
	if ref == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, err
		}
		return parseVariableSpec("<stdin>", data, in)
	}
	file := strings.TrimPrefix(ref, "@")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	format := varOutHCL
	if strings.HasSuffix(file, ".json") {
		format = varOutJSON
	}
	return parseVariableSpec(file, data, format)
}

// itemValue reads an item's value: as given, from a file (@<file>), or
// from standard input ("-"), unchanged.
func (c *VarPutCommand) itemValue(val string) (string, error) {
	switch {
	case val == "-":
		b, err := io.ReadAll(c.stdin())
		return string(b), err
	case strings.HasPrefix(val, "@"):
		b, err := os.ReadFile(strings.TrimPrefix(val, "@"))
		return string(b), err
	}
	return val, nil
}
