package planjudge

import (
	"slices"

	"github.com/opennomad/nomad/structs"
)

// InFlight holds the effects of the plan results handed to Raft but not
// yet seen committed, so that the next plan is judged against committed
// state plus everything already promised. Each result is known by a
// sequence number its owner chooses, increasing from one Add to the next.
//
// It is deliberately lopsided. A pending result's new and updated allocs
// count on their nodes at once: if the commit fails they vanish, and a
// plan judged with them present only fits better without them. Its stops,
// preemptions and the old versions of allocs it updates in place do not
// release anything until the commit is seen: counting on capacity that a
// failing commit never frees would let the next plan overcommit the node.
// A plan that needs such capacity waits for the releasing commit (see
// Verdict.WaitFor). So no plan is accepted on the strength of an earlier,
// still uncommitted one, and a Raft failure needs no unwinding of the
// plans judged after it: what they commit fits whether or not the failed
// one did. (A rejection may rest on a pending plan that then fails; the
// scheduler refreshes and tries again.)
//
// The same rule makes overlap with committed state harmless. A commit
// lands in the state store before its owner hears of it; meanwhile the
// snapshot holds a result that is also still pending here. New allocs are
// merged by ID so they count once; an in-place update then counts twice
// (old and new version), which errs on the safe side and lasts only until
// the owner calls Remove.
//
// It is not safe for concurrent use: the applier's one goroutine calls Add
// and Remove, and Judge reads it (from several goroutines) only between
// those calls. A nil *InFlight is an empty one to Judge.
type InFlight struct {
	nodes map[string]*inFlightNode
	// touched lists, per sequence number, the nodes it has entries on,
	// so that Remove does not scan every node.
	touched map[uint64][]string
}

// inFlightNode is what the pending results do to one node.
type inFlightNode struct {
	placed []inFlightAlloc
	// releases holds, in ascending order, the sequence numbers of the
	// pending results that stop, preempt or update allocs on the node.
	releases []uint64
}

// inFlightAlloc is one new or updated alloc of a pending result.
type inFlightAlloc struct {
	seq   uint64
	alloc *structs.Allocation
	// update is set when the alloc already existed in committed state:
	// an in-place update, whose old version keeps counting.
	update bool
}

// NewInFlight returns an empty overlay.
func NewInFlight() *InFlight {
	return &InFlight{
		nodes:   make(map[string]*inFlightNode),
		touched: make(map[uint64][]string),
	}
}

// Add records a result dispatched as seq: the new and updated allocs of
// its Raft entry req (the caller's own copies, which nobody changes later,
// unlike the submitter's allocs; see BuildRequest), and the nodes where
// result stops or preempts allocs. st is the state it was judged against.
func (p *InFlight) Add(seq uint64, st State, result *structs.PlanResult, req *structs.ApplyPlanResultsRequest) {
	var touched []string
	node := func(id string) *inFlightNode {
		n := p.nodes[id]
		if n == nil {
			n = &inFlightNode{}
			p.nodes[id] = n
		}
		// A node may be listed twice; Remove copes.
		touched = append(touched, id)
		return n
	}
	release := func(n *inFlightNode) {
		if k := len(n.releases); k == 0 || n.releases[k-1] != seq {
			n.releases = append(n.releases, seq)
		}
	}
	for _, a := range req.AllocsUpdated {
		n := node(a.NodeID)
		// An alloc that cannot be looked up is taken for an update:
		// counting its old version too is the safe mistake.
		stored, err := st.AllocByID(a.ID)
		update := stored != nil || err != nil
		n.placed = append(n.placed, inFlightAlloc{seq: seq, alloc: a, update: update})
		if update {
			release(n)
		}
	}
	for _, m := range []map[string][]*structs.AllocStop{result.NodeUpdate, result.NodePreemptions} {
		for id, stops := range m {
			if len(stops) > 0 {
				release(node(id))
			}
		}
	}
	if len(touched) > 0 {
		p.touched[seq] = touched
	}
}

// Remove forgets a result: it committed (the state store now has it) or
// failed (it never happened).
func (p *InFlight) Remove(seq uint64) {
	for _, id := range p.touched[seq] {
		n := p.nodes[id]
		if n == nil {
			continue
		}
		n.placed = slices.DeleteFunc(n.placed, func(a inFlightAlloc) bool { return a.seq == seq })
		n.releases = slices.DeleteFunc(n.releases, func(s uint64) bool { return s == seq })
		if len(n.placed) == 0 && len(n.releases) == 0 {
			delete(p.nodes, id)
		}
	}
	delete(p.touched, seq)
}

// releaseOn returns the newest pending result that releases capacity on
// the node, 0 if none does.
func (p *InFlight) releaseOn(nodeID string) uint64 {
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
func (p *InFlight) allocsOn(nodeID string, committed []*structs.Allocation) ([]*structs.Allocation, bool) {
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
