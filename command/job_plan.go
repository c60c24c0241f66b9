package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// Exit codes of job plan, as Nomad's: scripts use them to decide whether
// a run would disturb running allocations.
const (
	planExitNoChange = 0
	planExitChange   = 1
	planExitError    = 255
)

// JobPlanCommand asks the scheduler what registering a job would do.
type JobPlanCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobPlanCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job plan [options] <path>
Alias: nomad plan

  Dry-run the job in the file at <path>: the servers run the real
  scheduler against a private copy of the cluster state and report what it
  would do, without changing anything. Use "-" to read from standard input.

  The output has three parts:

    1. The difference between the job on the servers and the file,
       marked "+" (added), "-" (deleted), "+/-" (edited). Each task group
       says what would happen to its allocations ("2 create, 1 ignore") and
       each task what its change forces ("forces create/destroy update").
    2. "Scheduler dry-run:" - whether every allocation could be placed,
       and if not, why, group by group.
    3. The job's modify index, to pass to 'nomad job run -check-index' so
       the run only happens if nobody changed the job in between.

  Exit codes:
    0    no allocations would be created or destroyed
    1    allocations would be created or destroyed
    255  an error occurred

` + generalOptionsUsage() + `

Plan Options:

  -diff
    Show the difference against the job on the servers. Default true;
    use -diff=false to skip it.

  -policy-override
    Override a soft mandatory policy.

  -verbose
    Show every field of added and deleted jobs, groups and tasks.
` + jobSourceUsage)
}

// Synopsis implements cli.Command.
func (c *JobPlanCommand) Synopsis() string { return "Dry-run a job update to see its effects" }

// Run implements cli.Command.
func (c *JobPlanCommand) Run(args []string) int {
	const name = "job plan"
	var (
		src                           jobSource
		diff, policyOverride, verbose bool
	)
	fs := c.flagSet(name, flagsClient)
	src.addFlags(fs)
	fs.BoolVar(&diff, "diff", true, "")
	fs.BoolVar(&policyOverride, "policy-override", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	if !c.parseFlags(fs, args, name) {
		return planExitError
	}
	if fs.NArg() != 1 {
		c.usageError(name, "This command takes one argument: <path>")
		return planExitError
	}
	path := fs.Arg(0)
	loaded, err := src.load(&c.Meta, path)
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error getting job struct: %s", err))
		return planExitError
	}
	if jobID(loaded.job) == "" {
		c.Ui.Error("Error getting job struct: the job has no ID")
		return planExitError
	}
	client, ok := c.clientOrError()
	if !ok {
		return planExitError
	}
	resp, _, err := client.Jobs().PlanOpts(loaded.job, &api.JobPlanRequest{Diff: diff, PolicyOverride: policyOverride}, c.write())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error during plan: %s", c.describe(err)))
		return planExitError
	}

	if diff && resp.Diff != nil {
		c.Ui.Output(formatJobDiff(resp.Diff, verbose) + "\n")
	}
	c.Ui.Output("Scheduler dry-run:")
	c.Ui.Output(formatDryRun(resp, loaded.job, c.now(), idLength(verbose)) + "\n")
	printWarnings(c.Ui, loaded.warnings, resp.Warnings)
	c.Ui.Output(checkIndexHint(resp.JobModifyIndex, path))
	return planExitCode(resp)
}

// planExitCode is 1 when the plan creates, stops, migrates or replaces
// allocations; in-place updates and ignored allocations do not count.
func planExitCode(resp *api.JobPlanResponse) int {
	if resp.Annotations == nil {
		return planExitNoChange
	}
	for _, u := range resp.Annotations.DesiredTGUpdates {
		if u == nil {
			continue
		}
		if u.Place+u.Stop+u.Migrate+u.DestructiveUpdate+u.Canary+u.Preemptions > 0 {
			return planExitChange
		}
	}
	return planExitNoChange
}

// formatDryRun renders the scheduler's verdict: all placed or the failures
// explained, follow-up evaluations, preemptions and the next periodic
// launch.
func formatDryRun(resp *api.JobPlanResponse, job *api.Job, now time.Time, length int) string {
	var lines []string
	if len(resp.FailedTGAllocs) == 0 {
		lines = append(lines, "- All tasks successfully allocated.")
	} else {
		lines = append(lines, "- WARNING: Failed to place all allocations.")
		lines = append(lines, formatFailedGroups(resp.FailedTGAllocs, "  ")...)
	}
	for _, ev := range resp.CreatedEvals {
		if ev == nil || ev.WaitUntil.IsZero() {
			continue
		}
		lines = append(lines, fmt.Sprintf("- Rolling update, next evaluation will be in %s.",
			max(0, ev.WaitUntil.Sub(now)).Round(time.Second)))
	}
	if resp.Annotations != nil && len(resp.Annotations.PreemptedAllocs) > 0 {
		lines = append(lines, "- Preemptions: these allocations would be stopped to make room:")
		for _, l := range strings.Split(formatPreemptions(resp.Annotations.PreemptedAllocs, length), "\n") {
			lines = append(lines, "  "+l)
		}
	}
	if job.IsPeriodic() && !resp.NextPeriodicLaunch.IsZero() {
		lines = append(lines, fmt.Sprintf("- If submitted now, next periodic launch would be at %s (%s from now).",
			formatTime(resp.NextPeriodicLaunch), resp.NextPeriodicLaunch.Sub(now).Round(time.Second)))
	}
	return strings.Join(lines, "\n")
}

// formatPreemptions lists the allocations a plan would preempt.
func formatPreemptions(allocs []*api.AllocationListStub, length int) string {
	sort.Slice(allocs, func(i, j int) bool { return allocs[i].ID < allocs[j].ID })
	rows := []string{"ID|Job ID|Node ID|Task Group"}
	for _, a := range allocs {
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s", limit(a.ID, length), a.JobID, limit(a.NodeID, length), a.TaskGroup))
	}
	return formatList(rows)
}

// checkIndexHint tells how to run the planned job only if nobody changed
// it since the plan.
func checkIndexHint(index uint64, path string) string {
	return fmt.Sprintf(`Job Modify Index: %d
To run the job only if it is unchanged since this plan:

nomad job run -check-index %d %s

With -check-index the servers register the job only if its modify index
is still %d. If it changed, someone else updated the job after this plan
and the plan above may no longer describe what the run would do.`, index, index, path, index)
}
