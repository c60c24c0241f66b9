package command

import (
	"strings"

	"github.com/opennomad/nomad/api"
)

// EvalDeleteCommand deletes evaluations. The servers only delete while
// the eval broker is paused, so the command pauses it for the deletion
// when it is running and restores it afterwards.
type EvalDeleteCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *EvalDeleteCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad eval delete [options] <evaluation>

  Delete an evaluation, given by its ID or a unique prefix of it. This is
  a last resort for an evaluation the broker cannot get rid of: the eval
  broker is paused while the evaluation is deleted (unless it is paused
  already) and resumed afterwards. Evaluations with allocations, or of a
  job that still runs, are refused.

  When ACLs are enabled, this command needs a management token.

` + generalOptionsUsage() + `

Eval Delete Options:

  -filter <expression>
    Delete the evaluations the expression selects instead of one by ID.
    Not supported by this server.

  -yes
    Do not ask for confirmation before deleting by filter.
`)
}

// Synopsis implements cli.Command.
func (c *EvalDeleteCommand) Synopsis() string { return "Delete evaluations" }

// Run implements cli.Command.
func (c *EvalDeleteCommand) Run(args []string) int {
	const name = "eval delete"
	var filter string
	var yes bool
	fs := c.flagSet(name, flagsClient)
	fs.StringVar(&filter, "filter", "", "")
	fs.BoolVar(&yes, "yes", false, "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	switch {
	case filter != "" && fs.NArg() > 0:
		return c.usageError(name, "Evaluation ID or filter flag required, not both")
	case filter == "" && fs.NArg() != 1:
		return c.usageError(name, "This command takes one argument: <evaluation>")
	case filter != "":
		// Nomad deletes by filter through the same endpoint; this
		// server answers that it does not, so say it before pausing
		// anything.
		c.Ui.Error("Error deleting evaluations: deleting evaluations by filter is not supported by this server")
		return 1
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	eval, err := resolveEval(&c.Meta, client, strings.TrimSpace(fs.Arg(0)), idLength(true))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	resume, ok := c.pauseBroker(client)
	if !ok {
		return 1
	}
	_, err = client.Evaluations().Delete([]string{eval.ID}, c.write())
	resumed := resume()
	if c.callFailed(err, "deleting evaluation") || !resumed {
		return 1
	}
	c.Ui.Output("Successfully deleted 1 evaluation")
	return 0
}

// pauseBroker pauses the eval broker unless it is paused already, and
// returns what puts it back as it was (reporting whether that worked).
func (c *EvalDeleteCommand) pauseBroker(client *api.Client) (func() bool, bool) {
	resp, _, err := client.Operator().SchedulerGetConfiguration(c.query())
	if c.callFailed(err, "reading the scheduler configuration") {
		return nil, false
	}
	cfg := resp.SchedulerConfig
	if cfg == nil || cfg.PauseEvalBroker {
		return func() bool { return true }, true
	}
	paused := *cfg
	paused.PauseEvalBroker = true
	if _, _, err := client.Operator().SchedulerSetConfiguration(&paused, c.write()); c.callFailed(err, "pausing the eval broker") {
		return nil, false
	}
	return func() bool {
		restore := paused
		restore.PauseEvalBroker = false
		_, _, err := client.Operator().SchedulerSetConfiguration(&restore, c.write())
		return !c.callFailed(err, "resuming the eval broker")
	}, true
}
