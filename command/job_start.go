package command

import (
	"fmt"
	"strings"
)

// JobStartCommand starts a stopped job again: its newest version is
// registered anew with the stop flag cleared.
type JobStartCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobStartCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job start [options] <job>

  Start a job that was stopped: a new version of the job is made from its
  most recent one, without the stop, and its evaluation is followed like
  'nomad job run' does. The command fails when the job is not registered
  or is not stopped.

  When ACLs are enabled, this command needs the 'submit-job' capability
  in the job's namespace.

` + generalOptionsUsage() + `

Start Options:

  -detach
    Return immediately, printing the evaluation's ID.

  -verbose
    Show full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *JobStartCommand) Synopsis() string { return "Start a stopped job" }

// Run implements cli.Command.
func (c *JobStartCommand) Run(args []string) int {
	const name = "job start"
	var detach, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	client, ok := c.clientForArgs(fs, args, "<job>")
	if !ok {
		return 1
	}
	id, err := resolveJobID(&c.Meta, client, strings.TrimSpace(fs.Arg(0)))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	job, _, err := client.Jobs().Info(id, c.query())
	if c.callFailed(err, "retrieving job") {
		return 1
	}
	if job.Stop == nil || !*job.Stop {
		c.Ui.Error(fmt.Sprintf("Job %q has not been stopped and has the status %q", id, deref(job.Status)))
		return 1
	}
	stop := false
	job.Stop = &stop
	// Registering on the index read makes a concurrent change (another
	// start, a new version) fail instead of being overwritten.
	resp, _, err := client.Jobs().EnforceRegister(job, derefUint64(job.JobModifyIndex), c.write())
	if c.callFailed(err, "starting job") {
		return 1
	}
	// Templates (periodic, parameterized) get no evaluation.
	if resp.EvalID == "" {
		c.Ui.Output(fmt.Sprintf("Job %q started", id))
		return 0
	}
	if detach {
		c.Ui.Output("Evaluation ID: " + resp.EvalID)
		return 0
	}
	return newEvalMonitor(&c.Meta, client, verbose).monitor(resp.EvalID)
}
