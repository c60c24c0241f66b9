package command

import (
	"fmt"
	"strings"
)

// SystemGCCommand forces a garbage collection on the servers.
type SystemGCCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *SystemGCCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad system gc [options]

  Ask the servers to garbage collect now, ignoring the age thresholds:
  terminal evaluations and allocations, stopped jobs with nothing left
  running, and down nodes without allocations are removed.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *SystemGCCommand) Synopsis() string { return "Run the system garbage collection process" }

// Run implements cli.Command.
func (c *SystemGCCommand) Run(args []string) int {
	const name = "system gc"
	fs := c.flagSet(name, flagsClient)
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
	if err := client.System().GarbageCollect(); err != nil {
		c.Ui.Error(fmt.Sprintf("Error running system garbage collection: %s", c.describe(err)))
		return 1
	}
	return 0
}
