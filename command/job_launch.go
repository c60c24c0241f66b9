package command

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/opennomad/nomad/api"
)

// JobDispatchCommand starts an instance of a parameterized job.
type JobDispatchCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobDispatchCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job dispatch [options] <parameterized job> [input source]

  Dispatch an instance of a parameterized job: a child job with the meta
  given and, when an input source is named, its content as the payload
  ("-" reads standard input). The child's evaluation is monitored like
  'nomad job run'.

` + generalOptionsUsage() + `

Dispatch Options:

  -meta <key>=<value>
    A meta value of the dispatched job; repeatable. The job's
    parameterized block says which keys are required and allowed.

  -id-prefix-template <prefix>
    Put this into the dispatched job's ID after "dispatch-".

  -priority <n>
    Override the job's priority for this instance.

  -detach
    Return after dispatching, printing the IDs.

  -verbose
    Show full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *JobDispatchCommand) Synopsis() string { return "Dispatch an instance of a parameterized job" }

// Run implements cli.Command.
func (c *JobDispatchCommand) Run(args []string) int {
	const name = "job dispatch"
	var (
		metaFlags       stringSlice
		prefix          string
		priority        int
		detach, verbose bool
	)
	fs := c.flagSet(name, flagsClient)
	fs.Var(&metaFlags, "meta", "")
	fs.StringVar(&prefix, "id-prefix-template", "", "")
	fs.IntVar(&priority, "priority", 0, "")
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return c.usageError(name, "This command takes one or two arguments: <parameterized job> [input source]")
	}
	meta := map[string]string{}
	for _, kv := range metaFlags {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return c.usageError(name, fmt.Sprintf("-meta %q must be key=value", kv))
		}
		meta[k] = v
	}
	var payload []byte
	if fs.NArg() == 2 {
		var err error
		if payload, err = c.readInput(fs.Arg(1)); err != nil {
			c.Ui.Error(fmt.Sprintf("Error reading input data: %s", err))
			return 1
		}
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	id, err := resolveJobID(&c.Meta, client, fs.Arg(0))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	resp, _, err := client.Jobs().Dispatch(&api.JobDispatchRequest{
		JobID: id, Payload: payload, Meta: meta, IdPrefixTemplate: prefix, Priority: priority,
	}, c.write())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Failed to dispatch job: %s", c.describe(err)))
		return 1
	}
	length := idLength(verbose)
	c.Ui.Output(formatKV([]string{
		"Dispatched Job ID|" + resp.DispatchedJobID,
		"Evaluation ID|" + limit(resp.EvalID, length),
	}))
	if detach || resp.EvalID == "" {
		return 0
	}
	c.Ui.Output("")
	return newEvalMonitor(&c.Meta, client, verbose).monitor(resp.EvalID)
}

// readInput reads the payload from a file, or standard input for "-".
func (c *JobDispatchCommand) readInput(source string) ([]byte, error) {
	if source == "-" {
		return io.ReadAll(c.stdin())
	}
	return os.ReadFile(source)
}

// JobPeriodicForceCommand launches a periodic job's child now.
type JobPeriodicForceCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobPeriodicForceCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job periodic force [options] <periodic job>

  Launch a child of a periodic job now, whatever its schedule and overlap
  rule say, and monitor its evaluation like 'nomad job run'.

` + generalOptionsUsage() + `

Periodic Force Options:

  -detach
    Return after the launch, printing the evaluation's ID.

  -verbose
    Show full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *JobPeriodicForceCommand) Synopsis() string { return "Force the launch of a periodic job" }

// Run implements cli.Command.
func (c *JobPeriodicForceCommand) Run(args []string) int {
	const name = "job periodic force"
	var detach, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <periodic job>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	id, err := resolveJobID(&c.Meta, client, fs.Arg(0))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	evalID, _, err := client.Jobs().PeriodicForce(id, c.write())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error forcing periodic job %q: %s", id, c.describe(err)))
		return 1
	}
	if detach {
		c.Ui.Output("Force periodic successful")
		c.Ui.Output("Evaluation ID: " + limit(evalID, idLength(verbose)))
		return 0
	}
	return newEvalMonitor(&c.Meta, client, verbose).monitor(evalID)
}
