package scheduler

import (
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestCandidateSet_UsagePages: usage slots are paged by usagePage nodes
// and the last page holds only the nodes left; every node's slot loads its
// own node's capacity, across the page boundary.
func TestCandidateSet_UsagePages(t *testing.T) {
	for _, n := range []int{1, usagePage - 1, usagePage, usagePage + 3} {
		nodes := make([]*structs.Node, n)
		for i := range nodes {
			nodes[i] = mock.Node(mock.NodeResources(int64(1000+i), 4096))
		}
		job := mock.Job(mock.Count(1))
		ctx := newTestContext(t, job, nodes)
		cs := ctx.cands
		if len(cs.nodes) != n {
			t.Fatalf("%d nodes: %d candidates", n, len(cs.nodes))
		}
		for i := range cs.nodes {
			u := cs.load(ctx, int32(i))
			if want := cs.nodes[i].Comparable().Flattened.Cpu.CpuShares; u.capCPU != want {
				t.Fatalf("%d nodes: node %d: capacity %d, want %d", n, i, u.capCPU, want)
			}
		}
		last := cs.usage[len(cs.usage)-1]
		if want := n - (len(cs.usage)-1)*usagePage; len(last) != want {
			t.Fatalf("%d nodes: last page holds %d slots, want %d", n, len(last), want)
		}
	}
}
