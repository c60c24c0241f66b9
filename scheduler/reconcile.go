package scheduler

import (
	"cmp"
	"slices"
	"time"

	"github.com/opennomad/nomad/structs"
)

const (
	// allocReconnected describes the stop of a replacement whose original
	// came back from a disconnected node.
	allocReconnected = "alloc not needed due to disconnected client reconnect"
)

// allocUpdateFn decides how an alloc of an older job version reaches the
// current one: ignore (nothing to do), destructive (replace), or an
// in-place update, returning the updated alloc. The scheduler supplies it
// because in-place updates must re-check the node.
type allocUpdateFn func(existing *structs.Allocation, job *structs.Job, tg *structs.TaskGroup) (ignore, destructive bool, updated *structs.Allocation)

// reconcileInput is everything the reconciler decides from. It is a pure
// function of this input: no state reads, no clock.
type reconcileInput struct {
	job          *structs.Job // nil when purged
	jobID        string
	namespace    string
	batch        bool
	evalID       string
	evalPriority int
	now          time.Time
	// allocs are all the job's allocs, terminal or not.
	allocs []*structs.Allocation
	// tainted maps the node of every alloc that sits on a node unable to
	// run it (down, disconnected, draining) to that node; a nil node
	// means it no longer exists.
	tainted map[string]*structs.Node
	// deployment is the job's latest deployment, or nil.
	deployment *structs.Deployment
	update     allocUpdateFn
	// maxFresh bounds the new names one pass asks to place per group
	// (0: DefaultMaxPlacementsPerPass). A count is the job's to choose:
	// the pass's memory must not be.
	maxFresh int
}

// placeRequest asks for one new alloc.
type placeRequest struct {
	name   string
	group  *structs.TaskGroup
	canary bool
	// previous is the alloc this one replaces (lost, migrated, failed).
	previous *structs.Allocation
	// reschedule marks the replacement of a failed alloc: it inherits the
	// reschedule history and avoids the nodes that failed.
	reschedule bool
	// migrating marks the replacement of an alloc stopped for migration
	// (counted as Migrate, not Place).
	migrating bool
	// stopPrevious, when set, is the description under which previous is
	// stopped together with the placement (and kept if it fails).
	stopPrevious string
}

// stopRequest asks to stop one alloc.
type stopRequest struct {
	alloc          *structs.Allocation
	clientStatus   string
	desc           string
	followupEvalID string
}

// destructiveRequest asks to replace an alloc with one of the new version.
type destructiveRequest struct {
	name  string
	group *structs.TaskGroup
	alloc *structs.Allocation
}

// reconcileResult is what the scheduler must do.
type reconcileResult struct {
	// deployment is a deployment for the plan to write: a new one, or a
	// changed copy of the current one; nil when neither.
	deployment        *structs.Deployment
	deploymentUpdates []*structs.DeploymentStatusUpdate
	// currentDeployment is the deployment placements belong to, if any.
	currentDeployment *structs.Deployment

	place       []placeRequest
	destructive []destructiveRequest
	inplace     []*structs.Allocation
	stop        []stopRequest
	// attributeUpdates change server-owned fields of existing allocs
	// (follow-up eval IDs, client status unknown) without a new version.
	attributeUpdates []*structs.Allocation
	followupEvals    []*structs.Evaluation

	desiredTGUpdates map[string]*structs.DesiredUpdates
	// deferred counts, per group, the new allocs the count asks for
	// beyond this pass's bound: they stay queued for a later pass.
	deferred map[string]int
}

type reconciler struct {
	in     reconcileInput
	result *reconcileResult

	// deployment is the deployment of this job version, or nil. Until the
	// reconciler changes it, it is the object read from state and shared
	// with every other reader, so it is never written: ownDeployment
	// swaps in a copy first.
	deployment       *structs.Deployment
	deploymentPaused bool
	deploymentFailed bool
	// created: deployment was started by this pass.
	created bool
}

