package command

import (
	"fmt"
	"strings"

	"github.com/opennomad/nomad/api"
)

// JobHistoryCommand lists a job's stored versions.
type JobHistoryCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobHistoryCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job history [options] <job>

  List the versions of a job the servers keep, newest first: version
  number, whether it was stable, when it was submitted, and its version
  tag if it has one. With -p each
  version is shown with its difference from the version before it.

` + generalOptionsUsage() + `

History Options:

  -p
    Show the difference of each version from the previous one.

  -full
    Show every field of each version (as JSON).

  -version=<n>
    Show only version <n>.

  -verbose
    Show every field of added and deleted objects in diffs.
` + formatOutputFlagsUsage)
}

// Synopsis implements cli.Command.
func (c *JobHistoryCommand) Synopsis() string { return "Display all tracked versions of a job" }

// Run implements cli.Command.
func (c *JobHistoryCommand) Run(args []string) int {
	const name = "job history"
	var diffs, full, verbose, asJSON bool
	var tmpl string
	var only optionalUint
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&diffs, "p", false, "")
	fs.BoolVar(&full, "full", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	fs.Var(&only, "version", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <job>")
	}
	if full && diffs {
		return c.usageError(name, "-full and -p cannot be used together")
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
	versions, jobDiffs, _, err := client.Jobs().Versions(id, diffs, c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error querying versions of job %q: %s", id, c.describe(err)))
		return 1
	}
	if only.set {
		var kept []*api.Job
		var keptDiffs []*api.JobDiff
		for i, v := range versions {
			if v.Version != nil && *v.Version == only.value {
				kept = append(kept, v)
				if i < len(jobDiffs) {
					keptDiffs = append(keptDiffs, jobDiffs[i])
				}
			}
		}
		if len(kept) == 0 {
			c.Ui.Error(fmt.Sprintf("Job %q has no version %d", id, only.value))
			return 1
		}
		versions, jobDiffs = kept, keptDiffs
	}
	if asJSON || tmpl != "" {
		out, err := dataFormat(versions, asJSON, tmpl)
		if err != nil {
			c.Ui.Error(err.Error())
			return 1
		}
		c.Ui.Output(out)
		return 0
	}

	blocks := make([]string, 0, len(versions))
	for i, v := range versions {
		rows := []string{
			fmt.Sprintf("Version|%d", derefUint64(v.Version)),
			fmt.Sprintf("Stable|%t", v.Stable != nil && *v.Stable),
			"Submit Date|" + formatUnixNano(derefInt64(v.SubmitTime)),
		}
		if v.VersionTag != nil {
			rows = append(rows, "Tag Name|"+v.VersionTag.Name)
			if v.VersionTag.Description != "" {
				rows = append(rows, "Tag Description|"+v.VersionTag.Description)
			}
		}
		block := formatKV(rows)
		if diffs && i < len(jobDiffs) && jobDiffs[i] != nil {
			block += "\n" + pad("Diff", len("Submit Date")) + " =\n" + formatJobDiff(jobDiffs[i], verbose)
		}
		if full {
			out, err := dataFormat(v, true, "")
			if err != nil {
				c.Ui.Error(err.Error())
				return 1
			}
			block += "\n" + pad("Full", len("Submit Date")) + " =\n" + out
		}
		blocks = append(blocks, block)
	}
	c.Ui.Output(strings.Join(blocks, "\n\n"))
	return 0
}

func derefUint64(u *uint64) uint64 {
	if u == nil {
		return 0
	}
	return *u
}
