package command

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/opennomad/nomad/api"
)

// The "acl" commands: bootstrap, and the policy, token and role groups
// (acl_policy.go, acl_token.go, acl_role.go).

const aclGroupHelp = `
Usage: nomad acl <subcommand> [options] [args]

  Bootstrap the ACL system and manage its policies, tokens and roles.
  ACLs are on when the servers' agent configuration has
  acl { enabled = true }.

  Make the first management token:

      $ nomad acl bootstrap

  Write a policy, then a token holding it:

      $ nomad acl policy apply -description "read nodes" readnode rules.hcl
      $ nomad acl token create -name ci -policy readnode

  Run "nomad acl <subcommand> -help" for the subcommands' options.
`

const aclPolicyGroupHelp = `
Usage: nomad acl policy <subcommand> [options] [args]

  Write, list, read and delete ACL policies.

      $ nomad acl policy apply [-description <text>] <name> <file>
      $ nomad acl policy list
      $ nomad acl policy info <name>
      $ nomad acl policy delete <name>
`

const aclTokenGroupHelp = `
Usage: nomad acl token <subcommand> [options] [args]

  Create, list, read, update and delete ACL tokens.

      $ nomad acl token create -name ci -policy readnode -ttl 8h
      $ nomad acl token list
      $ nomad acl token info <accessor id>
      $ nomad acl token self
      $ nomad acl token update -name renamed <accessor id>
      $ nomad acl token delete <accessor id>
`

const aclRoleGroupHelp = `
Usage: nomad acl role <subcommand> [options] [args]

  Create, list, read, update and delete ACL roles: named sets of
  policies tokens may link to.

      $ nomad acl role create -name ops -policy readnode
      $ nomad acl role list
      $ nomad acl role info <role id>
      $ nomad acl role update -policy readnode -policy other <role id>
      $ nomad acl role delete <role id>
`

const aclAuthMethodGroupHelp = `
Usage: nomad acl auth-method <subcommand> [options] [args]

  Create, list, read, update and delete ACL auth methods: the identity
  providers (OIDC or JWT) users log in through with "nomad login".

      $ nomad acl auth-method create -name sso -type OIDC -token-locality local \
          -max-token-ttl 1h -config @oidc.json
      $ nomad acl auth-method list
      $ nomad acl auth-method info sso
      $ nomad acl auth-method update -default sso
      $ nomad acl auth-method delete sso
`

const aclBindingRuleGroupHelp = `
Usage: nomad acl binding-rule <subcommand> [options] [args]

  Create, list, read, update and delete ACL binding rules: which logins
  through an auth method get which role, policy, or management.

      $ nomad acl binding-rule create -auth-method sso \
          -selector 'engineering in list.groups' -bind-type role -bind-name eng
      $ nomad acl binding-rule list
      $ nomad acl binding-rule info <binding rule id>
      $ nomad acl binding-rule update -description engineers <binding rule id>
      $ nomad acl binding-rule delete <binding rule id>
`

// readFileOrStdin reads a file, or standard input for "-".
func (m *Meta) readFileOrStdin(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(m.stdin())
	}
	return os.ReadFile(path)
}

// ACLBootstrapCommand makes the first management token.
type ACLBootstrapCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ACLBootstrapCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad acl bootstrap [options] [<path>]

  Make the first management token of the cluster. It works once; to
  bootstrap again, write the reset index the refusal names into the file
  acl-bootstrap-reset of the leader's server data directory.

  With <path>, the token's secret ID is read from the file ("-" for
  standard input): it must be a UUID.

` + generalOptionsUsage() + `

Bootstrap Options:

  -json
    Output the token in its JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *ACLBootstrapCommand) Synopsis() string { return "Bootstrap the ACL system" }

// Run implements cli.Command.
func (c *ACLBootstrapCommand) Run(args []string) int {
	const name = "acl bootstrap"
	var asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&asJSON, "json", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() > 1 {
		return c.usageError(name, "This command takes up to one argument: <path>")
	}
	var secret string
	if fs.NArg() == 1 {
		raw, err := c.readFileOrStdin(fs.Arg(0))
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error reading the bootstrap secret: %s", err))
			return 1
		}
		secret = strings.TrimSpace(string(raw))
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	var token *api.ACLToken
	var err error
	if secret != "" {
		token, _, err = client.ACLTokens().BootstrapOpts(secret, c.write())
	} else {
		token, _, err = client.ACLTokens().Bootstrap(c.write())
	}
	return showResult(&c.Meta, token, err, "bootstrapping", asJSON, formatACLToken)
}
