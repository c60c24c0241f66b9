package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// formatACLAuthMethod renders an auth method; its config as indented
// JSON, as it has many optional fields.
func formatACLAuthMethod(m *api.ACLAuthMethod) string {
	out := formatKV([]string{
		"Name|" + m.Name,
		"Type|" + m.Type,
		"Locality|" + m.TokenLocality,
		"Token Name Format|" + m.TokenNameFormat,
		"Max Token TTL|" + m.MaxTokenTTL.String(),
		"Default|" + strconv.FormatBool(m.Default),
		"Create Index|" + strconv.FormatUint(m.CreateIndex, 10),
		"Modify Index|" + strconv.FormatUint(m.ModifyIndex, 10),
	})
	if m.Config != nil {
		if raw, err := json.MarshalIndent(m.Config, "", "  "); err == nil {
			out += "\n\nAuth Method Config\n" + string(raw)
		}
	}
	return out
}

// formatACLAuthMethodList renders auth method stubs: `Name|Type|Default`.
func formatACLAuthMethodList(methods []*api.ACLAuthMethodListStub) string {
	rows := []string{"Name|Type|Default"}
	for _, m := range methods {
		rows = append(rows, m.Name+"|"+m.Type+"|"+strconv.FormatBool(m.Default))
	}
	return formatList(rows)
}

// authMethodFlags describe an auth method, shared by create and update.
// set records which flags were given, as update changes only those.
type authMethodFlags struct {
	name, typ, locality, nameFormat, maxTTL, config string
	isDefault, asJSON                               bool
	set                                             map[string]bool
}

func (f *authMethodFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "name", "", "")
	fs.StringVar(&f.typ, "type", "", "")
	fs.StringVar(&f.locality, "token-locality", "", "")
	fs.StringVar(&f.nameFormat, "token-name-format", "", "")
	fs.StringVar(&f.maxTTL, "max-token-ttl", "", "")
	fs.BoolVar(&f.isDefault, "default", false, "")
	fs.StringVar(&f.config, "config", "", "")
	fs.BoolVar(&f.asJSON, "json", false, "")
}

// apply writes the given flags into m.
func (f *authMethodFlags) apply(fs *flag.FlagSet, m *api.ACLAuthMethod) error {
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if f.set["type"] {
		m.Type = strings.ToUpper(f.typ)
	}
	if f.set["token-locality"] {
		m.TokenLocality = f.locality
	}
	if f.set["token-name-format"] {
		m.TokenNameFormat = f.nameFormat
	}
	if f.set["default"] {
		m.Default = f.isDefault
	}
	if f.set["max-token-ttl"] {
		d, err := time.ParseDuration(f.maxTTL)
		if err != nil {
			return fmt.Errorf("Unable to parse max token TTL: %v", err)
		}
		m.MaxTokenTTL = d
	}
	if f.set["config"] {
		raw := []byte(f.config)
		if path, ok := strings.CutPrefix(f.config, "@"); ok {
			var err error
			if raw, err = os.ReadFile(path); err != nil {
				return fmt.Errorf("Error reading config file %q: %v", path, err)
			}
		}
		var cfg api.ACLAuthMethodConfig
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return fmt.Errorf("Unable to parse config: %v", err)
		}
		m.Config = &cfg
	}
	return nil
}

const authMethodFlagsUsage = `
  -type <OIDC|JWT>
    The auth method's type.

  -token-locality <local|global>
    Whether tokens made through the method are local or global.

  -token-name-format <template>
    The name of tokens made through the method; defaults to
    "${auth_method_type}-${auth_method_name}".

  -max-token-ttl <duration>
    The longest life of a token made through the method.

  -default
    Make this the default auth method (there is at most one).

  -config <json | @file>
    The provider's configuration as JSON, or @ and a file holding it.

  -json
    Output the auth method in its JSON format.`

// ACLAuthMethodCreateCommand creates an auth method.
type ACLAuthMethodCreateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLAuthMethodCreateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl auth-method create [options]

  Create an ACL auth method. Needs a management token.

` + generalOptionsUsage() + `

Create Options:

  -name <name>
    The auth method's name.
