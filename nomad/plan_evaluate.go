package nomad

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Reasons a node's part of a plan is rejected, besides the exhausted
// dimension structs.AllocsFit names ("cpu", "memory", "network: ...").
const (
	rejectNodeMissing      = "node does not exist"
	rejectNodeNotReady     = "node is not ready for placements"
	rejectNodeIneligible   = "node is not eligible"
	rejectNodeDown         = "node is down and contains invalid updates"
	rejectNodeDisconnected = "node is disconnected and contains invalid updates"
)

// parallelEvalMinNodes is the smallest plan whose per-node checks are
// spread over goroutines. Below it the fan-out costs more than it saves
// (see BenchmarkEvaluatePlan).
const parallelEvalMinNodes = 128

// planView is the state a plan is judged against: a snapshot of committed
// state and, on top of it, what the plan results still in Raft will add.
// Both parts are read-only while a plan is evaluated, so per-node checks
// may run concurrently.
type planView struct {
	snap *state.StateSnapshot
	// pending may be nil: nothing is in flight.
	pending *pendingPlans
}

// planEvaluation is evaluatePlan's answer.
type planEvaluation struct {
	// result is what may be committed. It has no AllocIndex yet.
	result *structs.PlanResult
	// reasons says why each rejected node was rejected; it is aligned
	// with result.RejectedNodes.
	reasons []string
	// waitFor, when non-zero, is the newest in-flight plan whose stops or
	// preemptions on a rejected node could turn that rejection around
	// once committed. The applier never counts on capacity an
	// uncommitted plan frees (the commit may fail), so it waits for that
	// plan and judges again.
	waitFor uint64
}

// nodeVerdict is the judgement of one node of a plan.
type nodeVerdict struct {
	// judged is false for a node an AllAtOnce plan never got to.
	judged  bool
	fits    bool
	reason  string
	waitFor uint64
	err     error
}

// evaluatePlan decides, node by node, which parts of plan still hold
// against v. A node whose part fails is left out of the result (a partial
// commit) and listed in RejectedNodes; the scheduler is then told to
// refresh its state up to RefreshIndex and try again. With AllAtOnce, one
// failing node rejects the whole plan.
//
// The plan's stops and preemptions must be denormalized (full allocs, see
// denormalizePlan). evaluatePlan does not modify plan; the result shares
// the plan's allocs. parallelism > 1 spreads the checks of large plans
// over that many goroutines.
func evaluatePlan(v planView, plan *structs.Plan, parallelism int) (*planEvaluation, error) {
	nodes := planNodes(plan)
	var verdicts []nodeVerdict
	if parallelism > 1 && len(nodes) >= parallelEvalMinNodes {
		verdicts = evaluateNodesParallel(v, plan, nodes, parallelism)
	} else {
		verdicts = evaluateNodesSerial(v, plan, nodes)
	}

	result := &structs.PlanResult{
		NodeUpdate:        make(map[string][]*structs.Allocation),
		NodeAllocation:    make(map[string][]*structs.Allocation),
		NodePreemptions:   make(map[string][]*structs.Allocation),
		Deployment:        plan.Deployment,
		DeploymentUpdates: plan.DeploymentUpdates,
	}
	ev := &planEvaluation{result: result}
	for i, vd := range verdicts {
		id := nodes[i]
		if vd.err != nil {
			return nil, fmt.Errorf("plan for eval %q: node %q: %w", plan.EvalID, id, vd.err)
		}
		if !vd.judged {
			continue // an AllAtOnce plan stopped at an earlier rejection
		}
		if !vd.fits {
			result.RejectedNodes = append(result.RejectedNodes, id)
			ev.reasons = append(ev.reasons, vd.reason)
			ev.waitFor = max(ev.waitFor, vd.waitFor)
			continue
		}
		if u := plan.NodeUpdate[id]; len(u) > 0 {
			result.NodeUpdate[id] = u
		}
		if a := plan.NodeAllocation[id]; len(a) > 0 {
			result.NodeAllocation[id] = a
			preempted, err := v.livePreemptions(plan.NodePreemptions[id])
			if err != nil {
				return nil, fmt.Errorf("plan for eval %q: node %q: %w", plan.EvalID, id, err)
			}
			if len(preempted) > 0 {
				result.NodePreemptions[id] = preempted
			}
		}
	}
	if len(result.RejectedNodes) == 0 {
		return ev, nil
	}

	refresh, err := refreshIndex(v.snap)
	if err != nil {
		return nil, fmt.Errorf("plan for eval %q: %w", plan.EvalID, err)
	}
	result.RefreshIndex = refresh
	if plan.AllAtOnce {
		result.NodeUpdate = nil
		result.NodeAllocation = nil
		result.NodePreemptions = nil
		result.Deployment = nil
		result.DeploymentUpdates = nil
		return ev, nil
	}
	result.Deployment = trimPlacedCanaries(plan.Deployment, plan.NodeAllocation, result.NodeAllocation)
	return ev, nil
}

// evaluateNodesSerial judges the nodes one after the other; an AllAtOnce
// plan stops at the first rejection.
func evaluateNodesSerial(v planView, plan *structs.Plan, nodes []string) []nodeVerdict {
	verdicts := make([]nodeVerdict, len(nodes))
	for i, id := range nodes {
		verdicts[i] = v.evaluateNode(plan, id)
		if !verdicts[i].fits && plan.AllAtOnce {
			return verdicts[:i+1]
		}
	}
	return verdicts
}

