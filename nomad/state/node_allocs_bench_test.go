package state

import (
	"fmt"
	"testing"

	"github.com/shoenig/test/must"
)

// nodeAllocsCases are the loads of the node-alloc read benchmarks: 1,000
// nodes running 10 allocs each (10,000 one-alloc jobs) and 100 each (the
// 100,000-job flood).
var nodeAllocsCases = []int{10, 100}

// benchBusyNodes runs bench for each case over a snapshot of 1,000 nodes
// holding perNode live allocs each.
func benchBusyNodes(b *testing.B, bench func(b *testing.B, snap *StateSnapshot, nodeIDs []string, perNode int)) {
	for _, perNode := range nodeAllocsCases {
		b.Run(fmt.Sprintf("nodes=1000/allocs=%d", perNode), func(b *testing.B) {
			s, nodes, job := benchCluster(b, 1_000)
			must.NoError(b, s.UpsertAllocs(3, benchAllocs(job, nodes, perNode*len(nodes))))
			ids := make([]string, len(nodes))
			for i, n := range nodes {
				ids[i] = n.ID
			}
			snap := s.Snapshot()
			b.ReportAllocs()
			b.ResetTimer()
			bench(b, snap, ids, perNode)
		})
	}
}

// BenchmarkNodeLiveAllocs reads the live allocs of one node, as the plan
// judge does for every node of a plan and the scheduler for every
// candidate it loads.
func BenchmarkNodeLiveAllocs(b *testing.B) {
	benchBusyNodes(b, func(b *testing.B, snap *StateSnapshot, ids []string, perNode int) {
		i := 0
		for b.Loop() {
			allocs, err := snap.AllocsByNodeTerminal(nil, ids[i%len(ids)], false)
			if err != nil || len(allocs) != perNode {
				b.Fatalf("got %d allocs, %v", len(allocs), err)
			}
			i++
		}
	})
}

// BenchmarkNodeAllAllocs reads every alloc of one node, as a client's
// poll of its allocations does on every wake.
func BenchmarkNodeAllAllocs(b *testing.B) {
	benchBusyNodes(b, func(b *testing.B, snap *StateSnapshot, ids []string, perNode int) {
		i := 0
		for b.Loop() {
			allocs, err := snap.AllocsByNode(nil, ids[i%len(ids)])
			if err != nil || len(allocs) != perNode {
				b.Fatalf("got %d allocs, %v", len(allocs), err)
			}
			i++
		}
	})
}

// BenchmarkClientAllocIndexes answers a client's poll of its allocations
// (Node.GetClientAllocs), which runs on every wake of the client.
func BenchmarkClientAllocIndexes(b *testing.B) {
	benchBusyNodes(b, func(b *testing.B, snap *StateSnapshot, ids []string, perNode int) {
		i := 0
		for b.Loop() {
			allocs, _, err := snap.ClientAllocIndexes(ids[i%len(ids)])
			if err != nil || len(allocs) != perNode {
				b.Fatalf("got %d allocs, %v", len(allocs), err)
			}
			i++
		}
	})
}
