package command

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AllocChecksCommand shows the results of an allocation's native service
// checks.
type AllocChecksCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *AllocChecksCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad alloc checks [options] <allocation>

  Show the latest result of each check of the allocation's services that
  use the Nomad service provider. The allocation is given by ID or unique
  prefix. Needs read-job in the allocation's namespace.

` + generalOptionsUsage() + `

Alloc Checks Options:

  -verbose
    Show full IDs.

  -json
    Output the check results in their JSON format.

  -t
    Format the output with a Go template.
`)
}

// Synopsis implements cli.Command.
func (c *AllocChecksCommand) Synopsis() string {
	return "Outputs service health check status information"
}

// Run implements cli.Command.
func (c *AllocChecksCommand) Run(args []string) int {
	const name = "alloc checks"
	var verbose, asJSON bool
	var tmpl string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <allocation>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	alloc, err := resolveAlloc(&c.Meta, client, fs.Arg(0), idLength(verbose))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	checks, err := client.Allocations().Checks(alloc.ID, c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error querying allocation checks: %s", c.describe(err)))
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, checks, asJSON, tmpl)
	}
	if len(checks) == 0 {
		c.Ui.Output("No service checks found for allocation")
		return 0
	}
	// By service, then check name, so the output is stable.
	ids := make([]string, 0, len(checks))
	for id := range checks {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := checks[ids[i]], checks[ids[j]]
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		return a.Check < b.Check
	})
	blocks := []string{fmt.Sprintf("Status of %d Nomad Service Checks", len(checks))}
	for _, id := range ids {
		ch := checks[id]
		task := ch.Task
		if task == "" {
			task = "(group)"
		}
		rows := []string{
			"ID|" + ch.ID,
			"Name|" + ch.Check,
			"Group|" + ch.Group,
			"Task|" + task,
			"Service|" + ch.Service,
			"Status|" + ch.Status,
		}
		if ch.StatusCode != 0 {
			rows = append(rows, "StatusCode|"+strconv.Itoa(ch.StatusCode))
		}
		rows = append(rows,
			"Mode|"+ch.Mode,
			"Timestamp|"+formatTime(time.Unix(ch.Timestamp, 0)),
			"Output|"+ch.Output)
		blocks = append(blocks, formatKV(rows))
	}
	c.Ui.Output(strings.Join(blocks, "\n\n"))
	return 0
}
