package planjudge

import (
	"fmt"
	"testing"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// BenchmarkJudgeOneAllocBusyNodes judges plans placing one alloc on one
// of 1,000 nodes that run 10 or 100 live allocs each: the leader's work
// per plan of a one-alloc job in a full cluster, dominated by reading the
// node's allocs.
func BenchmarkJudgeOneAllocBusyNodes(b *testing.B) {
	for _, perNode := range []int{10, 100} {
		b.Run(fmt.Sprintf("nodes=1000/allocs=%d", perNode), func(b *testing.B) {
			s := statetest.NewStore(b)
			j := s.Job()
			nodes := make([]*structs.Node, 1000)
			var allocs []*structs.Allocation
			for i := range nodes {
				nodes[i] = mock.Node()
				for range perNode {
					a := mock.SizedAlloc(j, nodes[i], 10, 10)
					a.ClientStatus = structs.AllocClientStatusRunning
					allocs = append(allocs, a)
				}
			}
			s.MustWrite(func(tx *state.Txn) error {
				for _, n := range nodes {
					if err := tx.UpsertNode(n); err != nil {
						return err
					}
				}
				return tx.UpsertAllocs(allocs)
			})
			plans := make([]*structs.Plan, len(nodes))
			for i, n := range nodes {
				plans[i] = newPlan(j).Place(newTestAlloc(j, n, 500)).Build()
			}
			v := View{State: view(s)}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				vd, err := Judge(v, plans[i%len(plans)], 1)
				if err != nil || len(vd.Result.RejectedNodes) > 0 {
					b.Fatalf("%v %v", err, vd.Reasons)
				}
				i++
			}
		})
	}
}