// reconcile compares the job's desired state with its allocs and returns
// the decisions, group by group.
func reconcile(in reconcileInput) *reconcileResult {
	r := &reconciler{in: in, result: &reconcileResult{desiredTGUpdates: map[string]*structs.DesiredUpdates{}}}
	r.cancelStaleDeployment()

	byGroup := map[string][]*structs.Allocation{}
	for _, a := range in.allocs {
		byGroup[a.TaskGroup] = append(byGroup[a.TaskGroup], a)
	}
	var groups []string
	if in.job != nil {
		for _, tg := range in.job.TaskGroups {
			groups = append(groups, tg.Name)
		}
	}
	for name := range byGroup {
		if !slices.Contains(groups, name) {
			groups = append(groups, name)
		}
	}
	slices.Sort(groups)
	complete := true
	for _, name := range groups {
		if !r.computeGroup(name, byGroup[name]) {
			complete = false
		}
	}
	r.result.currentDeployment = r.deployment
	if complete && r.deployment != nil && r.deployment.Status == structs.DeploymentStatusRunning && !r.created {
		r.result.deploymentUpdates = append(r.result.deploymentUpdates, &structs.DeploymentStatusUpdate{
			DeploymentID:      r.deployment.ID,
			Status:            structs.DeploymentStatusSuccessful,
			StatusDescription: structs.DeploymentStatusDescriptionSuccessful,
		})
	}
	return r.result
}

// slot categories, in the order excess allocs are given up.
const (
	slotLost = iota
	slotDisconnecting
	slotReschedule
	slotMigrate
	slotUntainted
	slotReconnecting
)

// slot is an alloc that holds one name of the group: it runs, or will be
// replaced under the same name.
type slot struct {
	alloc *structs.Allocation
	kind  int
	index int
	// rescheduleAt is set for a failed alloc to be replaced later.
	rescheduleAt time.Time
}