` + authMethodFlagsUsage + `
`)
}

// Synopsis implements cli.Command.
func (c *ACLAuthMethodCreateCommand) Synopsis() string { return "Create an ACL auth method" }

// Run implements cli.Command.
func (c *ACLAuthMethodCreateCommand) Run(args []string) int {
	const name = "acl auth-method create"
	var f authMethodFlags
	fs := c.flagSet(name, flagsClient)
	f.register(fs)
	if !c.parseArgs(fs, args) {
		return 1
	}
	if f.name == "" {
		return c.usageError(name, "ACL auth-method name must be specified using the -name flag")
	}
	m := &api.ACLAuthMethod{Name: f.name}
	if err := f.apply(fs, m); err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	created, _, err := client.ACLAuthMethods().Create(m, c.write())
	return showResult(&c.Meta, created, err, "creating ACL auth method", f.asJSON, formatACLAuthMethod)
}

// ACLAuthMethodUpdateCommand updates an auth method.
type ACLAuthMethodUpdateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLAuthMethodUpdateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl auth-method update [options] <auth method name>

  Update an ACL auth method: what a flag names replaces the method's
  value. Needs a management token.

` + generalOptionsUsage() + `

Update Options:
` + authMethodFlagsUsage + `
`)
}

// Synopsis implements cli.Command.
func (c *ACLAuthMethodUpdateCommand) Synopsis() string { return "Update an ACL auth method" }

// Run implements cli.Command.
func (c *ACLAuthMethodUpdateCommand) Run(args []string) int {
	var f authMethodFlags
	fs := c.flagSet("acl auth-method update", flagsClient)
	f.register(fs)
	client, ok := c.clientForArgs(fs, args, "<auth method name>")
	if !ok {
		return 1
	}
	m, _, err := client.ACLAuthMethods().Get(fs.Arg(0), c.query())
	if c.callFailed(err, "reading ACL auth method") {
		return 1
	}
	if err := f.apply(fs, m); err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	updated, _, err := client.ACLAuthMethods().Update(m, c.write())
	return showResult(&c.Meta, updated, err, "updating ACL auth method", f.asJSON, formatACLAuthMethod)
}

// ACLAuthMethodInfoCommand shows an auth method.
type ACLAuthMethodInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLAuthMethodInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl auth-method info [options] <auth method name>

  Show an ACL auth method. Needs a management token.

` + generalOptionsUsage() + `

Info Options:

  -json
    Output the auth method in its JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLAuthMethodInfoCommand) Synopsis() string { return "Show an ACL auth method" }

// Run implements cli.Command.
func (c *ACLAuthMethodInfoCommand) Run(args []string) int {
	var asJSON bool
	fs := c.flagSet("acl auth-method info", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args, "<auth method name>")
	if !ok {
		return 1
	}
	m, _, err := client.ACLAuthMethods().Get(fs.Arg(0), c.query())
	return showResult(&c.Meta, m, err, "reading ACL auth method", asJSON, formatACLAuthMethod)
}

// ACLAuthMethodListCommand lists auth methods.
type ACLAuthMethodListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLAuthMethodListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl auth-method list [options]

  List the ACL auth methods. Any caller may list them.

` + generalOptionsUsage() + `

List Options:

  -json
    Output the auth methods in their JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLAuthMethodListCommand) Synopsis() string { return "List ACL auth methods" }

// Run implements cli.Command.
func (c *ACLAuthMethodListCommand) Run(args []string) int {
	var asJSON bool
	fs := c.flagSet("acl auth-method list", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	methods, _, err := client.ACLAuthMethods().List(c.query())
	return showList(&c.Meta, methods, err, "listing ACL auth methods", asJSON, "No ACL auth methods found",
		formatACLAuthMethodList)
}

// ACLAuthMethodDeleteCommand deletes an auth method.
type ACLAuthMethodDeleteCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLAuthMethodDeleteCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl auth-method delete [options] <auth method name>

  Delete an ACL auth method and its binding rules. Needs a management
  token.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *ACLAuthMethodDeleteCommand) Synopsis() string { return "Delete an ACL auth method" }

// Run implements cli.Command.
func (c *ACLAuthMethodDeleteCommand) Run(args []string) int {
	fs := c.flagSet("acl auth-method delete", flagsClient)
	client, ok := c.clientForArgs(fs, args, "<auth method name>")
	if !ok {
		return 1
	}
	_, err := client.ACLAuthMethods().Delete(fs.Arg(0), c.write())
	return c.reportChange(err, "deleting ACL auth method",
		fmt.Sprintf("ACL auth method %s successfully deleted", fs.Arg(0)))
}
