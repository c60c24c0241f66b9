package command

import (
	"io"
	"strings"

	"github.com/opennomad/nomad/api"
)

// JobActionCommand runs one of the actions a job's task defines in a
// running allocation of the task.
type JobActionCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobActionCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job action [options] <action>
       nomad action [options] <action>

  Run an action, a command the task's 'action' block defines, inside a
  running allocation of the job. Either an allocation, or a group and a
  task, must be given:

    nomad job action -job=<job> -alloc=<alloc-id> <action>
    nomad job action -job=<job> -group=<group> -task=<task> <action>

  The latter picks a running allocation of the group.

  When ACLs are enabled this needs read-job and alloc-exec in the job's
  namespace, and alloc-node-exec as well for drivers without filesystem
  isolation (raw_exec, exec).
` + generalOptionsUsage() + `
Action Options:

  -job <job-id>
    The job whose task defines the action (required).

  -alloc <allocation-id>
    The allocation to run the action in (an ID or a unique prefix).

  -group <group-name>
    The group to pick a running allocation of, without -alloc.

  -task <task-name>
    The task that defines the action; required without -alloc, and when
    the allocation runs more than one task.

  -i
    Pass stdin to the action (default true); -i=false to disable.

  -t
    Allocate a pseudo-tty, by default when stdin is a terminal; -t=false
    to disable.

  -e <escape_char>
    The escape character of sessions with a tty (default '~'), recognised
    at the beginning of a line; followed by '.' it closes the session.
    'none' disables it.
`)
}

// Synopsis implements cli.Command.
func (c *JobActionCommand) Synopsis() string { return "Run a pre-defined action from a Nomad task" }

// Run implements cli.Command.
func (c *JobActionCommand) Run(args []string) int {
	const name = "job action"
	var job, allocPrefix, group, task string
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&job, "job", "", "")
	fs.StringVar(&allocPrefix, "alloc", "", "")
	fs.StringVar(&group, "group", "", "")
	fs.StringVar(&task, "task", "", "")
	term := execTerminalFlags(fs, c.stdin())
	if !c.parseFlags(fs, expandShortFlags(args), name) {
		return 1
	}
	switch {
	case fs.NArg() != 1:
		return c.usageError(name, "An action name is required")
	case job == "":
		return c.usageError(name, "A job ID is required")
	case allocPrefix == "" && group == "":
		return c.usageError(name, "A group name is required if no allocation is provided")
	case allocPrefix == "" && task == "":
		return c.usageError(name, "A task name is required if no allocation is provided")
	case term.tty && !term.input:
		return c.usageError(name, "-i must be enabled if running with tty")
	case !term.escapeOK():
		return c.usageError(name, "-e requires 'none' or a single character")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	jobID, err := resolveJobID(&c.Meta, client, job)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	var alloc *api.Allocation
	if allocPrefix != "" {
		alloc, err = resolveAlloc(&c.Meta, client, allocPrefix, shortIDLength)
	} else {
		alloc, err = (&AllocExecCommand{Meta: c.Meta}).execAlloc(client, jobID, true, group)
	}
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if task, err = logTask(alloc, task, shortIDLength); err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	return c.runExec(term, func(in io.Reader, sizes <-chan api.TerminalSize) (int, error) {
		return client.Jobs().ActionExec(c.Ctx, alloc, jobID, task, term.tty, nil, fs.Arg(0),
			in, rawOutput(c.Ui), rawError(c.Ui), sizes, c.query())
	})
}
