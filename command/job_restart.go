package command

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opennomad/nomad/api"
)

// JobRestartCommand restarts the allocations of a job in batches: in
// place (the client restarts the tasks) or, with -reschedule, by stopping
// each allocation and waiting for the replacement the scheduler places.
type JobRestartCommand struct {
	Meta
}

// Help implements cli.Command.
func (c *JobRestartCommand) Help() string {
	return strings.TrimSpace(`
Usage: nomad job restart [options] <job>

  Restart or reschedule the allocations of a running job, in batches.

  By default the tasks of each allocation are restarted in place by their
  client (the running ones, or those -task names, or with -all-tasks all
  of them), and the command waits until they run again before going on.
  With -reschedule each allocation is stopped instead and the command
  waits until the scheduler's replacement runs.
  -group and -task choose the allocations (and tasks) to restart.

  Between batches the command waits -batch-wait, or asks with
  -batch-wait=ask. When a restart fails it asks whether to go on, unless
  -on-error=fail or -yes.

  When ACLs are enabled, this command needs the 'alloc-lifecycle' and
  'read-job' capabilities in the job's namespace.

` + generalOptionsUsage() + `

Restart Options:

  -all-tasks
    Restart every task of the allocations, also those that already ran.
    Cannot be used with -task.

  -batch-size=<n|n%>
    How many allocations to restart at once, or that percentage of them
    (at least one). Default = 1

  -batch-wait=<duration|ask>
    How long to wait between batches, or "ask" to ask before each one.
    Default = 0s

  -group=<name>
    Restart only the allocations of this task group; repeat for several.

  -no-shutdown-delay
    With -reschedule, skip the group's and tasks' shutdown_delay.

  -on-error=<ask|fail>
    What to do when an allocation fails to restart: ask whether to go on,
    or stop with exit code 1. Default = ask

  -reschedule
    Stop the allocations so the scheduler replaces them, instead of
    restarting them in place. Cannot be used with -task or -all-tasks.

  -task=<name>
    Restart only this task of the allocations that have it; repeat for
    several.

  -verbose
    Show full IDs.

  -yes
    Answer yes to every question.
`)
}

// Synopsis implements cli.Command.
func (c *JobRestartCommand) Synopsis() string { return "Restart or reschedule allocations for a job" }

// restartPlan is what the flags ask for.
type restartPlan struct {
	allTasks, reschedule, noShutdownDelay, verbose, yes bool
	groups, tasks                                       []string
	batchSize                                           int
	batchPercent                                        bool
	batchWait                                           time.Duration
	askBetween                                          bool
	failOnError                                         bool
}

// Run implements cli.Command.
func (c *JobRestartCommand) Run(args []string) int {
	const name = "job restart"
	var p restartPlan
	var groups, tasks stringSlice
	var batchSize, batchWait, onError string
	fs := c.flagSet(name, flagsClient)
	fs.BoolVar(&p.allTasks, "all-tasks", false, "")
	fs.BoolVar(&p.reschedule, "reschedule", false, "")
	fs.BoolVar(&p.noShutdownDelay, "no-shutdown-delay", false, "")
	fs.BoolVar(&p.verbose, "verbose", false, "")
	fs.BoolVar(&p.yes, "yes", false, "")
	fs.Var(&groups, "group", "")
	fs.Var(&tasks, "task", "")
	fs.StringVar(&batchSize, "batch-size", "1", "")
	fs.StringVar(&batchWait, "batch-wait", "0s", "")
	fs.StringVar(&onError, "on-error", "ask", "")
	if !c.parseArgs(fs, args, "<job>") {
		return 1
	}
	p.groups, p.tasks = groups, tasks
	if problem := p.parse(batchSize, batchWait, onError); problem != "" {
		return c.usageError(name, problem)
	}
	client, ok := c.clientOrError()
	if !ok {
		return 1
	}
	id, err := resolveJobID(&c.Meta, client, strings.TrimSpace(fs.Arg(0)))
	if err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	job, _, err := client.Jobs().Info(id, c.query())
	if c.callFailed(err, "retrieving job") {
		return 1
	}
	if err := p.check(job); err != nil {
		c.Ui.Error(err.Error())
		return 1
	}
	stubs, _, err := client.Jobs().Allocations(id, false, c.query())
	if c.callFailed(err, "retrieving allocations") {
		return 1
	}
	targets := p.targets(job, stubs)
	if len(targets) == 0 {
		c.Ui.Output(fmt.Sprintf("No allocations of job %q to restart", id))
		return 0
	}
	return (&jobRestart{meta: &c.Meta, client: client, plan: p, length: idLength(p.verbose)}).run(targets)
}

