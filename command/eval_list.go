package command

import (
	"fmt"
	"strings"
)

// EvalListCommand lists evaluations.
type EvalListCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *EvalListCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad eval list [options]

  List evaluations, newest first. "Placement Failures" is true for an
  evaluation that could not place everything; 'nomad eval status <id>'
  explains why.

` + generalOptionsUsage() + `

Eval List Options:

  -job=<job-id>
    Only evaluations of this job.

  -status=<status>
    Only evaluations with this status: pending, blocked, complete,
    failed or canceled.

  -filter=<expression>
    A server-side filter expression.

  -per-page=<n>
    How many evaluations to return per page.

  -page-token=<token>
    Where to resume a paged listing (printed at the end of a page).

  -verbose
    Show full IDs.
` + formatOutputFlagsUsage)
}

// Synopsis implements cli.Command.
func (c *EvalListCommand) Synopsis() string { return "List the set of evaluations" }

var evalStatuses = []string{"pending", "blocked", "complete", "failed", "canceled"}

// Run implements cli.Command.
func (c *EvalListCommand) Run(args []string) int {
	const name = "eval list"
	var job, status, filter, pageToken, tmpl string
	var perPage int
	var verbose, asJSON bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&job, "job", "", "")
	fs.StringVar(&status, "status", "", "")
	fs.StringVar(&filter, "filter", "", "")
	fs.StringVar(&pageToken, "page-token", "", "")
	fs.IntVar(&perPage, "per-page", 0, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 0 {
		return c.usageError(name, "This command takes no arguments")
	}
	if status != "" && !contains(evalStatuses, status) {
		return c.usageError(name, fmt.Sprintf("Invalid -status %q: must be one of %s", status, strings.Join(evalStatuses, ", ")))
	}
	if perPage < 0 {
		return c.usageError(name, fmt.Sprintf("Invalid -per-page %d: must be positive", perPage))
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	q := c.query()
	q.Filter, q.NextToken, q.PerPage = filter, pageToken, int32(perPage)
	q.Params = map[string]string{}
	if job != "" {
		q.Params["job"] = job
	}
	if status != "" {
		q.Params["status"] = status
	}
	evals, qm, err := client.Evaluations().List(q)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error querying evaluations: %s", c.describe(err)))
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, evals, asJSON, tmpl)
	}
	if len(evals) == 0 {
		c.Ui.Output("No evals found")
		return 0
	}
	c.Ui.Output(formatEvalList(evals, idLength(verbose), false))
	if qm.NextToken != "" {
		c.Ui.Output(fmt.Sprintf("\nResults have been paginated. To get the next page run:\n\nnomad eval list -page-token %s", qm.NextToken))
	}
	return 0
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
