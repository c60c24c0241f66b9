package command

import (
	"fmt"
	"sort"
	"time"

	"github.com/opennomad/nomad/api"
)

// drainMonitorGrace is how long after a drain's deadline the monitor keeps
// waiting: at the deadline the servers stop what is left, and the clients
// need a moment to report it.
const drainMonitorGrace = time.Minute

// drainMonitor follows a node drain until the servers report it complete,
// printing each allocation's progress: marked for migration, stopping, its
// client status changes. It waits with blocking queries on the node's
// allocations and re-reads the node after each wake-up.
type drainMonitor struct {
	meta   *Meta
	client *api.Client
	nodeID string
	length int
	// ignoreSystem leaves system allocations out of "all stopped".
	ignoreSystem bool
	// until is when the monitor gives up; zero means never (no deadline).
	until time.Time
}

// newDrainMonitor prepares to follow the drain of node. justSet says the
// drain was set a moment ago: its deadline then counts from the local
// clock, which spares the monitor any skew between this machine and the
// servers. An older drain is judged by the servers' ForceDeadline.
func newDrainMonitor(m *Meta, c *api.Client, node *api.Node, length int, justSet bool) *drainMonitor {
	dm := &drainMonitor{meta: m, client: c, nodeID: node.ID, length: length}
	if ds := node.DrainStrategy; ds != nil {
		dm.ignoreSystem = ds.IgnoreSystemJobs
		switch {
		case ds.Deadline < 0:
			dm.until = m.now().Add(drainMonitorGrace)
		case ds.Deadline > 0 && (justSet || ds.ForceDeadline.IsZero()):
			dm.until = m.now().Add(ds.Deadline + drainMonitorGrace)
		case ds.Deadline > 0:
			dm.until = ds.ForceDeadline.Add(drainMonitorGrace)
		}
	}
	return dm
}

// allocDrainView is what the monitor last saw of one allocation.
type allocDrainView struct {
	migrate bool
	desired string
	client  string
}

// run follows the drain and returns the exit code.
func (d *drainMonitor) run() int {
	id := limit(d.nodeID, d.length)
	d.line("Ctrl-C to stop monitoring: will not cancel the node drain")
	seen := map[string]allocDrainView{}
	allStopped := false
	var index uint64
	for {
		q := d.meta.query()
		q.WaitIndex, q.WaitTime = index, d.wait()
		allocs, qm, err := d.client.Nodes().Allocations(d.nodeID, q)
		if err != nil {
			return d.fail(err)
		}
		sort.Slice(allocs, func(i, j int) bool { return allocs[i].ID < allocs[j].ID })
		remaining := 0
		for _, a := range allocs {
			d.report(a, seen)
			// An allocation has left once its client says it stopped; a
			// desired stop alone only means it is on its way out.
			if !clientTerminal(a.ClientStatus) && !(d.ignoreSystem && isSystemAlloc(a)) {
				remaining++
			}
		}
		if remaining == 0 && !allStopped {
			allStopped = true
			d.line(fmt.Sprintf("All allocations on node %q have stopped", id))
		}

		node, _, err := d.client.Nodes().Info(d.nodeID, d.meta.query())
		if err != nil {
			return d.fail(err)
		}
		if node.DrainStrategy == nil {
			if node.LastDrain != nil && node.LastDrain.Status == api.DrainStatusCanceled {
				d.line(fmt.Sprintf("Node %q drain canceled", id))
				return exitError
			}
			d.line(fmt.Sprintf("Node %q drain complete", id))
			return exitOK
		}
		if !d.until.IsZero() && d.meta.now().After(d.until) {
			d.meta.Ui.Error(fmt.Sprintf("Node %q drain has not completed %s after its deadline; %s still to move. "+
				"The drain goes on: follow it with 'nomad node drain -monitor %s'",
				id, drainMonitorGrace, plural(remaining, "allocation"), d.nodeID))
			return exitError
		}
		if err := pollPause(d.meta, qm, index, d.wait()); err != nil {
			return d.fail(err)
		}
		index = max(index, qm.LastIndex)
	}
}

// report prints what changed for one allocation.
func (d *drainMonitor) report(a *api.Allocation, seen map[string]allocDrainView) {
	id := limit(a.ID, d.length)
	now := allocDrainView{
		migrate: a.DesiredTransition.Migrate != nil && *a.DesiredTransition.Migrate,
		desired: a.DesiredStatus,
		client:  a.ClientStatus,
	}
	prev, known := seen[a.ID]
	seen[a.ID] = now
	if !known {
		// At first sight only a migration in progress is news; allocations
		// that stopped before the drain are history.
		if now.migrate {
			d.line(fmt.Sprintf("Alloc %q marked for migration", id))
			if now.desired != api.AllocDesiredStatusRun {
				d.line(fmt.Sprintf("Alloc %q draining", id))
			}
		}
		return
	}
	if now.migrate && !prev.migrate {
		d.line(fmt.Sprintf("Alloc %q marked for migration", id))
	}
	if now.desired != api.AllocDesiredStatusRun && now.desired != prev.desired {
		d.line(fmt.Sprintf("Alloc %q draining", id))
	}
	if now.client != prev.client {
		d.line(fmt.Sprintf("Alloc %q status %s -> %s", id, prev.client, now.client))
	}
}

// wait bounds the next blocking query so the deadline check runs in time.
func (d *drainMonitor) wait() time.Duration {
	w := d.meta.monitorWait()
	if !d.until.IsZero() {
		if left := d.until.Sub(d.meta.now()); left > 0 && left < w {
			w = left
		}
	}
	return w
}

func (d *drainMonitor) fail(err error) int {
	if d.meta.ctx().Err() != nil {
		d.line("Monitoring stopped; the drain goes on")
		return exitError
	}
	d.meta.Ui.Error(fmt.Sprintf("Error monitoring drain of node %q: %s", limit(d.nodeID, d.length), d.meta.describe(err)))
	return exitError
}

func (d *drainMonitor) line(msg string) {
	d.meta.Ui.Output(fmt.Sprintf("%s: %s", formatTime(d.meta.now()), msg))
}

// clientTerminal reports whether a client status is final.
func clientTerminal(status string) bool {
	switch status {
	case api.AllocClientStatusComplete, api.AllocClientStatusFailed, api.AllocClientStatusLost:
		return true
	}
	return false
}

// isSystemAlloc reports whether the allocation belongs to a system job,
// which a drain with -ignore-system leaves in place.
func isSystemAlloc(a *api.Allocation) bool {
	return a.Job != nil && a.Job.Type != nil && *a.Job.Type == api.JobTypeSystem
}
