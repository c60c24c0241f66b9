package command

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

// formatACLBindingRule renders a binding rule.
func formatACLBindingRule(r *api.ACLBindingRule) string {
	return formatKV([]string{
		"ID|" + r.ID,
		"Description|" + r.Description,
		"Auth Method|" + r.AuthMethod,
		"Selector|" + strconv.Quote(r.Selector),
		"Bind Type|" + r.BindType,
		"Bind Name|" + r.BindName,
		"Create Index|" + strconv.FormatUint(r.CreateIndex, 10),
		"Modify Index|" + strconv.FormatUint(r.ModifyIndex, 10),
	})
}

// formatACLBindingRuleList renders binding rule stubs:
// `ID|Description|Auth Method`.
func formatACLBindingRuleList(rules []*api.ACLBindingRuleListStub) string {
	rows := []string{"ID|Description|Auth Method"}
	for _, r := range rules {
		rows = append(rows, r.ID+"|"+r.Description+"|"+r.AuthMethod)
	}
	return formatList(rows)
}

// bindingRuleFlags describe a binding rule, shared by create and update;
// update changes only the flags given.
type bindingRuleFlags struct {
	description, authMethod, selector, bindType, bindName string
	asJSON                                                bool
}

func (f *bindingRuleFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.description, "description", "", "")
	fs.StringVar(&f.authMethod, "auth-method", "", "")
	fs.StringVar(&f.selector, "selector", "", "")
	fs.StringVar(&f.bindType, "bind-type", "", "")
	fs.StringVar(&f.bindName, "bind-name", "", "")
	fs.BoolVar(&f.asJSON, "json", false, "")
}

// apply writes the given flags into r.
func (f *bindingRuleFlags) apply(fs *flag.FlagSet, r *api.ACLBindingRule) {
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "description":
			r.Description = f.description
		case "auth-method":
			r.AuthMethod = f.authMethod
		case "selector":
			r.Selector = f.selector
		case "bind-type":
			r.BindType = f.bindType
		case "bind-name":
			r.BindName = f.bindName
		}
	})
}

const bindingRuleFlagsUsage = `
  -description <text>
    A description of the binding rule.

  -auth-method <name>
    The auth method the rule applies to; it must exist.

  -selector <expression>
    Which logins the rule applies to, over their claims; empty matches
    every login.

  -bind-type <role|policy|management>
    What the rule grants.

  -bind-name <name>
    The role or policy granted; empty for management.

  -json
    Output the binding rule in its JSON format.`

// ACLBindingRuleCreateCommand creates a binding rule.
type ACLBindingRuleCreateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLBindingRuleCreateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl binding-rule create [options]

  Create an ACL binding rule. Needs a management token.

` + generalOptionsUsage() + `

Create Options:
` + bindingRuleFlagsUsage + `
`)
}

// Synopsis implements cli.Command.
func (c *ACLBindingRuleCreateCommand) Synopsis() string { return "Create an ACL binding rule" }

// Run implements cli.Command.
func (c *ACLBindingRuleCreateCommand) Run(args []string) int {
	const name = "acl binding-rule create"
	var f bindingRuleFlags
	fs := c.flagSet(name, flagsClient)
	f.register(fs)
	if !c.parseArgs(fs, args) {
		return 1
	}
	if f.authMethod == "" {
		return c.usageError(name, "ACL binding rule auth method must be specified using the -auth-method flag")
	}
	if f.bindType == "" {
		return c.usageError(name, "ACL binding rule bind type must be specified using the -bind-type flag")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	r := &api.ACLBindingRule{}
	f.apply(fs, r)
	created, _, err := client.ACLBindingRules().Create(r, c.write())
	return showResult(&c.Meta, created, err, "creating ACL binding rule", f.asJSON, formatACLBindingRule)
}

// ACLBindingRuleUpdateCommand updates a binding rule.
type ACLBindingRuleUpdateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLBindingRuleUpdateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl binding-rule update [options] <binding rule id>

  Update an ACL binding rule: what a flag names replaces the rule's
  value. Needs a management token.

` + generalOptionsUsage() + `

Update Options:
` + bindingRuleFlagsUsage + `
`)
}

// Synopsis implements cli.Command.
func (c *ACLBindingRuleUpdateCommand) Synopsis() string { return "Update an ACL binding rule" }

// Run implements cli.Command.
func (c *ACLBindingRuleUpdateCommand) Run(args []string) int {
	var f bindingRuleFlags
	fs := c.flagSet("acl binding-rule update", flagsClient)
	f.register(fs)
	client, ok := c.clientForArgs(fs, args, "<binding rule id>")
	if !ok {
		return 1
	}
	r, _, err := client.ACLBindingRules().Get(fs.Arg(0), c.query())
	if c.callFailed(err, "reading ACL binding rule") {
		return 1
	}
	f.apply(fs, r)
	updated, _, err := client.ACLBindingRules().Update(r, c.write())
	return showResult(&c.Meta, updated, err, "updating ACL binding rule", f.asJSON, formatACLBindingRule)
}

// ACLBindingRuleInfoCommand shows a binding rule.
type ACLBindingRuleInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLBindingRuleInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl binding-rule info [options] <binding rule id>

  Show an ACL binding rule. Needs a management token.

` + generalOptionsUsage() + `

Info Options:

  -json
    Output the binding rule in its JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLBindingRuleInfoCommand) Synopsis() string { return "Show an ACL binding rule" }

// Run implements cli.Command.
func (c *ACLBindingRuleInfoCommand) Run(args []string) int {
	var asJSON bool
	fs := c.flagSet("acl binding-rule info", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args, "<binding rule id>")
	if !ok {
		return 1
	}
	r, _, err := client.ACLBindingRules().Get(fs.Arg(0), c.query())
	return showResult(&c.Meta, r, err, "reading ACL binding rule", asJSON, formatACLBindingRule)
}

// ACLBindingRuleListCommand lists binding rules.
type ACLBindingRuleListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLBindingRuleListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl binding-rule list [options]

  List the ACL binding rules. Needs a management token.

` + generalOptionsUsage() + `

List Options:

  -json
    Output the binding rules in their JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLBindingRuleListCommand) Synopsis() string { return "List ACL binding rules" }

// Run implements cli.Command.
func (c *ACLBindingRuleListCommand) Run(args []string) int {
	var asJSON bool
	fs := c.flagSet("acl binding-rule list", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	rules, _, err := client.ACLBindingRules().List(c.query())
	return showList(&c.Meta, rules, err, "listing ACL binding rules", asJSON, "No ACL binding rules found",
		formatACLBindingRuleList)
}

// ACLBindingRuleDeleteCommand deletes a binding rule.
type ACLBindingRuleDeleteCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLBindingRuleDeleteCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl binding-rule delete [options] <binding rule id>

  Delete an ACL binding rule. Needs a management token.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *ACLBindingRuleDeleteCommand) Synopsis() string { return "Delete an ACL binding rule" }

// Run implements cli.Command.
func (c *ACLBindingRuleDeleteCommand) Run(args []string) int {
	fs := c.flagSet("acl binding-rule delete", flagsClient)
	client, ok := c.clientForArgs(fs, args, "<binding rule id>")
	if !ok {
		return 1
	}
	_, err := client.ACLBindingRules().Delete(fs.Arg(0), c.write())
	return c.reportChange(err, "deleting ACL binding rule",
		fmt.Sprintf("ACL binding rule %s successfully deleted", fs.Arg(0)))
}
