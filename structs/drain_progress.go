package structs

// DrainProgress says how far the drain of one node has got, computed from
// the node and its allocations alone. The leader's drainer completes a
// drain exactly when Remaining reaches zero, and anyone reading state (an
// HTTP handler, `node drain -monitor`) computes the same numbers, so
// progress never lives only in the leader's memory.
type DrainProgress struct {
	// Remaining counts the allocs that still hold the drain open: they
	// have not stopped on their client yet.
	Remaining int
	// Migrating counts the remaining allocs the drainer marked for
	// migration; the scheduler stops them and places replacements.
	Migrating int
	// System counts the remaining allocs of system and sysbatch jobs,
	// which are stopped only after every other alloc has stopped.
	System int
	// Ignored counts system allocs left running because the drain
	// ignores system jobs.
	Ignored int
}

// Done reports whether nothing holds the drain open.
func (p DrainProgress) Done() bool { return p.Remaining == 0 }

// NodeDrainProgress counts the allocs on a draining node; allocs of
// other nodes in the list are skipped.
func NodeDrainProgress(node *Node, allocs []*Allocation) DrainProgress {
	var p DrainProgress
	for _, a := range allocs {
		if a.NodeID != node.ID {
			continue
		}
		if !AllocHoldsDrain(node, a) {
			if node.DrainStrategy != nil && node.DrainStrategy.IgnoreSystemJobs && a.Job.IsSystemLike() && !allocGone(node, a) {
				p.Ignored++
			}
			continue
		}
		p.Remaining++
		if a.DesiredTransition.ShouldMigrate() {
			p.Migrating++
		}
		if a.Job.IsSystemLike() {
			p.System++
		}
	}
	return p
}

// AllocHoldsDrain reports whether an alloc on a draining node keeps the
// drain open. It does until its client reports it stopped (complete,
// failed, or lost): being told to stop is not enough, its tasks may still
// be running out their kill timeout. Two exceptions: on a node that is
// down, an alloc the servers stopped counts as gone (its client will
// never report again), and a drain that ignores system jobs is not held
// by their allocs.
func AllocHoldsDrain(node *Node, a *Allocation) bool {
	if allocGone(node, a) {
		return false
	}
	if node.DrainStrategy != nil && node.DrainStrategy.IgnoreSystemJobs && a.Job.IsSystemLike() {
		return false
	}
	return true
}

func allocGone(node *Node, a *Allocation) bool {
	if a.ClientTerminalStatus() {
		return true
	}
	return node.Status == NodeStatusDown && a.ServerTerminalStatus()
}
