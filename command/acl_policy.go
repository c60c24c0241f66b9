package command

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

// ACLPolicyApplyCommand writes a policy.
type ACLPolicyApplyCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLPolicyApplyCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl policy apply [options] <name> <path>

  Create or replace the ACL policy <name> with the rules in the file at
  <path> ("-" for standard input). Needs a management token.

` + generalOptionsUsage() + `

Apply Options:

  -description <text>
    A description of the policy.

  -namespace, -job, -group, -task
    Attach the policy to the workloads of a job, one of its groups or one
    of their tasks; each needs the ones before it.
`)
}

// Synopsis implements cli.Command.
func (c *ACLPolicyApplyCommand) Synopsis() string { return "Create or update an ACL policy" }

// Run implements cli.Command.
func (c *ACLPolicyApplyCommand) Run(args []string) int {
	const name = "acl policy apply"
	var description, jobID, group, task string
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&description, "description", "", "")
	fs.StringVar(&jobID, "job", "", "")
	fs.StringVar(&group, "group", "", "")
	fs.StringVar(&task, "task", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 2 {
		return c.usageError(name, "This command takes two arguments: <name> and <path>")
	}
	rules, err := c.readFileOrStdin(fs.Arg(1))
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading the policy rules: %s", err))
		return 1
	}
	policy := &api.ACLPolicy{Name: fs.Arg(0), Description: description, Rules: string(rules)}
	if jobID != "" {
		policy.JobACL = &api.JobACL{Namespace: c.namespaceOrDefault(), JobID: jobID, Group: group, Task: task}
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	if _, err := client.ACLPolicies().Upsert(policy, c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error writing ACL policy: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Successfully wrote %q ACL policy!", policy.Name))
	return 0
}

// ACLPolicyListCommand lists policies.
type ACLPolicyListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLPolicyListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl policy list [options]

  List the ACL policies the token may see: every policy for a management
  token, the token's own otherwise.

` + generalOptionsUsage() + `

List Options:

  -json
    Output the policies in their JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLPolicyListCommand) Synopsis() string { return "List ACL policies" }

// Run implements cli.Command.
func (c *ACLPolicyListCommand) Run(args []string) int {
	const name = "acl policy list"
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
	policies, _, err := client.ACLPolicies().List(c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error listing ACL policies: %s", c.describe(err)))
		return 1
	}
	if asJSON {
		if policies == nil {
			policies = []*api.ACLPolicyListStub{}
		}
		return printData(&c.Meta, policies, true, "")
	}
	if len(policies) == 0 {
		c.Ui.Output("No policies found")
		return 0
	}
	rows := []string{"Name|Description"}
	for _, p := range policies {
		rows = append(rows, p.Name+"|"+p.Description)
	}
	c.Ui.Output(formatList(rows))
	return 0
}

// ACLPolicyInfoCommand shows a policy.
type ACLPolicyInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLPolicyInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl policy info [options] <name>

  Show an ACL policy and its rules.

` + generalOptionsUsage() + `

Info Options:

  -json
    Output the policy in its JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLPolicyInfoCommand) Synopsis() string { return "Show an ACL policy" }

// Run implements cli.Command.
func (c *ACLPolicyInfoCommand) Run(args []string) int {
	const name = "acl policy info"
	var asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <name>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	policy, _, err := client.ACLPolicies().Info(fs.Arg(0), c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading ACL policy: %s", c.describe(err)))
		return 1
	}
	if asJSON {
		return printData(&c.Meta, policy, true, "")
	}
	rows := []string{
		"Name|" + policy.Name,
		"Description|" + policy.Description,
		"CreateIndex|" + strconv.FormatUint(policy.CreateIndex, 10),
		"ModifyIndex|" + strconv.FormatUint(policy.ModifyIndex, 10),
	}
	if j := policy.JobACL; j != nil {
		rows = append(rows, "Namespace|"+j.Namespace, "JobID|"+j.JobID, "Group|"+j.Group, "Task|"+j.Task)
	}
	c.Ui.Output(formatKV(rows) + "\n\nRules\n\n" + strings.TrimRight(policy.Rules, "\n"))
	return 0
}

// ACLPolicyDeleteCommand deletes a policy.
type ACLPolicyDeleteCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLPolicyDeleteCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl policy delete [options] <name>

  Delete an ACL policy. Needs a management token.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *ACLPolicyDeleteCommand) Synopsis() string { return "Delete an ACL policy" }

// Run implements cli.Command.
func (c *ACLPolicyDeleteCommand) Run(args []string) int {
	const name = "acl policy delete"
	fs := c.flagSet(name, flagsClient)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <name>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	if _, err := client.ACLPolicies().Delete(fs.Arg(0), c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error deleting ACL policy: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Successfully deleted %q ACL policy!", fs.Arg(0)))
	return 0
}
