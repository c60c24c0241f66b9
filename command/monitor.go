package command

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/opennomad/nomad/api"
)

// Exit codes of commands that monitor an evaluation.
const (
	exitOK = 0
	// exitError: the command or the evaluation failed.
	exitError = 1
	// exitPlacementFailures: the evaluation finished but could not place
	// every allocation; scripts tell this apart from errors.
	exitPlacementFailures = 2
)

// defaultMonitorWait bounds each blocking query of a monitor; the server
// answers as soon as something changes, so this only sets how often an
// idle monitor re-asks.
const defaultMonitorWait = 10 * time.Second

// evalMonitor follows an evaluation to its end and prints a line for every
// change it sees, the way `nomad job run` does: the trigger, each
// allocation created or modified, status changes, and at the end either
// success or the placement failures explained group by group. If the
// evaluation has a follow-up (NextEval) it follows that too.
//
// It waits with blocking queries on the evaluation (index/wait), so it
// reacts to a change at once instead of polling every second.
type evalMonitor struct {
	meta   *Meta
	client *api.Client
	length int
	wait   time.Duration
	// deploymentID and jobID are those of the last evaluation followed
	// that was within a deployment.
	deploymentID string
	jobID        string
}

func newEvalMonitor(m *Meta, c *api.Client, verbose bool) *evalMonitor {
	return &evalMonitor{meta: m, client: c, length: idLength(verbose), wait: m.monitorWait()}
}

// evalView is what the monitor has already printed about one evaluation.
type evalView struct {
	status      string
	seenJob     bool
	seenNode    bool
	seenDeploy  bool
	allocStatus map[string]string
}

// monitor follows evalID (and its chain of next evaluations) and returns
// the exit code: 0, 2 when placements failed, 1 on error or a failed eval.
func (m *evalMonitor) monitor(evalID string) int {
	code := exitOK
	for {
		m.info("Monitoring evaluation %q", limit(evalID, m.length))
		ev, err := m.follow(evalID)
		if err != nil {
			if m.meta.ctx().Err() != nil {
				m.info("Monitoring stopped; the evaluation goes on. Check it with 'nomad eval status %s'", evalID)
			} else {
				m.meta.Ui.Error(fmt.Sprintf("Error monitoring evaluation %q: %s", limit(evalID, m.length), m.meta.describe(err)))
			}
			return exitError
		}
		switch c := m.finish(ev); {
		case c == exitError:
			return exitError
		case c == exitPlacementFailures:
			code = exitPlacementFailures
		}
		if ev.NextEval == "" {
			return code
		}
		m.info("Monitoring next evaluation %q in %s", limit(ev.NextEval, m.length), m.nextWait(ev))
		evalID = ev.NextEval
	}
}

// follow watches one evaluation until it is terminal or blocked.
func (m *evalMonitor) follow(evalID string) (*api.Evaluation, error) {
	view := &evalView{allocStatus: map[string]string{}}
	var index uint64
	for {
		q := m.meta.query()
		q.WaitIndex, q.WaitTime = index, m.wait
		ev, qm, err := m.client.Evaluations().Info(evalID, q)
		if err != nil {
			return nil, err
		}
		allocs, _, err := m.client.Evaluations().Allocations(evalID, m.meta.query())
		if err != nil {
			return nil, err
		}
		m.update(view, ev, allocs)
		switch ev.Status {
		case api.EvalStatusComplete, api.EvalStatusFailed, api.EvalStatusCanceled, api.EvalStatusBlocked:
			return ev, nil
		}
		if err := pollPause(m.meta, qm, index, m.wait); err != nil {
			return nil, err
		}
		index = max(index, qm.LastIndex)
	}
}

