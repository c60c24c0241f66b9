package command

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opennomad/nomad/nomad/snapshot"
	"github.com/opennomad/nomad/nomad/state"
)

// OperatorSnapshotRedactCommand removes the root keys' material from a
// snapshot archive.
type OperatorSnapshotRedactCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorSnapshotRedactCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator snapshot redact <file>

  Remove the key material of the cluster's root keys from a snapshot
  archive written by 'nomad operator snapshot save', so that the archive
  can be handed over without the keys that seal variables and sign
  identities. Each key keeps its metadata and public key. The archive is
  checked first, read whole into memory, and replaced by the redacted
  one. No agent is contacted.

  A cluster restored from a redacted archive cannot open its old keys:
  the variables they sealed stay unreadable, and it needs a new key
  ('nomad operator root keyring rotate') before it signs anything. ACL
  tokens and node secrets stay in the archive.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorSnapshotRedactCommand) Synopsis() string {
	return "Redacts an existing snapshot of Nomad server state"
}

// Run implements cli.Command.
func (c *OperatorSnapshotRedactCommand) Run(args []string) int {
	const name = "operator snapshot redact"
	fs := c.flagSet(name, flagsNone)
	if !c.parseArgs(fs, args, "<file>") {
		return 1
	}
	path := fs.Arg(0)
	if err := redactSnapshotFile(path); err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	c.Ui.Output("Snapshot redacted")
	return 0
}

// redactSnapshotFile replaces the archive at path by its redacted copy,
// written beside it and renamed over it once complete, so a failure
// leaves the original in place.
func redactSnapshotFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("Error opening snapshot file: %s", err)
	}
	defer f.Close()
	meta, data, err := snapshot.Read(f, filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("Error reading snapshot: %s", err)
	}
	defer data.Close()
	var redacted bytes.Buffer
	if _, err := state.RedactKeyMaterial(data, &redacted); err != nil {
		return fmt.Errorf("Failed to redact snapshot: %s", err)
	}
	out := *meta
	out.Size = int64(redacted.Len())

	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("Failed to create temporary file: %s", err)
	}
	defer os.Remove(tmp.Name())
	if err := snapshot.Write(tmp, &out, &redacted); err != nil {
		tmp.Close()
		return fmt.Errorf("Failed to write redacted snapshot: %s", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("Failed to write redacted snapshot: %s", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("Failed to write redacted snapshot: %s", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("Failed to finalize snapshot file: %s", err)
	}
	return nil
}
