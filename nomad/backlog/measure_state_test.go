package backlog

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// floodStore is a state store in the middle of a flood of
// single-allocation jobs: 100,000 jobs, each with its evaluation (40%
// still pending, 1% blocked on memory, the rest complete) and, for the
// 60% already scheduled, its allocation (half of them still starting).
// Built once: the benchmark's runs share it.
var floodStore = sync.OnceValues(func() (*state.StateStore, error) {
	const jobs, perTxn = 100_000, 1_000
	s, err := state.NewStateStore(nil)
	if err != nil {
		return nil, err
	}
	node := mock.Node()
	index := uint64(1)
	if err := s.WithWriteTxn(index, func(tx *state.Txn) error { return tx.UpsertNode(node) }); err != nil {
		return nil, err
	}
	memory := &structs.AllocMetric{NodesEvaluated: 1, NodesExhausted: 1, DimensionExhausted: map[string]int{"memory": 1}}
	for first := 0; first < jobs; first += perTxn {
		index++
		err := s.WithWriteTxn(index, func(tx *state.Txn) error {
			for i := first; i < first+perTxn; i++ {
				j := mock.Job(mock.JobID(fmt.Sprintf("flood-%d", i)), mock.Count(1))
				if err := tx.UpsertJob(j); err != nil {
					return err
				}
				e := mock.Eval(mock.EvalForJob(j))
				e.CreateTime = t0.Add(time.Duration(i) * time.Millisecond).UnixNano()
				switch {
				case i%100 == 0:
					e.Status = structs.EvalStatusBlocked
					e.FailedTGAllocs = map[string]*structs.AllocMetric{j.TaskGroups[0].Name: memory}
					e.QueuedAllocations = map[string]int{j.TaskGroups[0].Name: 1}
				case i%10 < 4:
					e.Status = structs.EvalStatusPending
				default:
					e.Status = structs.EvalStatusComplete
				}
				if err := tx.UpsertEvals([]*structs.Evaluation{e}); err != nil {
					return err
				}
				if e.Status != structs.EvalStatusComplete {
					continue
				}
				a := mock.SizedAlloc(j, node, 20, 16)
				a.EvalID = e.ID
				if i%2 == 0 {
					a.ClientStatus = structs.AllocClientStatusRunning
				}
				if err := tx.UpsertAllocs([]*structs.Allocation{a}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return s, nil
})

// BenchmarkMeasure measures the backlog of floodStore. Its cost follows
// the blocked evaluations (1,000 here, each with its chain walked), not
// the 100,000 jobs.
func BenchmarkMeasure(b *testing.B) {
	s, err := floodStore()
	if err != nil {
		b.Fatal(err)
	}
	now := t0.Add(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Measure(s, now); err != nil {
			b.Fatal(err)
		}
	}
}
