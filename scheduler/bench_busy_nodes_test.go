package scheduler

import (
	"fmt"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// BenchmarkServiceSmallJobBusyNodes is BenchmarkServiceSmallJob on 1,000
// nodes that already run 10 or 100 live allocs each (of other, small
// jobs): the scheduler loads the allocs of every candidate it scores, so
// its cost grows with allocs per node.
func BenchmarkServiceSmallJobBusyNodes(b *testing.B) {
	for _, perNode := range []int{10, 100} {
		for _, count := range []int{1, 10} {
			b.Run(fmt.Sprintf("nodes=1000/allocs=%d/count=%d", perNode, count), func(b *testing.B) {
				job := mock.Job(mock.Count(10), mock.NoPorts())
				job.TaskGroups[0].Count = count
				filler := mock.Job(mock.NoPorts(), mock.TaskResources(10, 10))
				snap := benchCluster(b, 1000, job, func(nodes []*structs.Node) []*structs.Allocation {
					var out []*structs.Allocation
					for _, n := range nodes {
						for i := range perNode {
							out = append(out, mock.Alloc(mock.ForJob(filler, i), mock.OnNode(n),
								mock.ClientStatus(structs.AllocClientStatusRunning)))
						}
					}
					return out
				}, filler)
				benchProcess(b, snap, job)
			})
		}
	}
}
