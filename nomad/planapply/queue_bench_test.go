package planapply

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/opennomad/nomad/structs"
)

// BenchmarkPlanQueue_Serial enqueues, dequeues and answers one plan at a
// time on one goroutine.
func BenchmarkPlanQueue_Serial(b *testing.B) {
	q := NewQueue(nil)
	q.SetEnabled(true)
	ctx := context.Background()
	plan := &structs.Plan{Priority: 50}
	result := &structs.PlanResult{}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		fut, err := q.Enqueue(plan)
		if err != nil {
			b.Fatal(err)
		}
		p, err := q.Dequeue(ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		p.Respond(result, nil)
		if _, err := fut.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanQueue_Submitters has several submitters, each waiting for
// its plan's answer before the next, and one applier goroutine: the shape
// of workers calling Plan.Submit. ns/op is wall time per plan.
func BenchmarkPlanQueue_Submitters(b *testing.B) {
	for _, submitters := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("submitters=%d", submitters), func(b *testing.B) {
			q := NewQueue(nil)
			q.SetEnabled(true)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			result := &structs.PlanResult{}
			go func() {
				for {
					p, err := q.Dequeue(ctx, 0)
					if err != nil {
						return
					}
					p.Respond(result, nil)
				}
			}()
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for s := range submitters {
				n := b.N / submitters
				if s < b.N%submitters {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range n {
						fut, err := q.Enqueue(&structs.Plan{Priority: i % 100})
						if err != nil {
							b.Error(err)
							return
						}
						if _, err := fut.Wait(); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "plans/s")
		})
	}
}