// computeGroup decides one group. It reports whether the group is done
// as far as a deployment is concerned (nothing left to do).
func (r *reconciler) computeGroup(name string, allocs []*structs.Allocation) bool {
	du := &structs.DesiredUpdates{}
	r.result.desiredTGUpdates[name] = du
	job := r.in.job
	tg := job.LookupTaskGroup(name)
	if job.Stopped() || tg == nil {
		r.stopAll(allocs, du)
		return true
	}

	dstate, existingDeployment := r.groupDeploymentState(tg)
	canaryOf := func(a *structs.Allocation) bool {
		return r.deployment != nil && existingDeployment && !dstate.Promoted &&
			a.DeploymentID == r.deployment.ID && a.DeploymentStatus != nil && a.DeploymentStatus.Canary
	}

	var slots []slot
	var canaries []*structs.Allocation
	// canaryReplacements replace unpromoted canaries rescheduled now.
	var canaryReplacements []placeRequest
	var later []laterAlloc
	hadRunning := false
	for _, a := range allocs {
		if a.Job != nil && a.Job.Version == job.Version && a.Job.CreateIndex == job.CreateIndex {
			hadRunning = true
		}
		if a.TerminalStatus() && a.NextAllocation != "" {
			continue // already replaced
		}
		s := slot{alloc: a, index: a.Index()}
		node, onTainted := r.in.tainted[a.NodeID]
		live := !a.TerminalStatus()
		switch {
		case live && onTainted && (node == nil || node.Status == structs.NodeStatusDown):
			// Lost even when marked for migration: nothing on the node
			// can act on a stop, and "lost" is what became of it.
			s.kind = slotLost
			slots = append(slots, s)
			continue
		case live && onTainted && node.Status == structs.NodeStatusDisconnected:
			switch {
			case tg.MaxClientDisconnect == nil || r.disconnectExpired(a, tg):
				s.kind = slotLost
			case a.ClientStatus == structs.AllocClientStatusUnknown:
				continue // its replacement holds the name until it returns or expires
			default:
				s.kind = slotDisconnecting
			}
			slots = append(slots, s)
			continue
		case live && a.DesiredTransition.ShouldMigrate():
			// Marked by the drainer, or by an operator's alloc stop on a
			// node that is not draining at all: either way it goes.
			if canaryOf(a) {
				// An unpromoted canary is not moved under its name: it is
				// stopped, and the group places a new canary in its stead.
				r.result.stop = append(r.result.stop, stopRequest{alloc: a, desc: structs.AllocMigrating})
				continue
			}
			s.kind = slotMigrate
			slots = append(slots, s)
			continue
		case live && !onTainted && a.ClientStatus == structs.AllocClientStatusUnknown:
			s.kind = slotReconnecting
			slots = append(slots, s)
			continue
		}
		if !r.holdsName(a) {
			continue
		}
		now, at, replace := r.rescheduleTime(a)
		switch {
		case canaryOf(a) && replace && now:
			// An unpromoted canary is replaced by a canary; it is kept out
			// of the slots, where the old alloc of its name would win.
			du.RescheduleNow++
			canaryReplacements = append(canaryReplacements, placeRequest{name: a.Name, group: tg, canary: true,
				previous: a, reschedule: true, stopPrevious: structs.AllocRescheduled})
		case canaryOf(a):
			canaries = append(canaries, a)
			if replace {
				later = append(later, laterAlloc{alloc: a, at: at})
			}
		case replace && now:
			s.kind = slotReschedule
			slots = append(slots, s)
		default:
			if replace {
				s.rescheduleAt = at
			}
			s.kind = slotUntainted
			slots = append(slots, s)
		}
	}

	kept := r.dropExcess(slots, tg.Count, du)

	// Replacements and updates of the allocs that keep their names.
	var untainted []*structs.Allocation
	var destructive []destructiveRequest
	var replacements []placeRequest
	inplace := 0
	for _, s := range kept {
		a := s.alloc
		if !s.rescheduleAt.IsZero() {
			later = append(later, laterAlloc{alloc: a, at: s.rescheduleAt})
		}
		switch s.kind {
		case slotLost:
			r.result.stop = append(r.result.stop, stopRequest{alloc: a, clientStatus: structs.AllocClientStatusLost, desc: structs.AllocLost})
			du.Stop++
			replacements = append(replacements, placeRequest{name: a.Name, group: tg, previous: a})
		case slotDisconnecting:
			r.markUnknown(a, tg, du)
			replacements = append(replacements, placeRequest{name: a.Name, group: tg, previous: a})
		case slotReschedule:
			du.RescheduleNow++
			replacements = append(replacements, placeRequest{name: a.Name, group: tg, previous: a,
				reschedule: true, stopPrevious: structs.AllocRescheduled})
		case slotMigrate:
			// A plain stop, kept whether or not the replacement finds a
			// node, as Nomad does: a drain's deadline (or -force) and an
			// operator's stop must take effect even on a full cluster. A
			// replacement without room fails like any placement and
			// waits in the blocked eval; the stopped alloc no longer
			// holds its name, so that eval places it afresh.
			du.Migrate++
			r.result.stop = append(r.result.stop, stopRequest{alloc: a, desc: structs.AllocMigrating})
			replacements = append(replacements, placeRequest{name: a.Name, group: tg, previous: a, migrating: true})
		case slotReconnecting:
			du.Reconnect++
			untainted = append(untainted, a)
		default:
			untainted = append(untainted, a)
		}
	}
	r.followups(later, du)

	for _, a := range untainted {
		if a.TerminalStatus() {
			du.Ignore++
			continue
		}
		ignore, destroy, updated := r.in.update(a, job, tg)
		switch {
		case ignore:
			du.Ignore++
		case destroy:
			destructive = append(destructive, destructiveRequest{name: a.Name, group: tg, alloc: a})
		default:
			inplace++
			du.InPlaceUpdate++
			r.result.inplace = append(r.result.inplace, updated)
		}
	}
	slices.SortFunc(destructive, func(a, b destructiveRequest) int { return cmp.Compare(a.alloc.Index(), b.alloc.Index()) })

	// Canaries go first when the group asks for them and its allocs are
	// about to be replaced.
	var canaryPlace []placeRequest
	if u := tg.Update; u != nil && u.Canary > 0 && len(destructive) > 0 && !dstate.Promoted {
		if dstate.DesiredCanaries != u.Canary {
			if existingDeployment {
				dstate = r.ownDeployment().TaskGroups[name]
			}
			dstate.DesiredCanaries = u.Canary
		}
		used := map[string]bool{}
		for _, c := range canaries {
			used[c.Name] = true
		}
		for _, c := range canaryReplacements {
			used[c.name] = true
		}
		for _, d := range destructive {
			if len(canaries)+len(canaryReplacements)+len(canaryPlace) >= u.Canary {
				break
			}
			if !used[d.name] {
				canaryPlace = append(canaryPlace, placeRequest{name: d.name, group: tg, canary: true})
			}
		}
		du.Canary += uint64(len(canaryPlace))
	}
	canarying := dstate.DesiredCanaries > 0 && !dstate.Promoted

	// New names to reach the count.
	var fresh []placeRequest
	if missing := tg.Count - len(kept); missing > 0 && !canarying && !r.deploymentPaused && !r.deploymentFailed {
		used := map[int]bool{}
		for _, s := range kept {
			used[s.index] = true
		}
		for _, c := range canaries {
			used[c.Index()] = true
		}
		if bound := r.freshBound(); missing > bound {
			if r.result.deferred == nil {
				r.result.deferred = map[string]int{}
			}
			r.result.deferred[name] = missing - bound
			du.Place += uint64(missing - bound)
			missing = bound
		}
		for i := 0; missing > 0; i++ {
			if !used[i] {
				fresh = append(fresh, placeRequest{name: structs.AllocName(job.ID, name, i), group: tg})
				missing--
			}
		}
	}
	place := slices.Concat(canaryReplacements, canaryPlace, replacements, fresh)
	placed := 0 // new allocs of the group, neither canaries nor migrations
	for _, p := range place {
		if !p.canary && !p.migrating {
			du.Place++
			placed++
		}
	}

	limit, bounded := r.rollingLimit(tg, untainted, len(destructive), du.Migrate > 0, canarying)
	if bounded {
		// What this pass places is as unproven as what it replaces:
		// both count against max_parallel.
		limit = max(0, limit-placed)
	}
	n := min(limit, len(destructive))
	du.DestructiveUpdate += uint64(n)
	du.Ignore += uint64(len(destructive) - n)
	destructive = destructive[:n]

	// Start a deployment when this version changes running allocs or
	// places the group for the first time.
	if !existingDeployment && !tg.Update.IsEmpty() && !r.in.batch && tg.Count > 0 &&
		(!hadRunning || len(destructive) > 0 || inplace > 0) {
		if r.deployment == nil {
			r.deployment = structs.NewDeployment(job, r.in.evalPriority, r.in.now)
			r.result.deployment = r.deployment
			r.created = true
		}
		r.ownDeployment().TaskGroups[name] = dstate
		// Set for a group joining an existing deployment too: without it
		// the group could never count as done.
		dstate.DesiredTotal = tg.Count
		existingDeployment = true
	}

	r.result.place = append(r.result.place, place...)
	r.result.destructive = append(r.result.destructive, destructive...)

	done := len(place) == 0 && len(destructive) == 0 && inplace == 0 && len(later) == 0 && !canarying &&
		r.result.deferred[name] == 0
	if done && existingDeployment {
		done = dstate.HealthyAllocs >= max(dstate.DesiredTotal, dstate.DesiredCanaries) && dstate.DesiredTotal > 0
	}
	return done
}

