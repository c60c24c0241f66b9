package planapply_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/planapply/planapplytest"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// BenchmarkPlanApplier measures plans and allocs committed per second by
// one applier fed by many submitters (as workers would), over the Raft
// twin:
//
//   - latency=0: the twin applies at once; what is measured is the
//     applier's own cost (judging, building the entry, the FSM apply on
//     the same two cores) and the pipeline's bookkeeping;
//   - latency=1ms: the twin makes each batch of entries durable in 1 ms,
//     like Raft with group commit and fsync, so the pipeline depth
//     decides how many plans share one fsync.
//
// Plans land round robin on 1000 nodes large enough that nothing is
// rejected; at -benchtime=3000x a node ends with 3 or 30 allocs.
func BenchmarkPlanApplier(b *testing.B) {
	type bench struct {
		latency  time.Duration
		allocs   int
		pipeline int
	}
	var cases []bench
	for _, allocs := range []int{1, 10} {
		for _, p := range []int{1, 4} {
			cases = append(cases, bench{0, allocs, p})
		}
	}
	for _, p := range []int{1, 2, 4, 8, 16, 32} {
		cases = append(cases, bench{time.Millisecond, 1, p})
	}
	for _, p := range []int{1, 8} {
		cases = append(cases, bench{time.Millisecond, 10, p})
	}
	for _, c := range cases {
		name := fmt.Sprintf("latency=%v/allocs=%d/pipeline=%d", c.latency, c.allocs, c.pipeline)
		b.Run(name, func(b *testing.B) { benchPlanApplier(b, c.latency, c.allocs, c.pipeline) })
	}
}

func benchPlanApplier(b *testing.B, latency time.Duration, allocsPerPlan, pipeline int) {
	const (
		nodes      = 1000
		submitters = 32
	)
	s := statetest.NewStore(b)
	var ns []*structs.Node
	for range nodes {
		ns = append(ns, s.Node(mock.NodeResources(1<<40, 1<<40)))
	}
	j := s.Job()
	evals := make([]*structs.Evaluation, submitters)
	for i := range evals {
		evals[i] = s.Eval(j)
	}

	raft := planapplytest.NewAutoRaft(b, s, latency, nil)
	clk := clock.Real{}
	q := planapply.NewQueue(clk)
	q.SetEnabled(true)
	out := &fakeOutstanding{}
	for _, e := range evals {
		out.set(e.ID, "token")
	}
	a, err := planapply.New(planapply.Config{
		Queue: q, Evals: out, Raft: raft, Clock: clk, Pipeline: pipeline,
		State: s.StateStore,
	})
	must.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		q.SetEnabled(false)
		cancel()
		<-done
	}()

	var (
		next   atomic.Int64
		wg     sync.WaitGroup
		failed atomic.Int64
	)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for g := range submitters {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				plan := evals[g].MakePlan(j)
				plan.EvalToken = "token"
				for k := range allocsPerPlan {
					plan.AppendAlloc(statetest.SizedAlloc(j, ns[(int(i)+k)%nodes], 1))
				}
				f, err := q.Enqueue(plan)
				if err == nil {
					_, err = f.Wait()
				}
				if err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d plans failed", n)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "plans/s")
	b.ReportMetric(float64(b.N*allocsPerPlan)/elapsed.Seconds(), "allocs/s")
}
