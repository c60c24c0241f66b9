package command

import "strings"

// SystemReconcileSummariesCommand asks the servers to recompute every
// job's summary from its allocations.
type SystemReconcileSummariesCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *SystemReconcileSummariesCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad system reconcile summaries [options]

  Recompute the summary of every job (the counts of queued, starting,
  running, failed, complete and lost allocations per task group) from the
  allocations the servers hold, repairing a summary that drifted.

  When ACLs are enabled, this command needs a management token.

` + generalOptionsUsage())
}

// Synopsis implements cli.Command.
func (c *SystemReconcileSummariesCommand) Synopsis() string {
	return "Reconciles the summaries of all registered jobs"
}

// Run implements cli.Command.
func (c *SystemReconcileSummariesCommand) Run(args []string) int {
	fs := c.flagSet("system reconcile summaries", flagsClient)
	client, ok := c.clientForArgs(fs, args)
	if !ok {
		return 1
	}
	return c.reportChange(client.System().ReconcileSummaries(), "reconciling summaries", "Successfully reconciled job summaries")
}
