package command

import "strings"

// ACLPolicySelfCommand lists the policies the caller's token holds.
type ACLPolicySelfCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLPolicySelfCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl policy self [options]

  List the ACL policies the token of the command holds, directly or
  through its roles. A management token holds none: it may do anything.

` + generalOptionsUsage() + `

Self Options:

  -json
    Output the policies in their JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLPolicySelfCommand) Synopsis() string { return "Lookup self ACL policy assignment" }

// Run implements cli.Command.
func (c *ACLPolicySelfCommand) Run(args []string) int {
	var asJSON bool
	fs := c.flagSet("acl policy self", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	token, _, err := client.ACLTokens().Self(c.query())
	if c.callFailed(err, "fetching token") {
		return 1
	}
	if token.Type == "management" && !asJSON {
		c.Ui.Output("This is a management token. No individual policies are assigned.")
		return 0
	}
	policies, _, err := client.ACLPolicies().Self(c.query())
	return showList(&c.Meta, policies, err, "listing ACL policies", asJSON, "No policies found", formatACLPolicyList)
}
