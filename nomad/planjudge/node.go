package planjudge

import "github.com/opennomad/nomad/structs"

// Reasons a node's part of a plan is rejected, besides the exhausted
// dimension structs.AllocsFit names ("cpu", "memory", "network: ...").
const (
	rejectNodeMissing      = "node does not exist"
	rejectNodeNotReady     = "node is not ready for placements"
	rejectNodeIneligible   = "node is not eligible"
	rejectNodeDown         = "node is down and contains invalid updates"
	rejectNodeDisconnected = "node is disconnected and contains invalid updates"
	rejectResources        = "resources exhausted"
)

// judgeNode judges the plan's part on one node (see applyRules). Every
// rejection carries a reason, so that a rejected node is always reported.
func (v View) judgeNode(plan *structs.Plan, nodeID string) nodeVerdict {
	vd := v.applyRules(plan, nodeID)
	vd.judged = true
	if !vd.fits && vd.err == nil && vd.reason == "" {
		vd.reason = rejectResources
	}
	return vd
}

// applyRules applies the rules to the plan's part on one node:
//
//  1. nothing placed or updated on it: fits (stops always succeed);
//  2. the node is gone: rejected;
//  3. disconnected: fits only if every alloc is being marked unknown;
//     down: fits only if every alloc is being marked lost;
//     any other status but ready: rejected;
//  4. every alloc is an in-place change of one already there: fits;
//  5. ineligible or draining: rejected;
//  6. otherwise the allocs on the node, less the plan's stops,
//     preemptions and updated allocs, plus the plan's allocs, must fit.
//
// In 6 the allocs in flight to the node count, and their stops do not
// (see InFlight); a rejection that those stops could reverse carries the
// result to wait for.
func (v View) applyRules(plan *structs.Plan, nodeID string) nodeVerdict {
	placing := plan.NodeAllocation[nodeID]
	if len(placing) == 0 {
		return nodeVerdict{fits: true}
	}
	node, err := v.State.NodeByID(nodeID)
	if err != nil {
		return nodeVerdict{err: err}
	}
	if node == nil {
		return nodeVerdict{reason: rejectNodeMissing}
	}
	switch node.Status {
	case structs.NodeStatusDisconnected:
		return allMarked(placing, structs.AllocClientStatusUnknown, rejectNodeDisconnected)
	case structs.NodeStatusDown:
		return allMarked(placing, structs.AllocClientStatusLost, rejectNodeDown)
	case structs.NodeStatusReady:
	default:
		return nodeVerdict{reason: rejectNodeNotReady}
	}

	existing, err := v.nodeAllocs(nodeID)
	if err != nil {
		return nodeVerdict{err: err}
	}
	if inPlaceOnly(placing, existing) {
		return nodeVerdict{fits: true}
	}
	if node.SchedulingEligibility == structs.NodeSchedulingIneligible || node.DrainStrategy != nil {
		return nodeVerdict{reason: rejectNodeIneligible}
	}

	proposed := proposedAllocs(existing, plan.NodeUpdate[nodeID], plan.NodePreemptions[nodeID], placing)
	if fit, dim, _ := structs.AllocsFit(node, proposed); !fit {
		return nodeVerdict{reason: dim, waitFor: v.InFlight.releaseOn(nodeID)}
	}
	return nodeVerdict{fits: true}
}

// allMarked accepts a plan's part on a node that lost contact only when
// all it does is record the allocs' new client status there.
func allMarked(allocs []*structs.Allocation, clientStatus, reason string) nodeVerdict {
	for _, a := range allocs {
		if a.ClientStatus != clientStatus {
			return nodeVerdict{reason: reason}
		}
	}
	return nodeVerdict{fits: true}
}

// inPlaceOnly reports whether every placed alloc already runs on the node.
func inPlaceOnly(placing, existing []*structs.Allocation) bool {
	if len(placing) > len(existing) || anyNew(placing) {
		return false
	}
	ids := make(map[string]struct{}, len(existing))
	for _, a := range existing {
		ids[a.ID] = struct{}{}
	}
	for _, a := range placing {
		if _, ok := ids[a.ID]; !ok {
			return false
		}
	}
	return true
}

// anyNew reports whether some alloc was never committed: those have no
// CreateIndex (the store sets it), and cannot be updates of allocs on the
// node. It spares most plans the ID lookups below.
func anyNew(allocs []*structs.Allocation) bool {
	for _, a := range allocs {
		if a.CreateIndex == 0 {
			return true
		}
	}
	return false
}

// proposedAllocs is what the node would run with the plan applied: the
// existing allocs less those the plan stops, preempts or replaces by an
// updated version, plus the plan's allocs. Stops and preemptions are known
// by ID alone: they only take away.
func proposedAllocs(existing []*structs.Allocation, stops, preemptions []*structs.AllocStop, placing []*structs.Allocation) []*structs.Allocation {
	proposed := make([]*structs.Allocation, 0, len(existing)+len(placing))
	if len(stops) == 0 && len(preemptions) == 0 && allNew(placing) {
		// Nothing to take away: the common case of fresh placements.
		proposed = append(proposed, existing...)
		return append(proposed, placing...)
	}
	remove := make(map[string]struct{}, len(stops)+len(preemptions)+len(placing))
	for _, list := range [][]*structs.AllocStop{stops, preemptions} {
		for _, s := range list {
			remove[s.ID] = struct{}{}
		}
	}
	for _, a := range placing {
		remove[a.ID] = struct{}{}
	}
	for _, a := range existing {
		if _, gone := remove[a.ID]; !gone {
			proposed = append(proposed, a)
		}
	}
	return append(proposed, placing...)
}

func allNew(allocs []*structs.Allocation) bool {
	for _, a := range allocs {
		if a.CreateIndex != 0 {
			return false
		}
	}
	return true
}

// nodeAllocs returns the non-terminal allocs on the node: committed ones
// and those in flight.
func (v View) nodeAllocs(nodeID string) ([]*structs.Allocation, error) {
	committed, err := v.State.AllocsByNodeTerminal(nodeID, false)
	if err != nil {
		return nil, err
	}
	merged, changed := v.InFlight.allocsOn(nodeID, committed)
	if !changed {
		return committed, nil
	}
	live := make([]*structs.Allocation, 0, len(merged))
	for _, a := range merged {
		if !a.TerminalStatus() {
			live = append(live, a)
		}
	}
	return live, nil
}
