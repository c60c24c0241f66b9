package command

import (
	"fmt"
	"strings"
)

// AllocStopCommand stops one allocation.
type AllocStopCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *AllocStopCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad alloc stop [options] <allocation>

  Stop an allocation (by ID or unique prefix). The servers create an
  evaluation for its job, which places a replacement if the job still
  wants one; the command follows that evaluation like 'nomad job run'.

` + generalOptionsUsage() + `

Alloc Stop Options:

  -detach
    Return after the stop, printing the evaluation ID.

  -no-shutdown-delay
    Ignore the group's and tasks' shutdown_delay.

  -verbose
    Show full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *AllocStopCommand) Synopsis() string { return "Stop and reschedule a running allocation" }

// Run implements cli.Command.
func (c *AllocStopCommand) Run(args []string) int {
	const name = "alloc stop"
	var detach, noShutdownDelay, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&noShutdownDelay, "no-shutdown-delay", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <allocation>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	length := idLength(verbose)
	alloc, err := resolveAlloc(&c.Meta, client, fs.Arg(0), length)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	opts := c.write()
	if noShutdownDelay {
		opts.Params = map[string]string{"no_shutdown_delay": "true"}
	}
	resp, _, err := client.Allocations().Stop(alloc.ID, opts)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error stopping allocation %q: %s", limit(alloc.ID, length), c.describe(err)))
		return 1
	}
	if detach {
		c.Ui.Output(resp.EvalID)
		return 0
	}
	return newEvalMonitor(&c.Meta, client, verbose).monitor(resp.EvalID)
}
