package drainer

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// benchStore builds a cluster of nodes nodes and jobs service jobs of
// perJob healthy running allocs each, spread round-robin over the nodes,
// with the first draining nodes draining (one-hour deadline).
func benchStore(b *testing.B, nodes, jobs, perJob, draining int, now time.Time) *state.StateStore {
	b.Helper()
	s, err := state.NewStateStore(nil)
	if err != nil {
		b.Fatal(err)
	}
	index := uint64(1)
	write := func(fn func(tx *state.Txn) error) {
		index++
		if err := s.WithWriteTxn(index, fn); err != nil {
			b.Fatal(err)
		}
	}
	ids := make([]string, nodes)
	write(func(tx *state.Txn) error {
		for i := range ids {
			n := mock.Node()
			n.ID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			ids[i] = n.ID
			if err := tx.UpsertNode(n); err != nil {
				return err
			}
		}
		return nil
	})
	since := now.Add(-time.Hour)
	slot := 0
	for j := 0; j < jobs; j++ {
		job := mock.Job(mock.JobID(fmt.Sprintf("job-%04d", j)), mock.Count(perJob))
		job.TaskGroups[0].Migrate.MaxParallel = 2
		write(func(tx *state.Txn) error { return tx.UpsertJob(job) })
		stored, _ := s.JobByID(nil, job.Namespace, job.ID)
		allocs := make([]*structs.Allocation, 0, perJob)
		for i := 0; i < perJob; i++ {
			a := mock.Alloc(mock.ForJob(stored, i), mock.ClientStatus(structs.AllocClientStatusRunning))
			a.NodeID = ids[slot%nodes]
			slot++
			a.CreateTime = since.UnixNano()
			a.TaskStates = map[string]*structs.TaskState{"web": {State: structs.TaskStateRunning, StartedAt: since}}
			allocs = append(allocs, a)
		}
		write(func(tx *state.Txn) error { return tx.UpsertAllocs(allocs) })
	}
	write(func(tx *state.Txn) error {
		for _, id := range ids[:draining] {
			d := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}, ForceDeadline: now.Add(time.Hour), StartedAt: now}
			if err := tx.UpdateNodeDrain(id, d, false, now.Unix(), nil, nil); err != nil {
				return err
			}
		}
		return nil
	})
	return s
}

// BenchmarkDrainerPass measures one drainer pass (reading state and
// deciding, without the Raft writes) over 5,000 nodes and 50,000 allocs
// (500 service jobs of 100), with 0, 50 or 500 nodes draining.
func BenchmarkDrainerPass(b *testing.B) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, draining := range []int{0, 50, 500} {
		b.Run(fmt.Sprintf("nodes=5000/allocs=50000/draining=%d", draining), func(b *testing.B) {
			s := benchStore(b, 5000, 500, 100, draining, now)
			snap := s.Snapshot()
			runtime.GC() // the build's garbage is not the pass's
			b.ReportAllocs()
			b.ResetTimer()
			var marks int
			for i := 0; i < b.N; i++ {
				p, err := planPass(&snap.StateStore, nil, now)
				if err != nil {
					b.Fatal(err)
				}
				marks = len(p.marks)
			}
			b.ReportMetric(float64(marks), "marks/op")
		})
	}
}