// parse reads the flags that are not plain booleans and returns a usage
// problem, or "".
func (p *restartPlan) parse(batchSize, batchWait, onError string) string {
	switch {
	case p.allTasks && len(p.tasks) > 0:
		return "The -all-tasks option cannot be used with -task"
	case p.reschedule && (p.allTasks || len(p.tasks) > 0):
		return "The -reschedule option cannot be used with -task or -all-tasks"
	case p.noShutdownDelay && !p.reschedule:
		return "The -no-shutdown-delay option can only be used with -reschedule"
	}
	size := strings.TrimSuffix(batchSize, "%")
	p.batchPercent = size != batchSize
	n, err := strconv.Atoi(size)
	if err != nil || n < 1 || (p.batchPercent && n > 100) {
		return fmt.Sprintf("Invalid -batch-size %q: must be a positive number or a percentage from 1%% to 100%%", batchSize)
	}
	p.batchSize = n
	if batchWait == "ask" {
		p.askBetween = true
	} else if d, err := time.ParseDuration(batchWait); err != nil || d < 0 {
		return fmt.Sprintf("Invalid -batch-wait %q: must be a duration or \"ask\"", batchWait)
	} else {
		p.batchWait = d
	}
	switch onError {
	case "ask":
	case "fail":
		p.failOnError = true
	default:
		return fmt.Sprintf("Invalid -on-error %q: must be \"ask\" or \"fail\"", onError)
	}
	return ""
}

// check refuses groups and tasks the job does not have, and rescheduling
// a sysbatch job (whose stopped allocations are never replaced).
func (p *restartPlan) check(job *api.Job) error {
	id := deref(job.ID)
	if p.reschedule && deref(job.Type) == "sysbatch" {
		return fmt.Errorf("Job %q is a sysbatch job: its allocations cannot be rescheduled", id)
	}
	groups := map[string]*api.TaskGroup{}
	for _, tg := range job.TaskGroups {
		groups[deref(tg.Name)] = tg
	}
	for _, g := range p.groups {
		if groups[g] == nil {
			return fmt.Errorf("Job %q has no task group %q", id, g)
		}
	}
	for _, t := range p.tasks {
		found := false
		for name, tg := range groups {
			if len(p.groups) > 0 && !slices.Contains(p.groups, name) {
				continue
			}
			for _, task := range tg.Tasks {
				found = found || task.Name == t
			}
		}
		if !found {
			return fmt.Errorf("Job %q has no task %q in the chosen groups", id, t)
		}
	}
	return nil
}

