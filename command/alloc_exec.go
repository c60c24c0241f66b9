package command

import (
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/cli"

	"github.com/opennomad/nomad/api"
)

// AllocExecCommand runs a command in a task of a running allocation.
type AllocExecCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *AllocExecCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad alloc exec [options] <allocation> <command> [<args>...]

  Run a command in the environment of a running task of an allocation (by
  ID or unique prefix), relaying stdin, stdout and stderr. The command's
  exit code becomes this command's exit code.

  Needs alloc-exec in the allocation's namespace, and alloc-node-exec too
  when the task's driver does not isolate the filesystem (raw_exec, exec).

` + generalOptionsUsage() + `

Exec Specific Options:

  -task <task-name>
    The task to run the command in. May be left out when the allocation
    has a single task.

  -job
    Take the first argument as a job ID and run the command in one of its
    running allocations.

  -group <group-name>
    With -job, pick a running allocation of this task group.

  -i
    Pass stdin to the command. Defaults to true.

  -t
    Run the command on a pseudo-terminal. Defaults to true when stdin is
    a terminal; needs -i.

  -e <escape_char>
    The escape character of a -t session: at the start of a line, the
    escape character followed by '.' ends the session. "none" disables
    it. Defaults to '~'.
`)
}

// Synopsis implements cli.Command.
func (c *AllocExecCommand) Synopsis() string { return "Execute commands in task" }

// Run implements cli.Command.
func (c *AllocExecCommand) Run(args []string) int {
	const name = "alloc exec"
	var task, group string
	var job bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&task, "task", "", "")
	fs.BoolVar(&job, "job", false, "")
	fs.StringVar(&group, "group", "", "")
	term := execTerminalFlags(fs, c.stdin())
	if !c.parseFlags(fs, expandShortFlags(args), name) {
		return 1
	}
	if fs.NArg() < 2 {
		return c.usageError(name, "This command takes at least two arguments: <allocation> <command>")
	}
	if term.tty && !term.input {
		return c.usageError(name, "-t requires -i")
	}
	if group != "" && !job {
		return c.usageError(name, "-group applies to -job only")
	}
	if !term.escapeOK() {
		return c.usageError(name, "-e requires 'none' or a single character")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	alloc, err := c.execAlloc(client, fs.Arg(0), job, group)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if task, err = logTask(alloc, task, shortIDLength); err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	return c.runExec(term, func(in io.Reader, sizes <-chan api.TerminalSize) (int, error) {
		return client.Allocations().Exec(c.Ctx, alloc, task, term.tty, fs.Args()[1:],
			in, rawOutput(c.Ui), rawError(c.Ui), sizes, c.query())
	})
}

// execAlloc resolves the allocation to run in: by ID prefix, or with
// -job a running allocation of the job (of the group, when set).
func (c *AllocExecCommand) execAlloc(client *api.Client, arg string, job bool, group string) (*api.Allocation, error) {
	if !job {
		return resolveAlloc(&c.Meta, client, arg, shortIDLength)
	}
	stubs, _, err := client.Jobs().Allocations(arg, false, c.query())
	if err != nil {
		return nil, fmt.Errorf("Error querying allocations of job %q: %s", arg, c.describe(err))
	}
	for _, s := range stubs {
		if s.ClientStatus == "running" && s.DesiredStatus == "run" && (group == "" || s.TaskGroup == group) {
			alloc, _, err := client.Allocations().Info(s.ID, c.query())
			if err != nil {
				return nil, fmt.Errorf("Error querying allocation %q: %s", s.ID, c.describe(err))
			}
			return alloc, nil
		}
	}
	if group != "" {
		return nil, fmt.Errorf("No running allocations found for job %q, group %q", arg, group)
	}
	return nil, fmt.Errorf("No running allocations found for job %q", arg)
}

// expandShortFlags splits -it (and -ti) into -i -t, as Nomad accepts,
// up to the first argument that is neither a flag nor a flag's value.
func expandShortFlags(args []string) []string {
	out := make([]string, 0, len(args)+1)
	valueNext := false
	for i, a := range args {
		switch {
		case valueNext:
			valueNext = false
		case a == "-it" || a == "-ti":
			out = append(out, "-i", "-t")
			continue
		case a == "--" || !strings.HasPrefix(a, "-") || a == "-":
			return append(out, args[i:]...)
		default:
			valueNext = !strings.Contains(a, "=") && !execBoolFlags[strings.TrimLeft(a, "-")]
		}
		out = append(out, a)
	}
	return out
}

// execBoolFlags are the flags of alloc exec that take no value.
var execBoolFlags = map[string]bool{"job": true, "i": true, "t": true, "no-color": true, "tls-skip-verify": true}

// rawError is the Ui's stderr as a plain writer.
func rawError(ui cli.Ui) io.Writer {
	switch u := ui.(type) {
	case *cli.BasicUi:
		return u.ErrorWriter
	case *cli.MockUi:
		return u.ErrorWriter
	}
	return uiErrorWriter{ui}
}

// uiErrorWriter writes through Ui.Error for Uis of other kinds.
type uiErrorWriter struct{ ui cli.Ui }

func (w uiErrorWriter) Write(p []byte) (int, error) {
	w.ui.Error(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