// evaluateNodesParallel judges the nodes on n goroutines that take nodes
// from a shared counter, so one slow node does not idle the others. An
// AllAtOnce plan stops handing out nodes after the first rejection; the
// verdicts not reached stay zero (not judged).
func evaluateNodesParallel(v planView, plan *structs.Plan, nodes []string, n int) []nodeVerdict {
	verdicts := make([]nodeVerdict, len(nodes))
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	for range min(n, len(nodes)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(nodes) || (plan.AllAtOnce && failed.Load()) {
					return
				}
				verdicts[i] = v.evaluateNode(plan, nodes[i])
				if !verdicts[i].fits {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	return verdicts
}

// planNodes lists the nodes a plan stops or places on, sorted so that
// results and logs do not depend on map order.
func planNodes(plan *structs.Plan) []string {
	nodes := make([]string, 0, len(plan.NodeUpdate)+len(plan.NodeAllocation))
	for id := range plan.NodeUpdate {
		nodes = append(nodes, id)
	}
	for id := range plan.NodeAllocation {
		if _, dup := plan.NodeUpdate[id]; !dup {
			nodes = append(nodes, id)
		}
	}
	slices.Sort(nodes)
	return nodes
}

// evaluateNode judges the plan's part on one node (see judgeNode). Every
// rejection carries a reason, so that a rejected node is always reported.
func (v planView) evaluateNode(plan *structs.Plan, nodeID string) nodeVerdict {
	vd := v.judgeNode(plan, nodeID)
	vd.judged = true
	if !vd.fits && vd.err == nil && vd.reason == "" {
		vd.reason = "resources exhausted"
	}
	return vd
}

// judgeNode applies the rules to the plan's part on one node:
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
// (see pendingPlans); a rejection that those stops could reverse carries
// the plan to wait for.
func (v planView) judgeNode(plan *structs.Plan, nodeID string) nodeVerdict {
	placing := plan.NodeAllocation[nodeID]
	if len(placing) == 0 {
		return nodeVerdict{fits: true}
	}
	node, err := v.snap.NodeByID(nil, nodeID)
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
		return nodeVerdict{reason: dim, waitFor: v.pending.releaseOn(nodeID)}
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
// updated version, plus the plan's allocs.
func proposedAllocs(existing, stops, preemptions, placing []*structs.Allocation) []*structs.Allocation {
	proposed := make([]*structs.Allocation, 0, len(existing)+len(placing))
	if len(stops) == 0 && len(preemptions) == 0 && allNew(placing) {
		// Nothing to take away: the common case of fresh placements.
		proposed = append(proposed, existing...)
		return append(proposed, placing...)
	}
	remove := make(map[string]struct{}, len(stops)+len(preemptions)+len(placing))
	for _, list := range [][]*structs.Allocation{stops, preemptions, placing} {
		for _, a := range list {
			remove[a.ID] = struct{}{}
		}
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
func (v planView) nodeAllocs(nodeID string) ([]*structs.Allocation, error) {
	committed, err := v.snap.AllocsByNodeTerminal(nil, nodeID, false)
	if err != nil {
		return nil, err
	}
	merged, changed := v.pending.allocsOn(nodeID, committed)
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

// livePreemptions keeps the preemptions of allocs still running in
// committed state; preempting what already stopped is a no-op the Raft
// entry need not carry.
func (v planView) livePreemptions(preempted []*structs.Allocation) ([]*structs.Allocation, error) {
	if len(preempted) == 0 {
		return nil, nil
	}
	out := make([]*structs.Allocation, 0, len(preempted))
	for _, p := range preempted {
		stored, err := v.snap.AllocByID(nil, p.ID)
		if err != nil {
			return nil, err
		}
		if stored != nil && !stored.TerminalStatus() {
			out = append(out, p)
		}
	}
	return out, nil
}

// refreshIndex is the index a scheduler must reach to see everything a
// rejection was based on: the newest write to allocs or nodes.
func refreshIndex(snap *state.StateSnapshot) (uint64, error) {
	allocs, err := snap.Index(state.TableAllocs)
	if err != nil {
		return 0, err
	}
	nodes, err := snap.Index(state.TableNodes)
	if err != nil {
		return 0, err
	}
	if idx := max(allocs, nodes); idx > 0 {
		return idx, nil
	}
	// A store that never saw a node or an alloc: its newest write will do.
	idx, err := snap.LatestIndex()
	if err != nil {
		return 0, err
	}
	if idx == 0 {
		return 0, fmt.Errorf("no state index to refresh to: the state store is empty")
	}
	return idx, nil
}

// trimPlacedCanaries returns the deployment with the canaries this plan
// proposed but did not commit removed from every task group's
// PlacedCanaries, so a partial commit does not count canaries that were
// never placed. Canaries placed by earlier plans are not in this plan's
// allocations and stay. The plan's deployment is copied, not changed.
func trimPlacedCanaries(d *structs.Deployment, proposed, committed map[string][]*structs.Allocation) *structs.Deployment {
	if d == nil {
		return nil
	}
	dropped := make(map[string]struct{})
	for node, allocs := range proposed {
		for _, a := range allocs {
			if !slices.ContainsFunc(committed[node], func(c *structs.Allocation) bool { return c.ID == a.ID }) {
				dropped[a.ID] = struct{}{}
			}
		}
	}
	d = d.Copy()
	for _, tg := range d.TaskGroups {
		tg.PlacedCanaries = slices.DeleteFunc(tg.PlacedCanaries, func(id string) bool {
			_, gone := dropped[id]
			return gone
		})
	}
	return d
}
