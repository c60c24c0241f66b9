package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/cronexpr"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// JobRunCommand registers a job and follows the evaluation it causes.
type JobRunCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobRunCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job run [options] <path>
Alias: nomad run

  Register (create or update) the job in the file at <path> and follow
  the evaluation the servers create for it. Use "-" to read the job from
  standard input.

  Until the evaluation finishes, every change is printed: the allocations
  it places and their status. If some allocations could not be placed,
  each task group's reasons are listed (constraints that filtered nodes
  out, resources exhausted, datacenters without nodes) followed by a
  one-line diagnosis, and the evaluation that waits for capacity is named.

  Periodic and parameterized jobs create no evaluation at registration;
  for them the command prints the next launch time or how to dispatch.

  Exit codes:
    0  the job was registered and everything was placed (or -detach)
    1  an error: bad input, the agent refused the job, a failed evaluation
    2  the job was registered but some allocations could not be placed

` + generalOptionsUsage() + `

Run Options:

  -check-index=<index>
    Register only if the job's modify index on the server is <index>
    (check-and-set). 0 means the job must not exist yet. 'nomad job plan'
    prints the index to use.

  -detach
    Return after registering, printing the evaluation ID, instead of
    following the evaluation.

  -eval-priority=<1-100>
    Priority of the evaluation this registration creates; defaults to the
    job's priority.

  -output
    Print the JSON that would be sent to the API ({"Job": ...}) and exit
    without registering.

  -policy-override
    Override a soft mandatory policy.

  -preserve-counts
    Keep the counts of the task groups that already exist on the server
    instead of the counts in the file.

  -preserve-resources
    Keep the resources of the tasks that already exist on the server.

  -verbose
    Show full IDs.
