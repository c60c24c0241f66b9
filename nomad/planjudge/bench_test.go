package planjudge

import (
	"fmt"
	"testing"

	"github.com/opennomad/nomad/nomad/state/statetest"
)

// BenchmarkEvaluatePlan measures judging plans touching many nodes, one
// alloc each, inline and spread over goroutines.
func BenchmarkEvaluatePlan(b *testing.B) {
	for _, nodes := range []int{16, 64, 256, 1024} {
		s := statetest.NewStore(b)
		j := s.Job()
		bld := newPlan(j)
		for range nodes {
			n := s.Node()
			s.Alloc(j, n, 1000)
			bld.Place(newTestAlloc(j, n, 500))
		}
		plan := bld.Build()
		nodeIDs := planNodes(plan)
		v := View{State: view(s)}
		b.Run(fmt.Sprintf("nodes=%d/serial", nodes), func(b *testing.B) {
			for b.Loop() {
				judgeSerial(v, plan, nodeIDs)
			}
		})
		b.Run(fmt.Sprintf("nodes=%d/parallel=2", nodes), func(b *testing.B) {
			for b.Loop() {
				judgeParallel(v, plan, nodeIDs, 2)
			}
		})
	}
}

// BenchmarkRollingUpdate measures the leader's work on the plan of a
// destructive update: on each of N nodes that run four allocs, stop one
// and place its replacement. Judge, then build the Raft entry.
func BenchmarkRollingUpdate(b *testing.B) {
	for _, nodes := range []int{16, 256} {
		s := statetest.NewStore(b)
		j := s.Job()
		bld := newPlan(j)
		for range nodes {
			n := s.Node()
			old := s.Alloc(j, n, 500)
			for range 3 {
				s.Alloc(j, n, 500)
			}
			bld.Stop(old).Place(newTestAlloc(j, n, 500))
		}
		plan := bld.Build()
		view := view(s)
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v, err := Judge(View{State: view}, plan, 1)
				if err != nil || len(v.Result.RejectedNodes) > 0 {
					b.Fatalf("%v %v", err, v.Reasons)
				}
				BuildRequest(view, plan, v.Result, testEpoch)
			}
		})
	}
}
