package command

import (
	"fmt"
	"strings"

	"github.com/opennomad/nomad/api"
)

// jobTagGroupHelp is the help of "nomad job tag".
const jobTagGroupHelp = `
Usage: nomad job tag <subcommand> [options] [args]

  Name job versions: a tagged version is kept however many newer versions
  follow it, and can be reverted to or compared with by its name.

      $ nomad job tag apply -name golden -description "known good" example
      $ nomad job revert example golden
      $ nomad job tag unset -name golden example

  Run 'nomad job tag <subcommand> -help' for a subcommand's flags.
`

// JobTagApplyCommand tags a job version.
type JobTagApplyCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobTagApplyCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job tag apply [options] <job>

  Tag a version of the job with a name (unique among the job's versions)
  and an optional description. Without -version the job's current
  version is tagged. A tagged version is kept however many newer versions
  follow it, and 'nomad job revert' accepts its name.

  When ACLs are enabled, this command needs the 'submit-job' or
  'tag-job-version' capability in the job's namespace.

` + generalOptionsUsage() + `

Tag Options:

  -name=<name>
    The tag's name. Required.

  -description=<text>
    A description of the version.

  -version=<n>
    The version to tag; the current one when left out.
`)
}

// Synopsis implements cli.Command.
func (c *JobTagApplyCommand) Synopsis() string {
	return "Save a job version to prevent it from being garbage-collected and allow it to be diffed and reverted by name."
}

// Run implements cli.Command.
func (c *JobTagApplyCommand) Run(args []string) int {
	const name = "job tag apply"
	var tag, description string
	var version optionalUint
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&tag, "name", "", "")
	fs.StringVar(&description, "description", "", "")
	fs.Var(&version, "version", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <job>")
	}
	if fs.Arg(0) == "" {
		return c.usageError(name, "A job name is required")
	}
	if tag == "" {
		return c.usageError(name, "A version tag name is required")
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
	req := &api.TagVersionRequest{Version: version.value, Description: description}
	if !version.set {
		// The server resolves the current version, so a job registered
		// meanwhile cannot make the tag land on an older one.
		req.Latest = true
		job, _, err := client.Jobs().Info(id, c.query())
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error retrieving job versions: %s", c.describe(err)))
			return 1
		}
		version.value = derefUint64(job.Version)
	}
	if _, err := client.Jobs().TagVersionOpts(id, tag, req, c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error tagging job version: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Job version %d tagged with name %q", version.value, tag))
	return 0
}

// JobTagUnsetCommand removes a version tag.
type JobTagUnsetCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobTagUnsetCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job tag unset [options] <job>

  Remove a version tag from the job version that holds it. The version
  then counts toward the versions kept like any other.

  When ACLs are enabled, this command needs the 'submit-job' or
  'tag-job-version' capability in the job's namespace.

` + generalOptionsUsage() + `

Unset Options:

  -name=<name>
    The tag to remove. Required.
`)
}

// Synopsis implements cli.Command.
func (c *JobTagUnsetCommand) Synopsis() string { return "Remove a tag from a job version." }

// Run implements cli.Command.
func (c *JobTagUnsetCommand) Run(args []string) int {
	const name = "job tag unset"
	var tag string
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&tag, "name", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <job>")
	}
	if tag == "" {
		return c.usageError(name, "A version tag name is required")
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
	if _, err := client.Jobs().UntagVersion(id, tag, c.write()); err != nil {
		c.Ui.Error(fmt.Sprintf("Error tagging job version: %s", c.describe(err)))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Tag %q removed from job %q", tag, fs.Arg(0)))
	return 0
}
