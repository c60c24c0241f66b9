package command

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/opennomad/nomad/command/agent"
)

// ConfigValidateCommand checks agent configuration files the way the
// agent reads them at start, without starting anything.
type ConfigValidateCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *ConfigValidateCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad config validate <path> [<path>...]

  Check agent configuration files (HCL or JSON; a directory means its
  .hcl and .json files) as 'nomad agent -config=<path>...' would read
  them: parsed in order onto the defaults, merged, then validated. Every
  problem is listed with the file and line that set it, and the command
  exits with code 1; otherwise it prints "Configuration is valid!".
`)
}

// Synopsis implements cli.Command.
func (c *ConfigValidateCommand) Synopsis() string { return "Validate config files/directories" }

// Run implements cli.Command.
func (c *ConfigValidateCommand) Run(args []string) int {
	const name = "config validate"
	fs := c.flagSet(name, flagsNone)
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() == 0 {
		return c.usageError(name, "This command takes at least one argument: <path>")
	}
	agentArgs := make([]string, 0, 2*fs.NArg())
	for _, p := range fs.Args() {
		agentArgs = append(agentArgs, "-config", p)
	}
	if _, err := agent.LoadConfig(agentArgs, io.Discard); err != nil {
		var cfgErr *agent.ConfigError
		if errors.As(err, &cfgErr) {
			c.Ui.Error(fmt.Sprintf("Configuration is invalid (%s):", plural(len(cfgErr.Problems), "problem")))
			for _, p := range cfgErr.Problems {
				c.Ui.Error("  * " + p)
			}
			return 1
		}
		c.Ui.Error(fmt.Sprintf("Configuration is invalid: %s", err))
		return 1
	}
	c.Ui.Output("Configuration is valid!")
	return 0
}
