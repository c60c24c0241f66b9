package command

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// formatACLToken renders a token, secret included, as Nomad's CLI does.
func formatACLToken(t *api.ACLToken) string {
	expiry := noneValue
	if t.ExpirationTime != nil && !t.ExpirationTime.IsZero() {
		expiry = formatTime(*t.ExpirationTime)
	}
	ttl := ""
	if t.ExpirationTTL != 0 {
		ttl = t.ExpirationTTL.String()
	}
	policies := noneValue
	if len(t.Policies) > 0 {
		policies = "[" + strings.Join(t.Policies, " ") + "]"
	}
	out := formatKV([]string{
		"Accessor ID|" + t.AccessorID,
		"Secret ID|" + t.SecretID,
		"Name|" + t.Name,
		"Type|" + t.Type,
		"Global|" + strconv.FormatBool(t.Global),
		"Create Time|" + formatTime(t.CreateTime),
		"Expiry Time|" + expiry,
		"Expiration TTL|" + ttl,
		"Create Index|" + strconv.FormatUint(t.CreateIndex, 10),
		"Modify Index|" + strconv.FormatUint(t.ModifyIndex, 10),
		"Policies|" + policies,
	})
	out += "\n\nRoles\n"
	if len(t.Roles) == 0 {
		return out + noneValue
	}
	rows := []string{"ID|Name"}
	for _, r := range t.Roles {
		rows = append(rows, r.ID+"|"+r.Name)
	}
	return out + formatList(rows)
}

// formatACLTokenList renders token stubs:
// `Name|Type|Global|Accessor ID|Expired`, expired as of now.
func formatACLTokenList(tokens []*api.ACLTokenListStub, now time.Time) string {
	rows := []string{"Name|Type|Global|Accessor ID|Expired"}
	for _, t := range tokens {
		expired := t.ExpirationTime != nil && !t.ExpirationTime.IsZero() && t.ExpirationTime.Before(now)
		rows = append(rows, fmt.Sprintf("%s|%s|%t|%s|%t", t.Name, t.Type, t.Global, t.AccessorID, expired))
	}
	return formatList(rows)
}

// tokenFlags are the flags that describe a token's grants, shared by
// create and update.
type tokenFlags struct {
	name, typ          string
	policies           stringSlice
	roleNames, roleIDs stringSlice
	asJSON             bool
}

func (f *tokenFlags) register(fs *flag.FlagSet, defaultType string) {
	fs.StringVar(&f.name, "name", "", "")
	fs.StringVar(&f.typ, "type", defaultType, "")
	fs.Var(&f.policies, "policy", "")
	fs.Var(&f.roleNames, "role-name", "")
	fs.Var(&f.roleIDs, "role-id", "")
	fs.BoolVar(&f.asJSON, "json", false, "")
}

func (f *tokenFlags) roles() []*api.ACLTokenRoleLink {
	var out []*api.ACLTokenRoleLink
	for _, n := range f.roleNames {
		out = append(out, &api.ACLTokenRoleLink{Name: n})
	}
	for _, id := range f.roleIDs {
		out = append(out, &api.ACLTokenRoleLink{ID: id})
	}
	return out
}

const tokenFlagsUsage = `
  -name <name>
    The token's name.

  -type <client|management>
    The token's type; a client token needs a policy or a role.

  -policy <name>
    A policy the token holds; repeatable.

  -role-name <name>, -role-id <id>
    A role the token links to, by name or ID; repeatable.

  -json
    Output the token in its JSON format.`

// ACLTokenCreateCommand creates a token.
type ACLTokenCreateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLTokenCreateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl token create [options]

  Create an ACL token. Needs a management token.

` + generalOptionsUsage() + `

Create Options:
` + tokenFlagsUsage + `

  -global
    Make the token global (replicated to every region).

  -ttl <duration>
    The token expires after the duration (within the servers' bounds,
    1m to 24h by default).
`)
}

// Synopsis implements cli.Command.
func (c *ACLTokenCreateCommand) Synopsis() string { return "Create an ACL token" }

// Run implements cli.Command.
func (c *ACLTokenCreateCommand) Run(args []string) int {
	var f tokenFlags
	var global bool
	var ttl time.Duration
	fs := c.flagSet("acl token create", flagsClient)
	f.register(fs, "client")
	fs.BoolVar(&global, "global", false, "")
	fs.DurationVar(&ttl, "ttl", 0, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	token := &api.ACLToken{Name: f.name, Type: f.typ, Policies: f.policies, Roles: f.roles(), Global: global,
		ExpirationTTL: ttl}
	created, _, err := client.ACLTokens().Create(token, c.write())
	return showResult(&c.Meta, created, err, "creating token", f.asJSON, formatACLToken)
}

// ACLTokenUpdateCommand updates a token.
type ACLTokenUpdateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLTokenUpdateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl token update [options] <accessor id>

  Update an ACL token: what a flag names replaces the token's value; the
  policies and roles are replaced when any -policy, -role-name or -role-id
  is given. Needs a management token.

` + generalOptionsUsage() + `

Update Options:
` + tokenFlagsUsage + `
`)
}

