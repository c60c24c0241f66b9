package drainer

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// passPlan is what one pass decided: the writes to make and when to look
// again if nothing changes meanwhile.
type passPlan struct {
	// marks are the allocs to mark for migration, in decision order.
	marks []*structs.Allocation
	// reevaluate lists jobs that need a node-drain eval without new
	// marks: allocs marked before their node's drain began (by a drain
	// since canceled, or an operator's stop) that no eval has acted on
	// while the node drains.
	reevaluate []structs.NamespacedID
	// jobs holds, for every job with a marked alloc or to reevaluate,
	// the job to evaluate.
	jobs map[structs.NamespacedID]*structs.Job
	// complete lists the nodes whose drain is done, by ID.
	complete []string
	// wakeAt is the earliest deadline still ahead, or the earliest time
	// an alloc the pass waits on may turn healthy; zero when only a
	// change in state can change the decisions.
	wakeAt time.Time
}

func (p *passPlan) wakeBy(t time.Time) {
	if !t.IsZero() && (p.wakeAt.IsZero() || t.Before(p.wakeAt)) {
		p.wakeAt = t
	}
}

func (p *passPlan) mark(a *structs.Allocation, job *structs.Job) {
	p.marks = append(p.marks, a)
	k := a.NamespacedJobID()
	if _, ok := p.jobs[k]; !ok {
		p.jobs[k] = job
	}
}

// groupKey names one task group of one job.
type groupKey struct {
	namespace, job, group string
}

// planPass decides one pass over store at now (see the package doc for
// the rules), registering in ws every read whose change may change the
// decisions. It writes nothing.
func planPass(store *state.StateStore, ws memdb.WatchSet, now time.Time) (*passPlan, error) {
	p := &passPlan{jobs: map[structs.NamespacedID]*structs.Job{}}
	nodes, err := store.NodesByDrain(ws, true)
	if err != nil {
		return nil, fmt.Errorf("drainer: listing draining nodes: %w", err)
	}
	// Service allocs waiting for their group's budget, per group.
	waiting := map[groupKey][]*structs.Allocation{}
	// Per job with marked allocs the scheduler has not stopped yet, the
	// latest start of the drains of their nodes.
	awaiting := map[structs.NamespacedID]int64{}
	for _, n := range nodes {
		allocs, err := store.AllocsByNode(ws, n.ID)
		if err != nil {
			return nil, fmt.Errorf("drainer: node %q: listing allocs: %w", n.ID, err)
		}
		forced := deadlinePassed(n.DrainStrategy, now, p)
		others := 0 // non-system allocs holding the drain
		var system []*structs.Allocation
		for _, a := range allocs {
			if !structs.AllocHoldsDrain(n, a) {
				continue
			}
			if a.Job.IsSystemLike() {
				system = append(system, a)
				continue
			}
			others++
			if !markable(a) {
				if a.DesiredTransition.ShouldMigrate() && !a.ServerTerminalStatus() {
					k := a.NamespacedJobID()
					awaiting[k] = max(awaiting[k], n.DrainStrategy.StartedAt.UnixNano())
				}
				continue
			}
			switch {
			case forced:
				p.mark(a, a.Job)
			case a.Job != nil && a.Job.Type == structs.JobTypeBatch:
				// Left to finish until the deadline.
			default:
				k := groupKey{a.Namespace, a.JobID, a.TaskGroup}
				waiting[k] = append(waiting[k], a)
			}
		}
		if others == 0 && len(system) == 0 {
			p.complete = append(p.complete, n.ID)
			continue
		}
		// System allocs go last: at the deadline, or once nothing else
		// holds the drain.
		if forced || others == 0 {
			for _, a := range system {
				if markable(a) {
					p.mark(a, a.Job)
				}
			}
		}
	}

	keys := make([]groupKey, 0, len(waiting))
	for k := range waiting {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.job, b.job), cmp.Compare(a.group, b.group))
	})
	for _, k := range keys {
		if err := planGroup(store, ws, now, k, waiting[k], p); err != nil {
			return nil, err
		}
	}
	if err := planReevaluations(store, awaiting, p); err != nil {
		return nil, err
	}
	// Marked allocs are evaluated under the job as it is now.
	for k, j := range p.jobs {
		cur, err := store.JobByID(nil, k.Namespace, k.ID)
		if err != nil {
			return nil, fmt.Errorf("drainer: job %q: %w", k.ID, err)
		}
		if cur != nil {
			p.jobs[k] = cur
		} else if j == nil {
			p.jobs[k] = &structs.Job{ID: k.ID, Namespace: k.Namespace, Type: structs.JobTypeService, Priority: structs.JobDefaultPriority}
		}
	}
	return p, nil
}

