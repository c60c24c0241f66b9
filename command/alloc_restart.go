package command

import (
	"fmt"
	"strings"
)

// AllocRestartCommand restarts the tasks of an allocation in place.
type AllocRestartCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *AllocRestartCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad alloc restart [options] <allocation> [<task>]

  Restart a task of an allocation (by ID or unique prefix) in place, or
  without a task every task that is running. Each task gets its kill
  signal and starts again on the same client; the restart does not count
  against the group's restart policy.

` + generalOptionsUsage() + `

Alloc Restart Options:

  -task <task>
    The task to restart; wins over the <task> argument.

  -all-tasks
    Restart every running task; excludes naming a task.

  -verbose
    Show full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *AllocRestartCommand) Synopsis() string { return "Restart a running allocation" }

// Run implements cli.Command.
func (c *AllocRestartCommand) Run(args []string) int {
	const name = "alloc restart"
	var allTasks, verbose bool
	var task string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&allTasks, "all-tasks", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.StringVar(&task, "task", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return c.usageError(name, "This command takes one or two arguments: <allocation> [<task>]")
	}
	if task == "" {
		task = fs.Arg(1)
	}
	if allTasks && task != "" {
		return c.usageError(name, "The -all-tasks option cannot be used with a task name")
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
	q := c.query().WithContext(c.ctx())
	if allTasks {
		err = client.Allocations().RestartAllTasks(alloc, q)
	} else {
		err = client.Allocations().Restart(alloc, task, q)
	}
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Failed to restart allocation %q: %s", limit(alloc.ID, length), c.describe(err)))
		return 1
	}
	return 0
}