// targets are the allocations to restart, oldest first: those the job
// still wants, in the chosen groups, that have one of the chosen tasks;
// in place only running ones (a pending allocation has nothing to
// restart yet).
func (p *restartPlan) targets(job *api.Job, stubs []*api.AllocationListStub) []*api.AllocationListStub {
	tasksOf := map[string][]string{}
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			tasksOf[deref(tg.Name)] = append(tasksOf[deref(tg.Name)], t.Name)
		}
	}
	var out []*api.AllocationListStub
	for _, a := range stubs {
		switch {
		case a.DesiredStatus != "run":
		case a.ClientStatus != "running" && (!p.reschedule || a.ClientStatus != "pending"):
		case len(p.groups) > 0 && !slices.Contains(p.groups, a.TaskGroup):
		case len(p.tasks) > 0 && !slices.ContainsFunc(p.tasks, func(t string) bool { return slices.Contains(tasksOf[a.TaskGroup], t) }):
		default:
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreateIndex != out[j].CreateIndex {
			return out[i].CreateIndex < out[j].CreateIndex
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// size is the number of allocations per batch out of total.
func (p *restartPlan) size(total int) int {
	if !p.batchPercent {
		return p.batchSize
	}
	return max(1, total*p.batchSize/100)
}

// jobRestart runs one restart: batches, progress lines and questions.
type jobRestart struct {
	meta   *Meta
	client *api.Client
	plan   restartPlan
	length int
}

// errRestartStopped is the answer "no" to "go on?".
var errRestartStopped = errors.New("job restart stopped by the user")

// run restarts the targets batch by batch and returns the exit code.
func (r *jobRestart) run(targets []*api.AllocationListStub) int {
	verb := "Restarting"
	if r.plan.reschedule {
		verb = "Rescheduling"
	}
	size := r.plan.size(len(targets))
	r.header("%s %s in batches of %d", verb, plural(len(targets), "allocation"), size)
	failed := false
	for start := 0; start < len(targets); start += size {
		if start > 0 {
			if err := r.betweenBatches(); err != nil {
				r.meta.Ui.Error(err.Error())
				return 1
			}
		}
		batch := targets[start:min(start+size, len(targets))]
		for _, a := range batch {
			r.line("%s allocation %q", verb, limit(a.ID, r.length))
		}
		notes, errs := r.restartBatch(batch)
		batchFailed := false
		for i, err := range errs {
			if err == nil {
				if notes[i] != "" {
					r.line("%s", notes[i])
				}
				continue
			}
			failed, batchFailed = true, true
			r.meta.Ui.Error(fmt.Sprintf("    %s: Error restarting allocation %q: %s",
				formatTime(r.meta.now()), limit(batch[i].ID, r.length), r.meta.describe(err)))
		}
		if batchFailed && start+size < len(targets) {
			if r.plan.failOnError || !r.goOn("Restarting an allocation failed. Continue with the remaining allocations? [y/N]") {
				r.meta.Ui.Error("Job restart stopped: an allocation failed to restart")
				return 1
			}
		}
	}
	r.header("Finished job restart")
	if failed {
		r.meta.Ui.Error("\nSome allocations failed to restart")
		return 1
	}
	r.meta.Ui.Output("\nAll allocations restarted successfully!")
	return 0
}

// betweenBatches waits -batch-wait or asks.
func (r *jobRestart) betweenBatches() error {
	if r.plan.askBetween {
		if !r.goOn("Proceed with the next batch? [y/N]") {
			return errRestartStopped
		}
		return nil
	}
	if r.plan.batchWait > 0 {
		r.header("Waiting %s before restarting the next batch", r.plan.batchWait)
		if err := sleepCtx(r.meta.ctx(), r.plan.batchWait); err != nil {
			return fmt.Errorf("job restart stopped: %w", err)
		}
	}
	return nil
}

// goOn asks a yes/no question, answered yes by -yes.
func (r *jobRestart) goOn(question string) bool {
	return r.plan.yes || confirm(r.meta, question)
}

// restartBatch restarts the batch's allocations at once and returns what
// to report of each (printed afterwards, in order) and each one's error.
func (r *jobRestart) restartBatch(batch []*api.AllocationListStub) ([]string, []error) {
	notes := make([]string, len(batch))
	errs := make([]error, len(batch))
	var wg sync.WaitGroup
	for i, a := range batch {
		wg.Go(func() {
			if r.plan.reschedule {
				notes[i], errs[i] = r.reschedule(a)
			} else {
				errs[i] = r.restartInPlace(a)
			}
		})
	}
	wg.Wait()
	return notes, errs
}

// restartInPlace asks the allocation's client to restart its tasks, then
// waits until each chosen task that was running has restarted and runs
// again.
func (r *jobRestart) restartInPlace(stub *api.AllocationListStub) error {
	alloc, _, err := r.client.Allocations().Info(stub.ID, r.meta.query())
	if err != nil {
		return err
	}
	// The restart counts of the tasks to wait for, before the restart.
	before := map[string]uint64{}
	for task, st := range alloc.TaskStates {
		if st != nil && st.State == "running" && (len(r.plan.tasks) == 0 || slices.Contains(r.plan.tasks, task)) {
			before[task] = st.Restarts
		}
	}
	if err := r.requestRestart(alloc); err != nil {
		return err
	}
	_, err = r.waitAlloc(alloc.ID, func(a *api.Allocation) (bool, error) {
		switch a.ClientStatus {
		case "complete", "failed", "lost":
			return false, fmt.Errorf("allocation is %s", a.ClientStatus)
		}
		for task, n := range before {
			st := a.TaskStates[task]
			if st == nil || st.Restarts <= n || st.State != "running" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the tasks to run again: %w", err)
	}
	return nil
}

// requestRestart makes the restart calls the flags ask for.
func (r *jobRestart) requestRestart(alloc *api.Allocation) error {
	q := r.meta.query()
	switch {
	case r.plan.allTasks:
		return r.client.Allocations().RestartAllTasks(alloc, q)
	case len(r.plan.tasks) == 0:
		return r.client.Allocations().Restart(alloc, "", q)
	}
	for _, task := range r.plan.tasks {
		if _, has := alloc.TaskStates[task]; !has && !groupHasTask(alloc, task) {
			continue
		}
		if err := r.client.Allocations().Restart(alloc, task, q); err != nil {
			return fmt.Errorf("task %q: %w", task, err)
		}
	}
	return nil
}

// groupHasTask reports whether the allocation's group runs the task.
func groupHasTask(alloc *api.Allocation, task string) bool {
	if alloc.Job == nil {
		return false
	}
	for _, tg := range alloc.Job.TaskGroups {
		if deref(tg.Name) != alloc.TaskGroup {
			continue
		}
		for _, t := range tg.Tasks {
			if t.Name == task {
				return true
			}
		}
	}
	return false
}

// reschedule stops the allocation and waits until its replacement runs;
// it returns the line that says which allocation replaced it.
func (r *jobRestart) reschedule(stub *api.AllocationListStub) (string, error) {
	w := r.meta.write()
	if r.plan.noShutdownDelay {
		w.Params = map[string]string{"no_shutdown_delay": "true"}
	}
	if _, _, err := r.client.Allocations().Stop(stub.ID, w); err != nil {
		return "", err
	}
	next, err := r.waitAlloc(stub.ID, func(a *api.Allocation) (bool, error) { return a.NextAllocation != "", nil })
	if err != nil {
		return "", fmt.Errorf("waiting for a replacement: %w", err)
	}
	_, err = r.waitAlloc(next.NextAllocation, func(a *api.Allocation) (bool, error) {
		switch a.ClientStatus {
		case "running":
			return true, nil
		case "failed", "lost", "complete":
			return false, fmt.Errorf("replacement %q is %s", limit(a.ID, r.length), a.ClientStatus)
		}
		return false, nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Allocation %q replaced by %q", limit(stub.ID, r.length), limit(next.NextAllocation, r.length)), nil
}

// waitAlloc follows an allocation with blocking queries until done says
// so (or fails), or the command is interrupted.
func (r *jobRestart) waitAlloc(id string, done func(*api.Allocation) (bool, error)) (*api.Allocation, error) {
	var index uint64
	for {
		q := r.meta.query()
		q.WaitIndex, q.WaitTime = index, r.meta.monitorWait()
		a, qm, err := r.client.Allocations().Info(id, q)
		if err != nil {
			return nil, err
		}
		ok, err := done(a)
		if err != nil || ok {
			return a, err
		}
		if err := pollPause(r.meta, qm, index, q.WaitTime); err != nil {
			return nil, err
		}
		index = max(index, qm.LastIndex)
	}
}

// header prints a "==> <time>: ..." progress line.
func (r *jobRestart) header(format string, args ...any) {
	r.meta.Ui.Output(fmt.Sprintf("==> %s: %s", formatTime(r.meta.now()), fmt.Sprintf(format, args...)))
}

// line prints an indented "<time>: ..." progress line.
func (r *jobRestart) line(format string, args ...any) {
	r.meta.Ui.Output(fmt.Sprintf("    %s: %s", formatTime(r.meta.now()), fmt.Sprintf(format, args...)))
}
