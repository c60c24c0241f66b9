package nomad

import (
	"slices"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// pendingPlans holds the effects of the plan results the applier has
// handed to Raft but not yet seen committed, so that the next plan is
// judged against committed state plus everything already promised. Each
// result is known by its dispatch sequence number.
//
// It is deliberately lopsided. A pending result's new and updated allocs
// count on their nodes at once: if the commit fails they vanish, and a
// plan judged with them present only fits better without them. Its stops,
// preemptions and the old versions of allocs it updates in place do not
// release anything until the commit is seen: counting on capacity that a
// failing commit never frees would let the next plan overcommit the node.
// A plan that needs such capacity waits for the releasing commit (see
// planEvaluation.waitFor). So no plan is accepted on the strength of an
// earlier, still uncommitted one, and a Raft failure needs no unwinding
// of the plans judged after it: what they commit fits whether or not the
// failed one did. (A rejection may rest on a pending plan that then fails;
// the scheduler refreshes and tries again.)
//
// The same rule makes overlap with committed state harmless. A commit
// lands in the state store before the applier hears of it; meanwhile the
// snapshot holds a result that is also still pending here. New allocs are
// merged by ID so they count once; an in-place update then counts twice
// (old and new version), which errs on the safe side and lasts only until
// the completion is absorbed.
//
// Only the applier goroutine uses it.
type pendingPlans struct {
	nodes map[string]*pendingNode
	// touched lists, per sequence number, the nodes it has entries on,
	// so that remove does not scan every node.
	touched map[uint64][]string
}

// pendingNode is what the pending results do to one node.
type pendingNode struct {
	placed []pendingAlloc
	// releases holds, in ascending order, the sequence numbers of the
	// pending results that stop, preempt or update allocs on the node.
	releases []uint64
}

// pendingAlloc is one new or updated alloc of a pending result.
type pendingAlloc struct {
	seq   uint64
	alloc *structs.Allocation
	// update is set when the alloc already existed in committed state:
	// an in-place update, whose old version keeps counting.
	update bool
}

func newPendingPlans() *pendingPlans {
	return &pendingPlans{
		nodes:   make(map[string]*pendingNode),
		touched: make(map[uint64][]string),
	}
}

// add records a result dispatched as seq: the new and updated allocs of
// its Raft entry req (the applier's own copies, which nobody changes
// later, unlike the submitter's allocs), and the nodes where result stops
// or preempts allocs. snap is the state it was judged against. Sequence
// numbers must increase from call to call.
func (p *pendingPlans) add(seq uint64, snap *state.StateSnapshot, result *structs.PlanResult, req *structs.ApplyPlanResultsRequest) {
	var touched []string
	node := func(id string) *pendingNode {
		n := p.nodes[id]
		if n == nil {
			n = &pendingNode{}
			p.nodes[id] = n
		}
		// A node may be listed twice; remove copes.
		touched = append(touched, id)
		return n
	}
	release := func(n *pendingNode) {
		if k := len(n.releases); k == 0 || n.releases[k-1] != seq {
			n.releases = append(n.releases, seq)
		}
	}
	for _, a := range req.AllocsUpdated {
		n := node(a.NodeID)
		// An alloc that cannot be looked up is taken for an update:
		// counting its old version too is the safe mistake.
		stored, err := snap.AllocByID(nil, a.ID)
		update := stored != nil || err != nil
		n.placed = append(n.placed, pendingAlloc{seq: seq, alloc: a, update: update})
		if update {
			release(n)
		}
	}
	for _, m := range []map[string][]*structs.Allocation{result.NodeUpdate, result.NodePreemptions} {
		for id, allocs := range m {
			if len(allocs) > 0 {
				release(node(id))
			}
		}
	}
	if len(touched) > 0 {
		p.touched[seq] = touched
	}
}

// remove forgets a result: it committed (the state store now has it) or
// failed (it never happened).
func (p *pendingPlans) remove(seq uint64) {
	for _, id := range p.touched[seq] {
		n := p.nodes[id]
		if n == nil {
			continue
		}
		n.placed = slices.DeleteFunc(n.placed, func(a pendingAlloc) bool { return a.seq == seq })
		n.releases = slices.DeleteFunc(n.releases, func(s uint64) bool { return s == seq })
		if len(n.placed) == 0 && len(n.releases) == 0 {
			delete(p.nodes, id)
		}
	}
	delete(p.touched, seq)
}

// releaseOn returns the newest pending result that releases capacity on
// the node, 0 if none does.
func (p *pendingPlans) releaseOn(nodeID string) uint64 {
	if p == nil {
		return 0
	}
	n := p.nodes[nodeID]
	if n == nil || len(n.releases) == 0 {
		return 0
	}
	return n.releases[len(n.releases)-1]
}

// allocsOn merges the pending allocs for the node into its committed
// allocs, by the rules in the type comment. It returns committed itself,
// and false, when nothing is pending on the node.
func (p *pendingPlans) allocsOn(nodeID string, committed []*structs.Allocation) ([]*structs.Allocation, bool) {
	if p == nil {
		return committed, false
	}
	n := p.nodes[nodeID]
	if n == nil || len(n.placed) == 0 {
		return committed, false
	}
	fresh := make(map[string]struct{}, len(n.placed))
	for _, pa := range n.placed {
		if !pa.update {
			fresh[pa.alloc.ID] = struct{}{}
		}
	}
	out := make([]*structs.Allocation, 0, len(committed)+len(n.placed))
	for _, a := range committed {
		if _, dup := fresh[a.ID]; !dup {
			out = append(out, a)
		}
	}
	for _, pa := range n.placed {
		out = append(out, pa.alloc)
	}
	return out, true
}
