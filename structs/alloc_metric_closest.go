package structs

import "slices"

// MaxClosestNodes is how many of the nodes that came closest to taking a
// failed placement its metric keeps.
const MaxClosestNodes = 3

// NodeShortfall is what one node lacked for a placement that did not fit
// it: the CPU (MHz), memory and disk (MB) it would have needed beyond what
// was free. The nodes that came closest lack the least, relative to the
// ask. Ours: Nomad's metric has no such field; its clients ignore it.
type NodeShortfall struct {
	NodeID   string
	NodeName string
	CPU      int64
	MemoryMB int64
	DiskMB   int64
}

// nearMiss is a shortfall with its rank: the sum over dimensions of the
// missing amount divided by the amount asked.
type nearMiss struct {
	s    NodeShortfall
	rank float64
}

// NearMiss records a feasible node that lacked room: short* are the
// amounts missing (0 where it had enough), ask* the amounts asked. Only
// the MaxClosestNodes with the lowest rank are kept; a tie keeps the node
// seen first, so the answer does not depend on more than the order nodes
// were tried in.
func (a *AllocMetric) NearMiss(node *Node, shortCPU, shortMem, shortDisk, askCPU, askMem, askDisk int64) {
	if node == nil {
		return
	}
	rank := shortfallRank(shortCPU, askCPU) + shortfallRank(shortMem, askMem) + shortfallRank(shortDisk, askDisk)
	if len(a.nearMisses) == MaxClosestNodes && rank >= a.nearMisses[MaxClosestNodes-1].rank {
		return
	}
	m := nearMiss{s: NodeShortfall{NodeID: node.ID, NodeName: node.Name, CPU: shortCPU, MemoryMB: shortMem, DiskMB: shortDisk}, rank: rank}
	i, _ := slices.BinarySearchFunc(a.nearMisses, rank, func(e nearMiss, r float64) int {
		if e.rank <= r {
			return -1
		}
		return 1
	})
	a.nearMisses = slices.Insert(a.nearMisses, i, m)
	if len(a.nearMisses) > MaxClosestNodes {
		a.nearMisses = a.nearMisses[:MaxClosestNodes]
	}
}

// shortfallRank is the share of the ask that was missing; an ask of 0
// cannot be short.
func shortfallRank(short, ask int64) float64 {
	if short <= 0 || ask <= 0 {
		return 0
	}
	return float64(short) / float64(ask)
}

// PopulateClosestNodes publishes the nodes that came closest in
// ClosestNodes. Schedulers call it on a metric of a failed placement
// only, so that placed allocations do not carry it into the state.
func (a *AllocMetric) PopulateClosestNodes() {
	if len(a.nearMisses) == 0 {
		return
	}
	a.ClosestNodes = make([]*NodeShortfall, len(a.nearMisses))
	for i := range a.nearMisses {
		s := a.nearMisses[i].s
		a.ClosestNodes[i] = &s
	}
	a.nearMisses = nil
}
