package command

import (
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
	var roleName, description string
	var policies stringSlice
	var asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&roleName, "name", "", "")
	fs.StringVar(&description, "description", "", "")
	fs.Var(&policies, "policy", "")
	fs.BoolVar(&asJSON, "json", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	if roleName == "" {
		return c.usageError(name, "ACL role name must be specified using the -name flag")
	}
	if len(policies) == 0 {
		return c.usageError(name, "At least one policy name must be specified using the -policy flag")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	role, _, err := client.ACLRoles().Create(&api.ACLRole{Name: roleName, Description: description,
		Policies: rolePolicyLinks(policies)}, c.write())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error creating ACL role: %s", c.describe(err)))
		return 1
	}
	if asJSON {
		return printData(&c.Meta, role, true, "")
	}
	c.Ui.Output(formatACLRole(role))
	return 0
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
	const name = "acl role update"
	var roleName, description string
	var policies stringSlice
	var asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&roleName, "name", "", "")
	fs.StringVar(&description, "description", "", "")
	fs.Var(&policies, "policy", "")
	fs.BoolVar(&asJSON, "json", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <role id>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	role, _, err := client.ACLRoles().Get(fs.Arg(0), c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading ACL role: %s", c.describe(err)))
		return 1
	}
	if roleName != "" {
		role.Name = roleName
	}
	if description != "" {
		role.Description = description
	}
	if len(policies) > 0 {
		role.Policies = rolePolicyLinks(policies)
	}
	updated, _, err := client.ACLRoles().Update(role, c.write())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error updating ACL role: %s", c.describe(err)))
		return 1
	}
	if asJSON {
		return printData(&c.Meta, updated, true, "")
	}
	c.Ui.Output(formatACLRole(updated))
	return 0
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
	const name = "acl role info"
	var byName, asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&byName, "by-name", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <role id>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	var role *api.ACLRole
	var err error
	if byName {
		role, _, err = client.ACLRoles().GetByName(fs.Arg(0), c.query())
	} else {
		role, _, err = client.ACLRoles().Get(fs.Arg(0), c.query())
	}
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading ACL role: %s", c.describe(err)))
		return 1
	}
	if asJSON {
		return printData(&c.Meta, role, true, "")
	}
	c.Ui.Output(formatACLRole(role))
	return 0
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
	const name = "acl role list"
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
	roles, _, err := client.ACLRoles().List(c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error listing ACL roles: %s", c.describe(err)))
		return 1
	}
	if asJSON {
		if roles == nil {
			roles = []*api.ACLRoleListStub{}
		}
		return printData(&c.Meta, roles, true, "")
	}
	if len(roles) == 0 {
		c.Ui.Output("No ACL roles found")
		return 0
	}
	rows := []string{"ID|Name|Description|Policies"}
	for _, r := range roles {
		rows = append(rows, r.ID+"|"+r.Name+"|"+r.Description+"|"+strings.Join(rolePolicyNames(r.Policies), ","))
	}
	c.Ui.Output(formatList(rows))
	return 0
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
	const name = "acl role delete"
	fs := c.flagSet(name, flagsClient)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <role id>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	if _, err := client.ACLRoles().Delete(fs.Arg(0), c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error deleting ACL role: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("ACL role %s successfully deleted", fs.Arg(0)))
	return 0
}
