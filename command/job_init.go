package command

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/opennomad/nomad/jobspec"
)

// JobInitCommand writes the example job file.
type JobInitCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobInitCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job init [<path>]
Alias: nomad init

  Write an example job to <path> (default: ` + jobspec.ExampleJobFileName + ` in the current
  directory). The example is a commented service job whose raw_exec task
  prints a greeting every ten seconds; it runs on a dev agent as is:

      $ nomad job init
      $ nomad job run ` + jobspec.ExampleJobFileName + `

  An existing file is never overwritten.
`)
}

// Synopsis implements cli.Command.
func (c *JobInitCommand) Synopsis() string { return "Create an example job file" }

// Run implements cli.Command.
func (c *JobInitCommand) Run(args []string) int {
	const name = "job init"
	flags := c.flagSet(name, flagsNone)
	if !c.parseFlags(flags, args, name) {
		return 1
	}
	if flags.NArg() > 1 {
		return c.usageError(name, "This command takes zero or one argument: [<path>]")
	}
	path := jobspec.ExampleJobFileName
	if flags.NArg() == 1 {
		path = flags.Arg(0)
	}
	// O_EXCL makes "refuse to overwrite" hold even if the file appears
	// between a check and the write.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			c.Ui.Error(fmt.Sprintf("Job file %q already exists; remove it or choose another path", path))
			return 1
		}
		c.Ui.Error(fmt.Sprintf("Failed to create %q: %v", path, err))
		return 1
	}
	_, werr := f.Write(jobspec.ExampleJob())
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		c.Ui.Error(fmt.Sprintf("Failed to write %q: %v", path, err))
		return 1
	}
	c.Ui.Output(fmt.Sprintf("Example job file written to %s", path))
	return 0
}
