package command

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/cli"

	"github.com/opennomad/nomad/api"
)

// The "operator gossip keyring" commands manage the keys that encrypt
// the servers' gossip: list, install, use and remove act on every server
// of the region at once (through the agent's server); generate makes a
// new key locally. "operator keyring" is Nomad's older form with flags,
// and "operator keygen" its older generate.

// gossipKeyOps are the keyring operations, by name: what the command
// prints first and the API call.
var gossipKeyOps = map[string]struct {
	doing string
	call  func(a *api.Agent, key string) (*api.KeyringResponse, error)
}{
	"list":    {"Gathering installed encryption keys...", func(a *api.Agent, _ string) (*api.KeyringResponse, error) { return a.ListKeys() }},
	"install": {"Installing new gossip encryption key...", (*api.Agent).InstallKey},
	"use":     {"Changing primary gossip encryption key...", (*api.Agent).UseKey},
	"remove":  {"Removing gossip encryption key...", (*api.Agent).RemoveKey},
}

// runGossipKeyOp runs one keyring operation and prints its outcome: the
// installed keys for list, nothing more for the others.
func (m *Meta) runGossipKeyOp(op, key string) int {
	client, ok := m.clientOrError()
	if !ok {
		return 1
	}
	o := gossipKeyOps[op]
	m.Ui.Output(o.doing)
	resp, err := o.call(client.Agent(), key)
	if err != nil {
		m.Ui.Error(fmt.Sprintf("error: %s", m.describe(err)))
		return 1
	}
	if op == "list" {
		m.Ui.Output(formatGossipKeys(resp))
	}
	return 0
}

// formatGossipKeys lists the installed keys, sorted.
func formatGossipKeys(resp *api.KeyringResponse) string {
	keys := make([]string, 0, len(resp.Keys))
	for k := range resp.Keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return formatList(append([]string{"Key"}, keys...))
}

// OperatorGossipKeyringOpCommand is one of "operator gossip keyring
// list|install|use|remove".
type OperatorGossipKeyringOpCommand struct {
	Meta
	op string
}

var gossipKeyOpHelp = map[string]struct{ usage, synopsis string }{
	"list": {`
Usage: nomad operator gossip keyring list [options]

  List the gossip encryption keys installed on the servers.`, "List gossip encryption keys"},
	"install": {`
Usage: nomad operator gossip keyring install [options] <key>

  Install a new gossip encryption key on every server. The servers
  accept messages encrypted with it at once, and keep encrypting with
  their primary key until 'use' changes it.`, "Install a gossip encryption key"},
	"use": {`
Usage: nomad operator gossip keyring use [options] <key>

  Make an installed key the primary gossip encryption key: every server
  encrypts with it from now on. Install the key first.`, "Change the primary gossip encryption key"},
	"remove": {`
Usage: nomad operator gossip keyring remove [options] <key>

  Remove a gossip encryption key from every server. The primary key
  cannot be removed.`, "Remove a gossip encryption key"},
}

// Help implements cli.Command.
func (c *OperatorGossipKeyringOpCommand) Help() string {
	return strings.TrimSpace(gossipKeyOpHelp[c.op].usage) + `

  The command returns 0 when every server answered without error, 1
  otherwise. With ACLs on, it needs a token with agent write.

` + generalOptionsUsage()
}

// Synopsis implements cli.Command.
func (c *OperatorGossipKeyringOpCommand) Synopsis() string { return gossipKeyOpHelp[c.op].synopsis }

// Run implements cli.Command.
func (c *OperatorGossipKeyringOpCommand) Run(args []string) int {
	fs := c.flagSet("operator gossip keyring "+c.op, flagsClient)
	var argNames []string
	if c.op != "list" {
		argNames = []string{"<key>"}
	}
	if !c.parseArgs(fs, args, argNames...) {
		return 1
	}
	return c.runGossipKeyOp(c.op, fs.Arg(0))
}

// OperatorKeyringFlagsCommand is "operator gossip keyring" (and Nomad's
// older "operator keyring"): one operation chosen by a flag. The bare
// "operator gossip keyring" prints its help and subcommands.
type OperatorKeyringFlagsCommand struct {
	Meta
	name string
}

// Help implements cli.Command.
func (c *OperatorKeyringFlagsCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad ` + c.name + ` [options]
       nomad operator gossip keyring <subcommand> [options] [args]

  Manage the keys that encrypt the gossip between the servers
  (server.encrypt). Several keys may be installed at once, so that a key
  is rotated without interrupting the cluster:

      $ nomad operator gossip keyring generate
      $ nomad operator gossip keyring install <new key>
      $ nomad operator gossip keyring use <new key>
      $ nomad operator gossip keyring remove <old key>

  Every operation acts on all the servers of the region; the command
  returns 0 when every server answered without error, 1 otherwise. With
  ACLs on, it needs a token with agent write.

` + generalOptionsUsage() + `

Keyring Options:

  -install=<key>
    Install a new encryption key on every server.

  -list
    List the keys installed on the servers.

  -remove=<key>
    Remove a key from every server. The primary key cannot be removed.

  -use=<key>
    Make an installed key the one every server encrypts with.`)
}

// Synopsis implements cli.Command.
func (c *OperatorKeyringFlagsCommand) Synopsis() string { return "Manage gossip encryption keys" }

// Run implements cli.Command.
func (c *OperatorKeyringFlagsCommand) Run(args []string) int {
	var list bool
	keys := map[string]*string{"install": new(string), "use": new(string), "remove": new(string)}
	fs := c.flagSet(c.name, flagsClient)
	fs.BoolVar(&list, "list", false, "")
	for op, dst := range keys {
		fs.StringVar(dst, op, "", "")
	}
	if !c.parseFlags(fs, args, c.name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(c.name, "This command takes no arguments")
	}
	var chosen []string
	if list {
		chosen = append(chosen, "list")
	}
	for _, op := range []string{"install", "use", "remove"} {
		if *keys[op] != "" {
			chosen = append(chosen, op)
		}
	}
	switch {
	case len(chosen) == 0 && c.name == "operator gossip keyring":
		return cli.RunResultHelp
	case len(chosen) == 0:
		return c.usageError(c.name, "No actionable argument was passed\nEither the '-install', '-use', '-remove' or '-list' flag must be set")
	case len(chosen) > 1:
		return c.usageError(c.name, "Only a single action is allowed")
	}
	op := chosen[0]
	key := ""
	if op != "list" {
		key = *keys[op]
	}
	return c.runGossipKeyOp(op, key)
}

// OperatorGossipKeyringGenerateCommand prints a new gossip key: "operator
// gossip keyring generate" and Nomad's older "operator keygen".
type OperatorGossipKeyringGenerateCommand struct {
	Meta
	name string
}

// Help implements cli.Command.
func (c *OperatorGossipKeyringGenerateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad ` + c.name + `

  Print a new gossip encryption key: 32 random bytes (AES-256), in the
  base64 form server.encrypt and the keyring commands take.`)
}

// Synopsis implements cli.Command.
func (c *OperatorGossipKeyringGenerateCommand) Synopsis() string {
	return "Generate a new gossip encryption key"
}

// Run implements cli.Command.
func (c *OperatorGossipKeyringGenerateCommand) Run(args []string) int {
	fs := c.flagSet(c.name, flagsNone)
	if !c.parseArgs(fs, args) {
		return 1
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading random data: %s", err))
		return 1
	}
	c.Ui.Output(base64.StdEncoding.EncodeToString(key))
	return 0
}