// freshBound is how many new names one pass may ask for in a group.
func (r *reconciler) freshBound() int {
	if r.in.maxFresh > 0 {
		return r.in.maxFresh
	}
	return DefaultMaxPlacementsPerPass
}

// holdsName applies the terminal-status rules: which allocs still hold
// their name (and so are not replaced).
func (r *reconciler) holdsName(a *structs.Allocation) bool {
	if r.in.batch {
		// Batch work that finished successfully is never run again; work
		// stopped before it finished, or evicted, is replaced.
		switch a.DesiredStatus {
		case structs.AllocDesiredStatusStop:
			return ranSuccessfully(a)
		case structs.AllocDesiredStatusEvict:
			return false
		}
		return a.ClientStatus != structs.AllocClientStatusLost
	}
	if a.ServerTerminalStatus() {
		return false
	}
	switch a.ClientStatus {
	case structs.AllocClientStatusComplete, structs.AllocClientStatusLost:
		return false
	}
	return true
}

// ranSuccessfully reports whether every task of the alloc finished
// without failing.
func ranSuccessfully(a *structs.Allocation) bool {
	if a.ClientStatus == structs.AllocClientStatusComplete {
		return true
	}
	if len(a.TaskStates) == 0 {
		return false
	}
	for _, s := range a.TaskStates {
		if !s.Successful() {
			return false
		}
	}
	return true
}

