package command

import (
	"fmt"
	"strings"

	"github.com/opennomad/nomad/api"
)

// JobStopCommand stops (deregisters) a job.
type JobStopCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobStopCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job stop [options] <job>
Alias: nomad stop

  Stop the job: the servers record a new version of it marked stopped and
  create an evaluation that stops its allocations, which this command
  follows like 'nomad job run'. The stopped job stays visible until it is
  garbage collected, unless -purge is given.

  If <job> is a prefix that matches exactly one other job ID, you are asked
  to confirm (skip with -yes).

` + generalOptionsUsage() + `

Stop Options:

  -detach
    Return after the stop is registered, printing the evaluation ID.

  -eval-priority=<1-100>
    Priority of the evaluation the stop creates.

  -global
    Stop a multiregion job in every region.

  -no-shutdown-delay
    Ignore the groups' and tasks' shutdown_delay.

  -purge
    Remove the job from the servers at once instead of leaving the
    stopped version for the garbage collector.

  -verbose
    Show full IDs.

  -yes
    Do not ask for confirmation.
`)
}

// Synopsis implements cli.Command.
func (c *JobStopCommand) Synopsis() string { return "Stop a running job" }

// Run implements cli.Command.
func (c *JobStopCommand) Run(args []string) int {
	const name = "job stop"
	var detach, global, noShutdownDelay, purge, verbose, yes bool
	var evalPriority int
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&global, "global", false, "")
	fs.BoolVar(&noShutdownDelay, "no-shutdown-delay", false, "")
	fs.BoolVar(&purge, "purge", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&yes, "yes", false, "")
	fs.IntVar(&evalPriority, "eval-priority", 0, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <job>")
	}
	if evalPriority < 0 || evalPriority > 100 {
		return c.usageError(name, fmt.Sprintf("Invalid -eval-priority %d: must be between 1 and 100", evalPriority))
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	given := fs.Arg(0)
	id, err := resolveJobID(&c.Meta, client, given)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if id != given && !yes {
		if !confirm(&c.Meta, fmt.Sprintf("Are you sure you want to stop job %q? [y/N]", id)) {
			c.Ui.Output("Cancelling job stop")
			return 0
		}
	}

	evalID, _, err := client.Jobs().DeregisterOpts(id, &api.DeregisterOptions{
		Purge: purge, Global: global, EvalPriority: evalPriority, NoShutdownDelay: noShutdownDelay,
	}, c.write())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error deregistering job: %s", c.describe(err)))
		return 1
	}
	// A job with no allocations to stop (a periodic or parameterized
	// template) gets no evaluation.
	if evalID == "" {
		c.Ui.Output(fmt.Sprintf("Job %q stopped", id))
		return 0
	}
	if detach {
		c.Ui.Output(evalID)
		return 0
	}
	return newEvalMonitor(&c.Meta, client, verbose).monitor(evalID)
}

// confirm asks a yes/no question; anything but y/yes (including no input
// at all) is a no.
func confirm(m *Meta, question string) bool {
	answer, err := m.Ui.Ask(question)
	if err != nil {
		m.Ui.Error(fmt.Sprintf("No answer (%v); taking it as no", err))
		return false
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true
	}
	return false
}