` + jobSourceUsage)
}

// Synopsis implements cli.Command.
func (c *JobRunCommand) Synopsis() string { return "Run a new job or update an existing job" }

// Run implements cli.Command.
func (c *JobRunCommand) Run(args []string) int {
	const name = "job run"
	var (
		src                                         jobSource
		checkIndex                                  optionalUint
		detach, verbose, output                     bool
		policyOverride, preserveCounts, preserveRes bool
		evalPriority                                int
	)
	fs := c.flagSet(name, flagsClient)
	src.addFlags(fs)
	fs.Var(&checkIndex, "check-index", "")
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&output, "output", false, "")
	fs.BoolVar(&policyOverride, "policy-override", false, "")
	fs.BoolVar(&preserveCounts, "preserve-counts", false, "")
	fs.BoolVar(&preserveRes, "preserve-resources", false, "")
	fs.IntVar(&evalPriority, "eval-priority", 0, "")
	if !c.parseFlags(fs, args, name) {
		return exitError
	}
	if fs.NArg() != 1 {
		return c.usageError(name, "This command takes one argument: <path>")
	}
	if evalPriority < 0 || evalPriority > 100 {
		return c.usageError(name, fmt.Sprintf("Invalid -eval-priority %d: must be between 1 and 100", evalPriority))
	}

	loaded, err := src.load(&c.Meta, fs.Arg(0))
	if err != nil {
		c.Ui.Error(fmt.Sprintf("Error getting job struct: %s", err))
		return exitError
	}
	job := loaded.job

	if output {
		out, err := json.MarshalIndent(map[string]*api.Job{"Job": job}, "", "    ")
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error encoding job: %s", err))
			return exitError
		}
		c.Ui.Output(string(out))
		return exitOK
	}

	client, ok := c.clientOrError()
	if !ok {
		return exitError
	}
	opts := &api.RegisterOptions{
		PolicyOverride:    policyOverride,
		PreserveCounts:    preserveCounts,
		PreserveResources: preserveRes,
		EvalPriority:      evalPriority,
		Submission:        loaded.submission,
	}
	if checkIndex.set {
		opts.EnforceIndex, opts.ModifyIndex = true, checkIndex.value
	}
	resp, _, err := client.Jobs().RegisterOpts(job, opts, c.write())
	if err != nil {
		c.reportRegisterError(err, checkIndex)
		return exitError
	}

	printWarnings(c.Ui, loaded.warnings, resp.Warnings)

	id := jobID(job)
	switch {
	case job.IsPeriodic() || job.IsParameterized() || resp.EvalID == "":
		c.Ui.Output("Job registration successful")
		c.describeTemplateJob(job, id)
		return exitOK
	case detach:
		c.Ui.Output("Job registration successful")
		c.Ui.Output("Evaluation ID: " + resp.EvalID)
		return exitOK
	}
	mon := newEvalMonitor(&c.Meta, client, verbose)
	code := mon.monitor(resp.EvalID)
	if code != exitOK || mon.deploymentID == "" {
		return code
	}
	// The job rolls out in a deployment: follow it to its end.
	return mon.followDeployment(mon.deploymentID)
}

// reportRegisterError explains a refused registration; a check-index
// mismatch says which index was expected.
func (c *JobRunCommand) reportRegisterError(err error, checkIndex optionalUint) {
	msg := c.describe(err)
	if checkIndex.set && errors.Is(agentErrorKind(err), structs.ErrJobModifyIndex) {
		if checkIndex.value == 0 {
			c.Ui.Error(fmt.Sprintf("Error submitting job: -check-index 0 requires that the job does not exist yet: %s", msg))
			return
		}
		c.Ui.Error(fmt.Sprintf("Error submitting job: the job's modify index is no longer %d (run 'nomad job plan' again): %s",
			checkIndex.value, msg))
		return
	}
	c.Ui.Error(fmt.Sprintf("Error submitting job: %s", msg))
}

// describeTemplateJob tells what happens next for a job that is not run
// at registration: the next periodic launch, or how to dispatch.
func (c *JobRunCommand) describeTemplateJob(job *api.Job, id string) {
	switch {
	case job.IsPeriodic():
		next, err := nextLaunch(job.Periodic, c.now())
		switch {
		case err != nil:
			c.Ui.Warn(fmt.Sprintf("Could not compute the next launch time: %s", err))
		case next.IsZero():
			c.Ui.Output("Approximate next launch time: none (the schedule has no future launch)")
		default:
			c.Ui.Output(fmt.Sprintf("Approximate next launch time: %s (%s from now)",
				formatTime(next), next.Sub(c.now()).Round(time.Second)))
		}
	case job.IsParameterized():
		c.Ui.Output(fmt.Sprintf("Job %q is parameterized; start an instance with 'nomad job dispatch %s'", id, id))
	}
}

// nextLaunch computes the next launch of a periodic job after now, in the
// job's time zone. A disabled schedule has none.
func nextLaunch(p *api.PeriodicConfig, now time.Time) (time.Time, error) {
	if p == nil || (p.Enabled != nil && !*p.Enabled) {
		return time.Time{}, nil
	}
	loc := time.UTC
	if p.TimeZone != nil && *p.TimeZone != "" {
		l, err := time.LoadLocation(*p.TimeZone)
		if err != nil {
			return time.Time{}, fmt.Errorf("time zone %q: %w", *p.TimeZone, err)
		}
		loc = l
	}
	specs := p.Specs
	if p.Spec != nil && *p.Spec != "" {
		specs = append([]string{*p.Spec}, specs...)
	}
	var earliest time.Time
	for _, spec := range specs {
		expr, err := cronexpr.Parse(spec)
		if err != nil {
			return time.Time{}, fmt.Errorf("cron %q: %w", spec, err)
		}
		next := expr.Next(now.In(loc))
		if !next.IsZero() && (earliest.IsZero() || next.Before(earliest)) {
			earliest = next
		}
	}
	return earliest, nil
}

// printWarnings prints the parser's and the server's warnings together
// under one heading.
func printWarnings(ui interface{ Warn(string) }, parse []string, server string) {
	lines := append([]string(nil), parse...)
	for _, l := range strings.Split(strings.TrimSpace(server), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return
	}
	ui.Warn("Job Warnings:\n* " + strings.Join(lines, "\n* ") + "\n")
}