// update prints what changed since the last look at the evaluation.
func (m *evalMonitor) update(v *evalView, ev *api.Evaluation, allocs []*api.AllocationListStub) {
	if !v.seenNode && ev.NodeID != "" {
		v.seenNode = true
		m.output("Evaluation triggered by node %q", limit(ev.NodeID, m.length))
	}
	if !v.seenJob && ev.JobID != "" {
		v.seenJob = true
		m.output("Evaluation triggered by job %q", ev.JobID)
	}
	if !v.seenDeploy && ev.DeploymentID != "" {
		v.seenDeploy = true
		m.deploymentID, m.jobID = ev.DeploymentID, ev.JobID
		m.output("Evaluation within deployment: %q", limit(ev.DeploymentID, m.length))
	}

	sort.Slice(allocs, func(i, j int) bool {
		if allocs[i].CreateIndex != allocs[j].CreateIndex {
			return allocs[i].CreateIndex < allocs[j].CreateIndex
		}
		return allocs[i].Name < allocs[j].Name
	})
	for _, a := range allocs {
		prev, seen := v.allocStatus[a.ID]
		v.allocStatus[a.ID] = a.ClientStatus
		switch {
		case !seen:
			verb := "created"
			if a.CreateIndex < ev.CreateIndex {
				// The allocation predates this evaluation: it was updated in
				// place or stopped, not placed.
				verb = "modified"
			}
			m.output("Allocation %q %s: node %q, group %q",
				limit(a.ID, m.length), verb, limit(a.NodeID, m.length), a.TaskGroup)
		case prev != a.ClientStatus:
			line := fmt.Sprintf("Allocation %q status changed: %q -> %q", limit(a.ID, m.length), prev, a.ClientStatus)
			if a.ClientDescription != "" {
				line += " (" + a.ClientDescription + ")"
			}
			m.output("%s", line)
		}
	}

	if v.status != "" && v.status != ev.Status {
		m.output("Evaluation status changed: %q -> %q", v.status, ev.Status)
	}
	v.status = ev.Status
}

// finish prints the outcome of a finished (or blocked) evaluation and
// returns its exit code.
func (m *evalMonitor) finish(ev *api.Evaluation) int {
	id := limit(ev.ID, m.length)
	switch {
	case ev.Status == api.EvalStatusFailed:
		m.info("Evaluation %q finished with status %q", id, ev.Status)
		if ev.StatusDescription != "" {
			m.output("Reason: %s", ev.StatusDescription)
		}
		return exitError
	case ev.Status == api.EvalStatusBlocked:
		m.info("Evaluation %q is blocked, waiting for capacity to place:", id)
		m.failedGroups(ev)
		return exitPlacementFailures
	case len(ev.FailedTGAllocs) > 0:
		m.info("Evaluation %q finished with status %q but failed to place all allocations:", id, ev.Status)
		m.failedGroups(ev)
		if ev.BlockedEval != "" {
			m.output("Evaluation %q waiting for additional capacity to place remainder", limit(ev.BlockedEval, m.length))
		}
		return exitPlacementFailures
	}
	m.info("Evaluation %q finished with status %q", id, ev.Status)
	if ev.Status == api.EvalStatusCanceled && ev.StatusDescription != "" {
		m.output("Reason: %s", ev.StatusDescription)
	}
	return exitOK
}

// failedGroups prints each failed group's header with a timestamp and its
// reasons indented beneath it.
func (m *evalMonitor) failedGroups(ev *api.Evaluation) {
	for _, tg := range sortedKeys(ev.FailedTGAllocs) {
		metric := ev.FailedTGAllocs[tg]
		m.output("%s", failedGroupHeader(tg, metric))
		for _, line := range explainMetric(metric) {
			m.meta.Ui.Output("      " + line)
		}
	}
}

// nextWait is how long until the follow-up evaluation is due.
func (m *evalMonitor) nextWait(ev *api.Evaluation) time.Duration {
	if ev.Wait > 0 {
		return ev.Wait
	}
	next, _, err := m.client.Evaluations().Info(ev.NextEval, m.meta.query())
	if err != nil || next.WaitUntil.IsZero() {
		return 0
	}
	return max(0, next.WaitUntil.Sub(m.meta.now()).Round(time.Second))
}

// info prints a headline: "==> <time>: message".
func (m *evalMonitor) info(format string, args ...any) {
	m.meta.Ui.Info(fmt.Sprintf("==> %s: %s", formatTime(m.meta.now()), fmt.Sprintf(format, args...)))
}

// output prints a detail line: "    <time>: message".
func (m *evalMonitor) output(format string, args ...any) {
	m.meta.Ui.Output(fmt.Sprintf("    %s: %s", formatTime(m.meta.now()), fmt.Sprintf(format, args...)))
}

// pollPause guards a blocking-query loop against a server that answers
// at once without progress (one that reports no index, or ignores the
// index parameter): then the loop falls back to polling once a second
// instead of spinning. A server that blocked for the wait and saw no
// change needs no pause.
func pollPause(m *Meta, qm *api.QueryMeta, index uint64, wait time.Duration) error {
	if qm.LastIndex > index || (qm.LastIndex != 0 && qm.RequestTime >= wait/2) {
		return nil
	}
	return sleepCtx(m.ctx(), time.Second)
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
