package command

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/opennomad/nomad/nomad/snapshot"
)

// OperatorSnapshotSaveCommand writes an archive of the cluster's state.
type OperatorSnapshotSaveCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorSnapshotSaveCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator snapshot save [options] <file>

  Write an archive of the cluster's whole state (jobs, evaluations,
  allocations, nodes, configuration) to <file>. The archive is checked
  before it is kept; 'nomad operator snapshot restore' reads it back.

` + generalOptionsUsage() + `

Snapshot Save Options:

  -stale
    Let any server take the snapshot from its own state, even without a
    leader. By default the leader takes it.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorSnapshotSaveCommand) Synopsis() string {
	return "Saves the current state of the Nomad cluster"
}

// Run implements cli.Command.
func (c *OperatorSnapshotSaveCommand) Run(args []string) int {
	const name = "operator snapshot save"
	var stale bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&stale, "stale", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <file>")
	}
	path := fs.Arg(0)
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	q := c.query()
	q.AllowStale = stale
	body, err := client.Operator().Snapshot(q)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error getting snapshot: %s", c.describe(err)))
		return 1
	}
	defer body.Close()

	// Write next to the target and rename once verified, so a failed
	// save never leaves a damaged file under the name asked for.
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error creating snapshot file: %s", err))
		return 1
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, body); err != nil {
		tmp.Close()
		c.Ui.Error(fmt.Sprintf("Error writing snapshot file: %s", err))
		return 1
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		c.Ui.Error(fmt.Sprintf("Error writing snapshot file: %s", err))
		return 1
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		tmp.Close()
		c.Ui.Error(fmt.Sprintf("Error verifying snapshot file: %s", err))
		return 1
	}
	meta, state, err := snapshot.Read(tmp, filepath.Dir(path))
	tmp.Close()
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error verifying snapshot file: %s", err))
		return 1
	}
	state.Close()
	if err := os.Rename(tmp.Name(), path); err != nil {
		c.Ui.Error(fmt.Sprintf("Error writing snapshot file: %s", err))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("State file written to %s (index %d)", path, meta.Index))
	return 0
}

// OperatorSnapshotRestoreCommand replaces the cluster's state with an
// archive.
type OperatorSnapshotRestoreCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorSnapshotRestoreCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator snapshot restore [options] <file>

  Replace the cluster's whole state with an archive written by 'nomad
  operator snapshot save'. Everything written since the archive was taken
  is lost. The leader restores it and the other servers follow; clients
  then converge on the restored allocations.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *OperatorSnapshotRestoreCommand) Synopsis() string {
	return "Restore a snapshot of the Nomad cluster state"
}

// Run implements cli.Command.
func (c *OperatorSnapshotRestoreCommand) Run(args []string) int {
	const name = "operator snapshot restore"
	fs := c.flagSet(name, flagsClient)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <file>")
	}
	path := fs.Arg(0)
	f, err := os.Open(path)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error opening snapshot file: %s", err))
		return 1
	}
	defer f.Close()
	// Refuse a damaged file here rather than after uploading it.
	_, state, err := snapshot.Read(f, "")
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error verifying snapshot file: %s", err))
		return 1
	}
	state.Close()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading snapshot file: %s", err))
		return 1
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	if _, err := client.Operator().SnapshotRestore(f, c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error restoring snapshot: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output("Snapshot Restored")
	return 0
}
