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
	var description, jobID, group, task string
	fs := c.flagSet("acl policy apply", flagsClient)
	fs.StringVar(&description, "description", "", "")
	fs.StringVar(&jobID, "job", "", "")
	fs.StringVar(&group, "group", "", "")
	fs.StringVar(&task, "task", "", "")
	if !c.parseArgs(fs, args, "<name>", "<path>") {
		return 1
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
	_, err = client.ACLPolicies().Upsert(policy, c.write())
	return c.reportChange(err, "writing ACL policy", fmt.Sprintf("Successfully wrote %q ACL policy!", policy.Name))
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
	var asJSON bool
	fs := c.flagSet("acl policy list", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	policies, _, err := client.ACLPolicies().List(c.query())
	return showList(&c.Meta, policies, err, "listing ACL policies", asJSON, "No policies found", formatACLPolicyList)
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
	var asJSON bool
	fs := c.flagSet("acl policy info", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args, "<name>")
	if !ok {
		return 1
	}
	policy, _, err := client.ACLPolicies().Info(fs.Arg(0), c.query())
	return showResult(&c.Meta, policy, err, "reading ACL policy", asJSON, formatACLPolicy)
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
	fs := c.flagSet("acl policy delete", flagsClient)
	client, ok := c.clientForArgs(fs, args, "<name>")
	if !ok {
		return 1
	}
	_, err := client.ACLPolicies().Delete(fs.Arg(0), c.write())
	return c.reportChange(err, "deleting ACL policy", fmt.Sprintf("Successfully deleted %q ACL policy!", fs.Arg(0)))
}

// formatACLPolicyList renders policy stubs: `Name|Description`.
func formatACLPolicyList(policies []*api.ACLPolicyListStub) string {
	rows := []string{"Name|Description"}
	for _, p := range policies {
		rows = append(rows, p.Name+"|"+p.Description)
	}
	return formatList(rows)
}

// formatACLPolicy renders a policy, its workload attachment if any, then
// its rules.
func formatACLPolicy(policy *api.ACLPolicy) string {
	rows := []string{
		"Name|" + policy.Name,
		"Description|" + policy.Description,
		"CreateIndex|" + strconv.FormatUint(policy.CreateIndex, 10),
		"ModifyIndex|" + strconv.FormatUint(policy.ModifyIndex, 10),
	}
	if j := policy.JobACL; j != nil {
		rows = append(rows, "Namespace|"+j.Namespace, "JobID|"+j.JobID, "Group|"+j.Group, "Task|"+j.Task)
	}
	return formatKV(rows) + "\n\nRules\n\n" + strings.TrimRight(policy.Rules, "\n")
}