// Synopsis implements cli.Command.
func (c *ACLTokenUpdateCommand) Synopsis() string { return "Update an ACL token" }

// Run implements cli.Command.
func (c *ACLTokenUpdateCommand) Run(args []string) int {
	var f tokenFlags
	fs := c.flagSet("acl token update", flagsClient)
	f.register(fs, "")
	client, ok := c.clientForArgs(fs, args, "<accessor id>")
	if !ok {
		return 1
	}
	token, _, err := client.ACLTokens().Info(fs.Arg(0), c.query())
	if c.callFailed(err, "fetching token") {
		return 1
	}
	if f.name != "" {
		token.Name = f.name
	}
	if f.typ != "" {
		token.Type = f.typ
	}
	if len(f.policies)+len(f.roleNames)+len(f.roleIDs) > 0 {
		token.Policies, token.Roles = f.policies, f.roles()
	}
	updated, _, err := client.ACLTokens().Update(token, c.write())
	return showResult(&c.Meta, updated, err, "updating token", f.asJSON, formatACLToken)
}

// ACLTokenInfoCommand shows a token.
type ACLTokenInfoCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLTokenInfoCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl token info [options] <accessor id>

  Show an ACL token, secret included: for a management token or the token
  itself.

` + generalOptionsUsage() + `

Info Options:

  -json
    Output the token in its JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLTokenInfoCommand) Synopsis() string { return "Show an ACL token" }

// Run implements cli.Command.
func (c *ACLTokenInfoCommand) Run(args []string) int {
	var asJSON bool
	fs := c.flagSet("acl token info", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args, "<accessor id>")
	if !ok {
		return 1
	}
	token, _, err := client.ACLTokens().Info(fs.Arg(0), c.query())
	return showResult(&c.Meta, token, err, "fetching token", asJSON, formatACLToken)
}

// ACLTokenSelfCommand shows the token the command runs with.
type ACLTokenSelfCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLTokenSelfCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl token self [options]

  Show the token given with -token or NOMAD_TOKEN.

` + generalOptionsUsage() + `

Self Options:

  -json
    Output the token in its JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLTokenSelfCommand) Synopsis() string { return "Show the current ACL token" }

// Run implements cli.Command.
func (c *ACLTokenSelfCommand) Run(args []string) int {
	var asJSON bool
	fs := c.flagSet("acl token self", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	token, _, err := client.ACLTokens().Self(c.query())
	return showResult(&c.Meta, token, err, "fetching self token", asJSON, formatACLToken)
}

// ACLTokenListCommand lists tokens.
type ACLTokenListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLTokenListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl token list [options]

  List the ACL tokens, without their secrets. Needs a management token.

` + generalOptionsUsage() + `

List Options:

  -json
    Output the tokens in their JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLTokenListCommand) Synopsis() string { return "List ACL tokens" }

// Run implements cli.Command.
func (c *ACLTokenListCommand) Run(args []string) int {
	var asJSON bool
	fs := c.flagSet("acl token list", flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	tokens, _, err := client.ACLTokens().List(c.query())
	return showList(&c.Meta, tokens, err, "listing tokens", asJSON, "No tokens found",
		func(tokens []*api.ACLTokenListStub) string { return formatACLTokenList(tokens, c.now()) })
}

// ACLTokenDeleteCommand deletes a token.
type ACLTokenDeleteCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLTokenDeleteCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl token delete [options] <accessor id>

  Delete an ACL token. Needs a management token.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *ACLTokenDeleteCommand) Synopsis() string { return "Delete an ACL token" }

// Run implements cli.Command.
func (c *ACLTokenDeleteCommand) Run(args []string) int {
	fs := c.flagSet("acl token delete", flagsClient)
	client, ok := c.clientForArgs(fs, args, "<accessor id>")
	if !ok {
		return 1
	}
	_, err := client.ACLTokens().Delete(fs.Arg(0), c.write())
	return c.reportChange(err, "deleting token", fmt.Sprintf("Token %s successfully deleted", fs.Arg(0)))
}
