package command

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/nomad/snapshot"
)

// OperatorSnapshotInspectCommand describes a snapshot file, checking it
// whole first.
type OperatorSnapshotInspectCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *OperatorSnapshotInspectCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad operator snapshot inspect [options] <file>

  Describe a snapshot file written by 'nomad operator snapshot save': its
  ID, the size of its state, and the Raft index and term it was taken
  at. The file is checked against its checksums first; a damaged one is
  refused. No agent is contacted.

Inspect Options:

  -json
    Print the snapshot's metadata as JSON.
`)
}

// Synopsis implements cli.Command.
func (c *OperatorSnapshotInspectCommand) Synopsis() string {
	return "Displays information about a Nomad snapshot file"
}

// Run implements cli.Command.
func (c *OperatorSnapshotInspectCommand) Run(args []string) int {
	const name = "operator snapshot inspect"
	var asJSON bool
	fs := c.flagSet(name, flagsNone)
	fs.BoolVar(&asJSON, "json", false, "")
	if !c.parseArgs(fs, args, "<file>") {
		return 1
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error opening snapshot file: %s", err))
		return 1
	}
	defer f.Close()
	meta, state, err := snapshot.Read(f, "")
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error reading snapshot: %s", err))
		return 1
	}
	state.Close()
	if asJSON {
		return printData(&c.Meta, meta, true, "")
	}
	c.Ui.Output(formatKV([]string{
		"ID|" + meta.ID,
		"Size|" + strconv.FormatInt(meta.Size, 10),
		"Index|" + strconv.FormatUint(meta.Index, 10),
		"Term|" + strconv.FormatUint(meta.Term, 10),
		"Version|" + strconv.Itoa(int(meta.Version)),
	}))
	return 0
}
