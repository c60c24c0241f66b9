package command

import (
	"fmt"
	"strings"

	"github.com/opennomad/nomad/api"
)

// JobEvalCommand forces a new evaluation of a job.
type JobEvalCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobEvalCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job eval [options] <job>

  Create a new evaluation of the job, as if it had just been registered,
  and follow it like 'nomad job run'. Useful after adding capacity or
  fixing a node, to retry placements now.

  Exit codes are those of 'nomad job run': 0 placed, 2 placement
  failures, 1 error.

` + generalOptionsUsage() + `

Eval Options:

  -force-reschedule
    Reschedule failed allocations at once, even if their reschedule
    policy would wait or has run out of attempts.

  -detach
    Return after creating the evaluation, printing its ID.

  -verbose
    Show full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *JobEvalCommand) Synopsis() string { return "Force an evaluation for the job" }

// Run implements cli.Command.
func (c *JobEvalCommand) Run(args []string) int {
	const name = "job eval"
	var force, detach, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&force, "force-reschedule", false, "")
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <job>")
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
	evalID, _, err := client.Jobs().EvaluateWithOpts(id, api.EvalOptions{ForceReschedule: force}, c.write())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error evaluating job: %s", c.describe(err)))
		return 1
	}
	if detach {
		c.Ui.Output("Created eval ID: " + limit(evalID, idLength(verbose)))
		return 0
	}
	return newEvalMonitor(&c.Meta, client, verbose).monitor(evalID)
}
