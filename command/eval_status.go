package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opennomad/nomad/api"
)

// EvalStatusCommand shows one evaluation in detail.
type EvalStatusCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *EvalStatusCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad eval status [options] <evaluation>

  Show an evaluation (by ID or unique prefix): what triggered it, its
  status, the evaluations before and after it, and, if it could not place
  everything, why, task group by task group.

  With -monitor the command follows the evaluation like 'nomad job run'
  and exits 0 (placed), 2 (placement failures) or 1 (error).

` + generalOptionsUsage() + `

Eval Status Options:

  -monitor
    Follow the evaluation until it finishes.

  -verbose
    Show full IDs.
` + formatOutputFlagsUsage)
}

// Synopsis implements cli.Command.
func (c *EvalStatusCommand) Synopsis() string {
	return "Display evaluation status and placement failure reasons"
}

// Run implements cli.Command.
func (c *EvalStatusCommand) Run(args []string) int {
	const name = "eval status"
	var monitor, verbose, asJSON bool
	var tmpl string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&monitor, "monitor", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <evaluation>")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	length := idLength(verbose)
	eval, err := resolveEval(&c.Meta, client, fs.Arg(0), length)
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	if monitor {
		return newEvalMonitor(&c.Meta, client, verbose).monitor(eval.ID)
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, eval, asJSON, tmpl)
	}
	c.Ui.Output(formatKV(evalBasics(eval, length)))
	if len(eval.RelatedEvals) > 0 {
		c.Ui.Output("\nRelated Evaluations")
		c.Ui.Output(formatRelatedEvals(eval.RelatedEvals, length))
	}
	if len(eval.FailedTGAllocs) > 0 {
		c.Ui.Output("\nFailed Placements")
		c.Ui.Output(strings.Join(formatFailedGroups(eval.FailedTGAllocs, ""), "\n"))
		if eval.BlockedEval != "" {
			c.Ui.Output(fmt.Sprintf("\nEvaluation %q waiting for additional capacity to place remainder", limit(eval.BlockedEval, length)))
		}
	}
	return 0
}

// evalBasics is the evaluation's key/value block.
func evalBasics(e *api.Evaluation, length int) []string {
	rows := []string{
		"ID|" + limit(e.ID, length),
		"Create Time|" + formatUnixNano(e.CreateTime),
		"Modify Time|" + formatUnixNano(e.ModifyTime),
		"Status|" + e.Status,
		"Status Description|" + e.StatusDescription,
		"Type|" + e.Type,
		"TriggeredBy|" + e.TriggeredBy,
	}
	if e.JobID != "" {
		rows = append(rows, "Job ID|"+e.JobID)
	}
	if e.NodeID != "" {
		rows = append(rows, "Node ID|"+limit(e.NodeID, length))
	}
	if e.DeploymentID != "" {
		rows = append(rows, "Deployment ID|"+limit(e.DeploymentID, length))
	}
	rows = append(rows,
		"Namespace|"+e.Namespace,
		fmt.Sprintf("Priority|%d", e.Priority),
		fmt.Sprintf("Placement Failures|%t", len(e.FailedTGAllocs) > 0),
	)
	if !e.WaitUntil.IsZero() {
		rows = append(rows, "Wait Until|"+formatTime(e.WaitUntil))
	} else if e.Wait > 0 {
		rows = append(rows, "Wait|"+e.Wait.String())
	}
	rows = append(rows,
		"Previous Eval|"+limit(e.PreviousEval, length),
		"Next Eval|"+limit(e.NextEval, length),
		"Blocked Eval|"+limit(e.BlockedEval, length),
	)
	return rows
}

// formatRelatedEvals lists the evaluations linked to one.
func formatRelatedEvals(evals []*api.EvaluationStub, length int) string {
	sort.Slice(evals, func(i, j int) bool { return evals[i].CreateIndex < evals[j].CreateIndex })
	rows := []string{"ID|Priority|Triggered By|Node ID|Status|Description"}
	for _, e := range evals {
		node := limit(e.NodeID, length)
		if node == "" {
			node = "<none>"
		}
		rows = append(rows, fmt.Sprintf("%s|%d|%s|%s|%s|%s", limit(e.ID, length), e.Priority, e.TriggeredBy, node, e.Status, e.StatusDescription))
	}
	return formatList(rows)
}
