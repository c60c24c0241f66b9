package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// The "operator root keyring" commands: list, rotate and remove the
// cluster's root keys, which seal data at rest and sign workload
// identities.

// OperatorRootKeyringListCommand lists the root keys.
type OperatorRootKeyringListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorRootKeyringListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator root keyring list [options]

  List the cluster's root keys: their IDs, states and when they were made
  and published. The key material itself never leaves the servers.

` + generalOptionsUsage() + `

Keyring List Options:

  -verbose
    Show full key IDs.

  -json
    Output the key metadata in its JSON format.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorRootKeyringListCommand) Synopsis() string {
	return "List the root keys"
}

// Run implements cli.Command.
func (c *OperatorRootKeyringListCommand) Run(args []string) int {
	var verbose, asJSON bool
	fs := c.flagSet("operator root keyring list", flagsClient)
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	keys, _, err := client.Keyring().List(c.query())
	return showList(&c.Meta, keys, err, "listing root keys", asJSON, "",
		func(keys []*api.RootKeyMeta) string { return formatRootKeys(keys, verbose) })
}

// formatRootKeys renders root keys as a table, one row a key.
func formatRootKeys(keys []*api.RootKeyMeta, verbose bool) string {
	rows := []string{"Key|State|Create Time|Publish Time"}
	for _, k := range keys {
		publish := noneValue
		if k.PublishTime > 0 {
			publish = formatUnixNano(k.PublishTime)
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s",
			limit(k.KeyID, idLength(verbose)), k.State, formatUnixNano(k.CreateTime), publish))
	}
	return formatList(rows)
}

// OperatorRootKeyringRotateCommand makes a new root key.
type OperatorRootKeyringRotateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorRootKeyringRotateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator root keyring rotate [options]

  Make a new root key. With -now it becomes the active key at once and the
  previous active key becomes inactive: it still opens what it sealed and
  verifies what it signed. With -prepublish the new key is published in
  the JWKS at once and becomes active when the duration has passed, so
  that whoever verifies workload identities learns it before anything is
  signed with it. One of -now or -prepublish must be given.

` + generalOptionsUsage() + `

Keyring Rotate Options:

  -full
    Mark every older key for rekeying: what was sealed with them is to be
    sealed again with the new key. Cannot be used with -prepublish.

  -now
    Make the new key active at once. Use it when a key has leaked.

  -prepublish <duration>
    Publish the new key now and make it active after the duration
    (for example "1h").

  -verbose
    Show the full key ID.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorRootKeyringRotateCommand) Synopsis() string {
	return "Rotate the root key"
}

// Run implements cli.Command.
func (c *OperatorRootKeyringRotateCommand) Run(args []string) int {
	const name = "operator root keyring rotate"
	var full, now, verbose bool
	var prepublish time.Duration
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&full, "full", false, "")
	fs.BoolVar(&now, "now", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.DurationVar(&prepublish, "prepublish", 0, "")
	if !c.parseArgs(fs, args) {
		return 1
	}
	switch {
	case prepublish < 0:
		return c.usageError(name, "-prepublish must be a positive duration")
	case full && prepublish > 0:
		return c.usageError(name, "-full cannot be used with -prepublish: a key cannot be prepublished and full rotated at the same time")
	case now == (prepublish > 0):
		return c.usageError(name, `One of "-now" or "-prepublish <duration>" must be used. `+
			`If a key has leaked, use "-now" to rotate at once; otherwise "-prepublish" lets verifiers learn the new key before it signs anything`)
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	opts := &api.KeyringRotateOptions{Full: full}
	if prepublish > 0 {
		// The server compares the publish time with its own clock.
		opts.PublishTime = time.Now().Add(prepublish).UnixNano()
	}
	key, _, err := client.Keyring().Rotate(opts, c.write())
	if c.callFailed(err, "rotating the root key") {
		return 1
	}
	if key == nil {
		c.Ui.Error("Error rotating the root key: the answer has no key")
		return 1
	}
	c.Ui.Output(formatRootKeys([]*api.RootKeyMeta{key}, verbose))
	return 0
}

// OperatorRootKeyringRemoveCommand removes a root key.
type OperatorRootKeyringRemoveCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorRootKeyringRemoveCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator root keyring remove [options] <key id>

  Remove a root key from the keyring. The active key cannot be removed:
  rotate first. Whatever was sealed with a removed key can no longer be
  opened, and identities it signed can no longer be verified.

` + generalOptionsUsage() + `

Keyring Remove Options:

  -force
    Remove the key even if it is still in use.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorRootKeyringRemoveCommand) Synopsis() string {
	return "Remove a root key"
}

// Run implements cli.Command.
func (c *OperatorRootKeyringRemoveCommand) Run(args []string) int {
	const name = "operator root keyring remove"
	var force bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&force, "force", false, "")
	if !c.parseArgs(fs, args, "<key id>") {
		return 1
	}
	id := strings.TrimSpace(fs.Arg(0))
	if id == "" {
		return c.usageError(name, "The key ID must not be empty")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	_, err := client.Keyring().Delete(&api.KeyringDeleteOptions{KeyID: id, Force: force}, c.write())
	return c.reportChange(err, "removing root key", fmt.Sprintf("Removed root key %s", id))
}
