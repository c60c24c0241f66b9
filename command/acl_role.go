package command

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

// formatACLRole renders a role.
func formatACLRole(r *api.ACLRole) string {
	return formatKV([]string{
		"ID|" + r.ID,
		"Name|" + r.Name,
		"Description|" + r.Description,
		"Policies|" + strings.Join(rolePolicyNames(r.Policies), ","),
		"Create Index|" + strconv.FormatUint(r.CreateIndex, 10),
		"Modify Index|" + strconv.FormatUint(r.ModifyIndex, 10),
	})
}

// formatACLRoleList renders role stubs: `ID|Name|Description|Policies`.
func formatACLRoleList(roles []*api.ACLRoleListStub) string {
	rows := []string{"ID|Name|Description|Policies"}
	for _, r := range roles {
		rows = append(rows, r.ID+"|"+r.Name+"|"+r.Description+"|"+strings.Join(rolePolicyNames(r.Policies), ","))
	}
	return formatList(rows)
}

func rolePolicyNames(links []*api.ACLRolePolicyLink) []string {
	out := make([]string, 0, len(links))
	for _, l := range links {
		out = append(out, l.Name)
	}
	return out
}

func rolePolicyLinks(names []string) []*api.ACLRolePolicyLink {
	out := make([]*api.ACLRolePolicyLink, 0, len(names))
	for _, n := range names {
		out = append(out, &api.ACLRolePolicyLink{Name: n})
	}
	return out
}

// roleFlags are the flags that describe a role, shared by create and
// update.
type roleFlags struct {
	name, description string
	policies          stringSlice
	asJSON            bool
}

func (f *roleFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "name", "", "")
	fs.StringVar(&f.description, "description", "", "")
	fs.Var(&f.policies, "policy", "")
	fs.BoolVar(&f.asJSON, "json", false, "")
}

const roleFlagsUsage = `
  -name <name>
    The role's name.

  -description <text>
    A description of the role.

  -policy <name>
    A policy of the role; repeatable, at least one.

  -json
    Output the role in its JSON format.`

// ACLRoleCreateCommand creates a role.
type ACLRoleCreateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLRoleCreateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl role create [options]

  Create an ACL role. Needs a management token.

` + generalOptionsUsage() + `

Create Options:
` + roleFlagsUsage + `
`)
}

// Synopsis implements cli.Command.
func (c *ACLRoleCreateCommand) Synopsis() string { return "Create an ACL role" }

// Run implements cli.Command.
func (c *ACLRoleCreateCommand) Run(args []string) int {
	const name = "acl role create"
	var f roleFlags
	fs := c.flagSet(name, flagsClient)
	f.register(fs)
	if !c.parseArgs(fs, args) {
		return 1
	}
	if f.name == "" {
		return c.usageError(name, "ACL role name must be specified using the -name flag")
	}
	if len(f.policies) == 0 {
		return c.usageError(name, "At least one policy name must be specified using the -policy flag")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	role, _, err := client.ACLRoles().Create(&api.ACLRole{Name: f.name, Description: f.description,
		Policies: rolePolicyLinks(f.policies)}, c.write())
	return showResult(&c.Meta, role, err, "creating ACL role", f.asJSON, formatACLRole)
}

// ACLRoleUpdateCommand updates a role.
type ACLRoleUpdateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLRoleUpdateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl role update [options] <role id>

  Update an ACL role: what a flag names replaces the role's value; any
  -policy replaces the role's policies. Needs a management token.

` + generalOptionsUsage() + `

Update Options:
` + roleFlagsUsage + `
`)
}

// Synopsis implements cli.Command.
func (c *ACLRoleUpdateCommand) Synopsis() string { return "Update an ACL role" }

// Run implements cli.Command.
func (c *ACLRoleUpdateCommand) Run(args []string) int {
	var f roleFlags
	fs := c.flagSet("acl role update", flagsClient)
	f.register(fs)
	client, ok := c.clientForArgs(fs, args, "<role id>")
	if !ok {
		return 1
	}
	role, _, err := client.ACLRoles().Get(fs.Arg(0), c.query())
	if c.callFailed(err, "reading ACL role") {
		return 1
	}
	if f.name != "" {
		role.Name = f.name
	}
	if f.description != "" {
		role.Description = f.description
	}
	if len(f.policies) > 0 {
		role.Policies = rolePolicyLinks(f.policies)
	}
	updated, _, err := client.ACLRoles().Update(role, c.write())
	return showResult(&c.Meta, updated, err, "updating ACL role", f.asJSON, formatACLRole)
}

// ACLRoleInfoCommand shows a role.
type ACLRoleInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLRoleInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl role info [options] <role id>

  Show an ACL role.

` + generalOptionsUsage() + `

Info Options:

  -by-name
    The argument is the role's name, not its ID.

  -json
    Output the role in its JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLRoleInfoCommand) Synopsis() string { return "Show an ACL role" }

// Run implements cli.Command.
func (c *ACLRoleInfoCommand) Run(args []string) int {
	var byName, asJSON bool
	fs := c.flagSet("acl role info", flagsClient)
	fs.BoolVar(&byName, "by-name", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args, "<role id>")
	if !ok {
		return 1
	}
	get := client.ACLRoles().Get
	if byName {
		get = client.ACLRoles().GetByName
	}
	role, _, err := get(fs.Arg(0), c.query())
	return showResult(&c.Meta, role, err, "reading ACL role", asJSON, formatACLRole)
}

// ACLRoleListCommand lists roles.
type ACLRoleListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLRoleListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl role list [options]

  List the ACL roles the token may see: every role for a management
  token, those the token links to otherwise.

` + generalOptionsUsage() + `

List Options:

  -json
    Output the roles in their JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLRoleListCommand) Synopsis() string { return "List ACL roles" }

// Run implements cli.Command.
func (c *ACLRoleListCommand) Run(args []string) int {
	var asJSON bool
	fs := c.flagSet("acl role list", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	roles, _, err := client.ACLRoles().List(c.query())
	return showList(&c.Meta, roles, err, "listing ACL roles", asJSON, "No ACL roles found", formatACLRoleList)
}

// ACLRoleDeleteCommand deletes a role.
type ACLRoleDeleteCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLRoleDeleteCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl role delete [options] <role id>

  Delete an ACL role. Tokens linked to it lose what it granted. Needs a
  management token.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *ACLRoleDeleteCommand) Synopsis() string { return "Delete an ACL role" }

// Run implements cli.Command.
func (c *ACLRoleDeleteCommand) Run(args []string) int {
	fs := c.flagSet("acl role delete", flagsClient)
	client, ok := c.clientForArgs(fs, args, "<role id>")
	if !ok {
		return 1
	}
	_, err := client.ACLRoles().Delete(fs.Arg(0), c.write())
	return c.reportChange(err, "deleting ACL role", fmt.Sprintf("ACL role %s successfully deleted", fs.Arg(0)))
}
