package command

import (
	"fmt"
	"strings"
)

// AllocSignalCommand sends a signal to the tasks of an allocation.
type AllocSignalCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *AllocSignalCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad alloc signal [options] <allocation> [<task>]

  Send a signal to a task of an allocation (by ID or unique prefix), or
  without a task to every task that is running.

` + generalOptionsUsage() + `

Alloc Signal Options:

  -s <signal>
    The signal to send, by name (SIGHUP or HUP). Defaults to SIGKILL.

  -task <task>
    The task to signal; wins over the <task> argument.

  -verbose
    Show full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *AllocSignalCommand) Synopsis() string { return "Signal a running allocation" }

// Run implements cli.Command.
func (c *AllocSignalCommand) Run(args []string) int {
	const name = "alloc signal"
	var verbose bool
	var task, signal string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.StringVar(&task, "task", "", "")
	fs.StringVar(&signal, "s", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return c.usageError(name, "This command takes one or two arguments: <allocation> [<task>]")
	}
	if task == "" {
		task = fs.Arg(1)
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
	if task != "" {
		if _, err := logTask(alloc, task, length); err != nil {
			c.Ui.Error(err.Error())
			return 1
		}
	}
	if err := client.Allocations().Signal(alloc, c.query().WithContext(c.ctx()), task, strings.ToUpper(signal)); err != nil {
		c.Ui.Error(fmt.Sprintf("Error signalling allocation: %s", c.describe(err)))
		return 1
	}
	return 0
}