// dropExcess keeps at most count names. Duplicates of one name are
// resolved first (a returning original wins over its replacement, the
// current job version over an older one), then names beyond the count,
// then lost, failed and migrating allocs before healthy ones, highest
// index first. Everything dropped is stopped.
func (r *reconciler) dropExcess(slots []slot, count int, du *structs.DesiredUpdates) []slot {
	job := r.in.job
	rank := func(s slot) int {
		k := s.kind * 4
		if s.alloc.Job != nil && s.alloc.Job.Version == job.Version && s.alloc.Job.CreateIndex == job.CreateIndex {
			k += 2
		}
		if s.alloc.ClientStatus == structs.AllocClientStatusRunning {
			k++
		}
		return k
	}
	// Best first within a name.
	slices.SortStableFunc(slots, func(a, b slot) int {
		if a.index != b.index {
			return cmp.Compare(a.index, b.index)
		}
		return cmp.Compare(rank(b), rank(a))
	})
	var kept []slot
	for i, s := range slots {
		if i > 0 && s.index == slots[i-1].index && s.index >= 0 {
			desc := structs.AllocNotNeeded
			if kept[len(kept)-1].kind == slotReconnecting {
				desc = allocReconnected
			}
			r.stopSlot(s, desc, du)
			continue
		}
		kept = append(kept, s)
	}
	if excess := len(kept) - count; excess > 0 {
		order := slices.Clone(kept)
		slices.SortStableFunc(order, func(a, b slot) int {
			ab, bb := a.index >= count || a.index < 0, b.index >= count || b.index < 0
			if ab != bb {
				if ab {
					return -1
				}
				return 1
			}
			if a.kind != b.kind {
				return cmp.Compare(a.kind, b.kind)
			}
			return cmp.Compare(b.index, a.index)
		})
		drop := map[*structs.Allocation]bool{}
		for _, s := range order[:excess] {
			drop[s.alloc] = true
			r.stopSlot(s, structs.AllocNotNeeded, du)
		}
		kept = slices.DeleteFunc(kept, func(s slot) bool { return drop[s.alloc] })
	}
	return kept
}

// stopSlot stops an alloc that no longer holds a name.
func (r *reconciler) stopSlot(s slot, desc string, du *structs.DesiredUpdates) {
	a := s.alloc
	switch {
	case s.kind == slotLost:
		r.result.stop = append(r.result.stop, stopRequest{alloc: a, clientStatus: structs.AllocClientStatusLost, desc: structs.AllocLost})
	case a.TerminalStatus() && a.ClientTerminalStatus():
		// Finished or failed for good: nothing runs that could be stopped.
		du.Ignore++
		return
	default:
		r.result.stop = append(r.result.stop, stopRequest{alloc: a, desc: desc})
	}
	du.Stop++
}

// stopAll stops every alloc of a group that is no longer wanted.
func (r *reconciler) stopAll(allocs []*structs.Allocation, du *structs.DesiredUpdates) {
	for _, a := range allocs {
		if a.TerminalStatus() {
			continue
		}
		if node, tainted := r.in.tainted[a.NodeID]; tainted && (node == nil || node.Status == structs.NodeStatusDown) {
			r.result.stop = append(r.result.stop, stopRequest{alloc: a, clientStatus: structs.AllocClientStatusLost, desc: structs.AllocLost})
		} else {
			r.result.stop = append(r.result.stop, stopRequest{alloc: a, desc: structs.AllocNotNeeded})
		}
		du.Stop++
	}
}
