package command

import "strings"

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
	fs := c.flagSet("system gc", flagsClient)
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	return c.reportChange(client.System().GarbageCollect(), "running system garbage collection", "")
}
