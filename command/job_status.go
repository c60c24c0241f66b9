package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/opennomad/nomad/api"
)

// JobStatusCommand lists jobs or shows one job in detail.
type JobStatusCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobStatusCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job status [options] [<job>]
Alias: nomad status

  Without an argument, list the jobs of the namespace (every namespace
  with -namespace='*'). With a job ID (or a unique prefix of one), show the
  job: its attributes, allocation counts per task group, why allocations
  could not be placed if an evaluation is waiting for capacity, and its
  allocations.

` + generalOptionsUsage() + `

Status Options:

  -all-allocs
    Include the allocations of earlier jobs that had the same ID.

  -evals
    Also list the job's evaluations.

  -short
    Show only the job's attributes.

  -verbose
    Show full IDs.
` + formatOutputFlagsUsage)
}

// Synopsis implements cli.Command.
func (c *JobStatusCommand) Synopsis() string { return "Display status information about a job" }

// Run implements cli.Command.
func (c *JobStatusCommand) Run(args []string) int {
	const name = "job status"
	var allAllocs, evals, short, verbose, asJSON bool
	var tmpl string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&allAllocs, "all-allocs", false, "")
	fs.BoolVar(&evals, "evals", false, "")
	fs.BoolVar(&short, "short", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&tmpl, "t", "", "")
	if !c.parseFlags(fs, args, name) {
		return 1
	}
	if fs.NArg() > 1 {
		return c.usageError(name, "This command takes zero or one argument: [<job>]")
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}

	if fs.NArg() == 0 {
		jobs, _, err := client.Jobs().List(c.query())
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error querying jobs: %s", c.describe(err)))
			return 1
		}
		if asJSON || tmpl != "" {
			return printData(&c.Meta, jobs, asJSON, tmpl)
		}
		if len(jobs) == 0 {
			c.Ui.Output("No running jobs")
			return 0
		}
		c.Ui.Output(formatJobList(jobs, c.allNamespaces()))
		return 0
	}

	id, err := resolveJobID(&c.Meta, client, fs.Arg(0))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	job, _, err := client.Jobs().Info(id, c.query())
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error querying job %q: %s", id, c.describe(err)))
		return 1
	}
	if asJSON || tmpl != "" {
		return printData(&c.Meta, job, asJSON, tmpl)
	}
	d := &jobDetail{meta: &c.Meta, client: client, job: job, length: idLength(verbose)}
	return d.print(short, allAllocs, evals)
}

// jobDetail renders `job status <id>`.
type jobDetail struct {
	meta   *Meta
	client *api.Client
	job    *api.Job
	length int
}

func (d *jobDetail) print(short, allAllocs, showEvals bool) int {
	ui := d.meta.Ui
	ui.Output(formatKV(d.basics()))
	if short {
		return 0
	}
	id := jobID(d.job)

	if d.job.IsPeriodic() || d.job.IsParameterized() {
		return d.printChildren(id)
	}

	summary, _, err := d.client.Jobs().Summary(id, d.meta.query())
	if err != nil {
		ui.Error(fmt.Sprintf("Error querying job summary: %s", d.meta.describe(err)))
		return 1
	}
	ui.Output("\nSummary")
	ui.Output(formatSummary(summary))

	evals, _, err := d.client.Jobs().Evaluations(id, d.meta.query())
	if err != nil {
		ui.Error(fmt.Sprintf("Error querying job evaluations: %s", d.meta.describe(err)))
		return 1
	}
	if failing := blockingFailures(evals); failing != nil {
		ui.Output("\nPlacement Failure")
		ui.Output(strings.Join(formatFailedGroups(failing.FailedTGAllocs, ""), "\n"))
	}
	if showEvals {
		ui.Output("\nEvaluations")
		if len(evals) == 0 {
			ui.Output("No evaluations found")
		} else {
			ui.Output(formatEvalList(evals, d.length, true))
		}
	}

	latest, _, err := d.client.Jobs().LatestDeployment(id, d.meta.query())
	if err != nil {
		ui.Error(fmt.Sprintf("Error querying latest job deployment: %s", d.meta.describe(err)))
		return 1
	}
	if latest != nil {
		ui.Output("\nLatest Deployment")
		ui.Output(formatDeploymentKV(latest, d.length, false))
		ui.Output("\nDeployed")
		ui.Output(formatDeploymentGroups(latest))
	}

	allocs, _, err := d.client.Jobs().Allocations(id, allAllocs, d.meta.query())
	if err != nil {
		ui.Error(fmt.Sprintf("Error querying job allocations: %s", d.meta.describe(err)))
		return 1
	}
	ui.Output("\nAllocations")
	if len(allocs) == 0 {
		ui.Output("No allocations placed")
	} else {
		ui.Output(formatAllocStubs(allocs, d.length, false))
	}
	return 0
}

// basics is the job's key/value block.
func (d *jobDetail) basics() []string {
	j := d.job
	rows := []string{
		"ID|" + jobID(j),
		"Name|" + deref(j.Name),
		"Submit Date|" + formatUnixNano(derefInt64(j.SubmitTime)),
		"Type|" + deref(j.Type),
		fmt.Sprintf("Priority|%d", derefInt(j.Priority)),
		"Datacenters|" + strings.Join(j.Datacenters, ","),
		"Namespace|" + deref(j.Namespace),
		"Node Pool|" + deref(j.NodePool),
		"Status|" + jobStatus(j),
		fmt.Sprintf("Periodic|%t", j.IsPeriodic()),
		fmt.Sprintf("Parameterized|%t", j.IsParameterized()),
	}
	if j.IsPeriodic() {
		next, err := nextLaunch(j.Periodic, d.meta.now())
		val := ""
		switch {
		case err != nil:
			val = "invalid schedule: " + err.Error()
		case !next.IsZero():
			val = fmt.Sprintf("%s (%s from now)", formatTime(next), next.Sub(d.meta.now()).Round(time.Second))
		}
		rows = append(rows, "Next Periodic Launch|"+val)
	}
	return rows
}

// jobStatus shows a stopped job that is still winding down as such.
func jobStatus(j *api.Job) string {
	s := deref(j.Status)
	if j.Stop != nil && *j.Stop && s != api.JobStatusDead {
		return s + " (stopped)"
	}
	return s
}

// printChildren shows the children of a periodic or parameterized job.
func (d *jobDetail) printChildren(id string) int {
	ui := d.meta.Ui
	summary, _, err := d.client.Jobs().Summary(id, d.meta.query())
	if err != nil {
		ui.Error(fmt.Sprintf("Error querying job summary: %s", d.meta.describe(err)))
		return 1
	}
	if summary.Children != nil {
		ui.Output("\nChildren Job Summary")
		ui.Output(formatList([]string{"Pending|Running|Dead",
			fmt.Sprintf("%d|%d|%d", summary.Children.Pending, summary.Children.Running, summary.Children.Dead)}))
	}
	q := d.meta.query()
	q.Prefix = id + "/"
	jobs, _, err := d.client.Jobs().List(q)
	if err != nil {
		ui.Error(fmt.Sprintf("Error querying child jobs: %s", d.meta.describe(err)))
		return 1
	}
	var children []*api.JobListStub
	for _, j := range jobs {
		if j.ParentID == id {
			children = append(children, j)
		}
	}
	title := "Previously Launched Jobs"
	if d.job.IsParameterized() {
		title = "Dispatched Jobs"
	}
	ui.Output("\n" + title)
	if len(children) == 0 {
		ui.Output("No instances of the job")
		return 0
	}
	sort.Slice(children, func(i, k int) bool { return children[i].SubmitTime > children[k].SubmitTime })
	rows := []string{"ID|Status"}
	for _, j := range children {
		rows = append(rows, j.ID+"|"+j.Status)
	}
	ui.Output(formatList(rows))
	return 0
}

// formatSummary renders the per-group allocation counts.
func formatSummary(s *api.JobSummary) string {
	rows := []string{"Task Group|Queued|Starting|Running|Failed|Complete|Lost|Unknown"}
	for _, tg := range sortedKeys(s.Summary) {
		c := s.Summary[tg]
		rows = append(rows, fmt.Sprintf("%s|%d|%d|%d|%d|%d|%d|%d", tg, c.Queued, c.Starting, c.Running, c.Failed, c.Complete, c.Lost, c.Unknown))
	}
	return formatList(rows)
}

// blockingFailures returns the evaluation whose placement failures still
// hold the job back: the one that created the job's blocked evaluation,
// or, failing that, the newest evaluation if it has failures.
func blockingFailures(evals []*api.Evaluation) *api.Evaluation {
	var blocked *api.Evaluation
	var newest *api.Evaluation
	for _, e := range evals {
		if e.Status == api.EvalStatusBlocked {
			blocked = e
		}
		if newest == nil || e.CreateIndex > newest.CreateIndex {
			newest = e
		}
	}
	if blocked != nil {
		for _, e := range evals {
			if e.BlockedEval == blocked.ID && len(e.FailedTGAllocs) > 0 {
				return e
			}
		}
		if len(blocked.FailedTGAllocs) > 0 {
			return blocked
		}
	}
	if newest != nil && len(newest.FailedTGAllocs) > 0 && newest.Status != api.EvalStatusCanceled {
		return newest
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(i *int) int {
	if i == nil {
		return 0
	}
	return *i
}

func derefInt64(i *int64) int64 {
	if i == nil {
		return 0
	}
	return *i
}
