package broker

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/opennomad/nomad/structs"
)

// discardEnqueuer counts released evals and drops them.
type discardEnqueuer struct{ n int }

func (d *discardEnqueuer) EnqueueAll(evals map[*structs.Evaluation]string) { d.n += len(evals) }

// benchBlockedEval is the i-th blocked eval: its own job, eligible for one
// of classes computed classes and ineligible for the others.
func benchBlockedEval(i, classes int) *structs.Evaluation {
	id := strconv.Itoa(i)
	elig := make(map[string]bool, classes)
	for c := range classes {
		elig["v1:"+strconv.Itoa(c)] = c == i%classes
	}
	return &structs.Evaluation{
		ID:               id,
		Namespace:        structs.DefaultNamespace,
		JobID:            "job-" + id,
		Type:             structs.JobTypeService,
		Priority:         50,
		Status:           structs.EvalStatusBlocked,
		TriggeredBy:      structs.EvalTriggerQueuedAllocs,
		ClassEligibility: elig,
		SnapshotIndex:    1,
		CreateIndex:      uint64(i + 1),
	}
}

// BenchmarkBlockedEvals_FSMCall is the cost the FSM's apply goroutine pays
// per Block or Unblock call: an append to the inbox.
func BenchmarkBlockedEvals_FSMCall(b *testing.B) {
	tracker, err := NewBlockedEvals(&discardEnqueuer{}, DefaultBlockedEvalsConfig())
	if err != nil {
		b.Fatal(err)
	}
	tracker.SetEnabled(true)
	defer tracker.SetEnabled(false)
	e := benchBlockedEval(0, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			tracker.Block(e)
		} else {
			tracker.Unblock("v1:0", uint64(i))
		}
	}
}

// BenchmarkBlockedEvals_BlockUnblock blocks 1,000 evals spread over
// several computed classes, then releases them one class at a time, as
// nodes of each class gain capacity. One op is that whole cycle; the
// eval/s metric counts evals blocked and released.
func BenchmarkBlockedEvals_BlockUnblock(b *testing.B) {
	const population = 1000
	for _, classes := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("classes=%d", classes), func(b *testing.B) {
			sink := &discardEnqueuer{}
			tracker, err := NewBlockedEvals(sink, DefaultBlockedEvalsConfig())
			if err != nil {
				b.Fatal(err)
			}
			tracker.SetEnabled(true)
			defer tracker.SetEnabled(false)
			evals := make([]*structs.Evaluation, population)
			for i := range evals {
				evals[i] = benchBlockedEval(i, classes)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var index uint64 = 1
			for range b.N {
				for _, e := range evals {
					// Each cycle's evals saw the latest changes, so the
					// missed-unblock check keeps them blocked.
					e.SnapshotIndex = index
					tracker.Block(e)
				}
				tracker.processInbox()
				for c := range classes {
					index++
					tracker.Unblock("v1:"+strconv.Itoa(c), index)
				}
				tracker.processInbox()
			}
			b.StopTimer()
			if sink.n != b.N*population {
				b.Fatalf("released %d of %d", sink.n, b.N*population)
			}
			b.ReportMetric(float64(b.N*population)/b.Elapsed().Seconds(), "evals/s")
		})
	}
}
