package command

import (
	"fmt"
	"strconv"
	"strings"
)

// JobRevertCommand registers a stored version of a job again.
type JobRevertCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobRevertCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job revert [options] <job> <version|tag>

  Revert a job to one of its stored versions, named by its number or by
  its version tag: that version's specification is registered again as
  the job's newest version, and the evaluation it creates is followed
  like 'nomad job run' does. 'nomad job history' lists the versions.

  When ACLs are enabled, this command needs the 'submit-job' or
  'revert-job' capability in the job's namespace ('read-job' to follow
  the evaluation).

` + generalOptionsUsage() + `

Revert Options:

  -detach
    Return immediately, printing the evaluation's ID.

  -verbose
    Show full IDs.
`)
}

// Synopsis implements cli.Command.
func (c *JobRevertCommand) Synopsis() string { return "Revert to a prior version of the job" }

// Run implements cli.Command.
func (c *JobRevertCommand) Run(args []string) int {
	const name = "job revert"
	var detach, verbose bool
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 2 {
		return c.usageError(name, "This command takes two arguments: <job> <version|tag>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	id, err := resolveJobID(&c.Meta, client, strings.TrimSpace(fs.Arg(0)))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	// A number is a version; anything else is a version tag.
	version, err := strconv.ParseUint(fs.Arg(1), 10, 64)
	if err != nil {
		tagged, _, err := client.Jobs().VersionByTag(id, fs.Arg(1), c.query())
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error retrieving job versions: %s", c.describe(err)))
			return 1
		}
		version = derefUint64(tagged.Version)
	}
	resp, _, err := client.Jobs().Revert(id, version, nil, c.write(), "", "")
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error retrieving job versions: %s", c.describe(err)))
		return 1
	}
	// Templates (periodic, parameterized) get no evaluation.
	if resp.EvalID == "" {
		return 0
	}
	if detach {
		c.Ui.Output("Evaluation ID: " + resp.EvalID)
		return 0
	}
	return newEvalMonitor(&c.Meta, client, verbose).monitor(resp.EvalID)
}
