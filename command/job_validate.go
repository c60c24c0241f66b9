package command

import (
	"fmt"
	"strings"
)

// JobValidateCommand checks a job file without registering it.
type JobValidateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobValidateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job validate [options] <path>
Alias: nomad validate

  Check the job file at <path> ("-" for standard input): first its syntax
  and variables here, then the job itself on the servers, which list every
  problem they find. Nothing is registered.

  Exit code 0 means the job is valid, 1 that it is not (or that it could
  not be checked).

` + generalOptionsUsage() + `

Validate Options:
` + jobSourceUsage)
}

// Synopsis implements cli.Command.
func (c *JobValidateCommand) Synopsis() string { return "Check a job specification for errors" }

// Run implements cli.Command.
func (c *JobValidateCommand) Run(args []string) int {
	const name = "job validate"
	var src jobSource
	fs := c.flagSet(name, flagsClient)
	src.addFlags(fs)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <path>")
	}
	loaded, err := src.load(&c.Meta, fs.Arg(0))
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error getting job struct: %s", err))
		return 1
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	resp, _, err := client.Jobs().Validate(loaded.job, c.write())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error validating job: the file parsed, but the job itself could not be checked: %s",
			c.describe(err)))
		return 1
	}
	printWarnings(c.Ui, loaded.warnings, resp.Warnings)
	problems := resp.ValidationErrors
	if len(problems) == 0 && resp.Error != "" {
		problems = strings.Split(strings.TrimSpace(resp.Error), "\n")
	}
	if len(problems) > 0 {
		c.Ui.Error("Job validation errors:")
		for _, p := range problems {
			c.Ui.Error("* " + strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(p), "*")))
		}
		return 1
	}
	c.Ui.Output("Job validation successful")
	return 0
}