// planReevaluations asks for an eval of every job with allocs marked for
// migration but still running on a draining node, unless one of its evals
// was created after the drain began (it saw the drain; if it could not
// place the replacements, a blocked eval waits for room). This catches
// marks made before the drain, which the scheduler ignored on a node
// that was not draining then.
func planReevaluations(store *state.StateStore, awaiting map[structs.NamespacedID]int64, p *passPlan) error {
	for k, since := range awaiting {
		if _, marking := p.jobs[k]; marking {
			continue // the new marks bring an eval
		}
		evals, err := store.EvalsByJob(nil, k.Namespace, k.ID)
		if err != nil {
			return fmt.Errorf("drainer: job %q: listing evals: %w", k.ID, err)
		}
		if slices.ContainsFunc(evals, func(e *structs.Evaluation) bool { return e.CreateTime >= since }) {
			continue
		}
		p.reevaluate = append(p.reevaluate, k)
		p.jobs[k] = nil
	}
	slices.SortFunc(p.reevaluate, func(a, b structs.NamespacedID) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.ID, b.ID))
	})
	return nil
}

// deadlinePassed reports whether the drain must stop everything now, and
// otherwise asks p to wake at the deadline.
func deadlinePassed(d *structs.DrainStrategy, now time.Time, p *passPlan) bool {
	infinite, deadline := d.DeadlineTime()
	if !infinite && deadline.IsZero() && d.Deadline > 0 {
		// A writer that did not set ForceDeadline: count from the start;
		// without a start there is no deadline to hold to.
		if d.StartedAt.IsZero() {
			return false
		}
		deadline = d.StartedAt.Add(d.Deadline)
	}
	switch {
	case d.Deadline < 0:
		return true
	case infinite:
		return false
	case !now.Before(deadline):
		return true
	default:
		p.wakeBy(deadline)
		return false
	}
}

// markable reports whether marking the alloc could change anything: it is
// not marked yet and the servers have not already told it to stop.
func markable(a *structs.Allocation) bool {
	return !a.DesiredTransition.ShouldMigrate() && !a.ServerTerminalStatus()
}

// planGroup marks as many of a service group's waiting allocs as its
// migration budget allows.
func planGroup(store *state.StateStore, ws memdb.WatchSet, now time.Time, k groupKey, waiting []*structs.Allocation, p *passPlan) error {
	job, err := store.JobByID(ws, k.namespace, k.job)
	if err != nil {
		return fmt.Errorf("drainer: job %q: %w", k.job, err)
	}
	tg := job.LookupTaskGroup(k.group)
	if job.Stopped() || tg == nil {
		for _, a := range waiting {
			p.mark(a, job)
		}
		return nil
	}
	allocs, err := store.AllocsByJob(ws, k.namespace, k.job, false)
	if err != nil {
		return fmt.Errorf("drainer: job %q: listing allocs: %w", k.job, err)
	}
	healthy := 0
	for _, a := range allocs {
		if a.TaskGroup != k.group || a.TerminalStatus() || a.DesiredTransition.ShouldMigrate() {
			continue
		}
		ok, recheck := migrationHealthy(a, tg, now)
		if ok {
			healthy++
		}
		p.wakeBy(recheck)
	}
	maxParallel := structs.DefaultMigrateStrategy().MaxParallel
	if tg.Migrate != nil {
		maxParallel = tg.Migrate.MaxParallel
	}
	budget := maxParallel - max(0, tg.Count-healthy)
	if budget <= 0 {
		return nil
	}
	// Nodes in ID order, then the group's instances in index order.
	slices.SortStableFunc(waiting, func(a, b *structs.Allocation) int {
		return cmp.Or(cmp.Compare(a.NodeID, b.NodeID), cmp.Compare(a.Index(), b.Index()), cmp.Compare(a.ID, b.ID))
	})
	for _, a := range waiting[:min(budget, len(waiting))] {
		p.mark(a, job)
	}
	return nil
}

// migrationHealthy reports whether an alloc serves its group healthily as
// far as migrations go: reported healthy, or found healthy from its task
// states under the group's migrate block. When the verdict is still
// pending, recheck is when it may change by the clock alone.
func migrationHealthy(a *structs.Allocation, tg *structs.TaskGroup, now time.Time) (ok bool, recheck time.Time) {
	switch {
	case a.DeploymentStatus.IsHealthy():
		return true, time.Time{}
	case a.DeploymentStatus.IsUnhealthy():
		return false, time.Time{}
	}
	check := tg.Migrate.AllocHealthCheck(time.Unix(0, a.CreateTime))
	if a.CreateTime == 0 {
		check.Since = time.Time{}
	}
	h := structs.TaskStatesHealth(a, tg, check, now)
	switch h.Status {
	case structs.AllocHealthHealthy:
		return true, time.Time{}
	case structs.AllocHealthPending:
		return false, h.At
	default:
		return false, time.Time{}
	}
}
