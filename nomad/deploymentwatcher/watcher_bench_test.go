package deploymentwatcher

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// BenchmarkWatcherPass measures one watcher pass over active deployments
// whose allocs all have verdicts an eval has seen: the steady state of a
// pass woken by an unrelated change, where nothing is written.
func BenchmarkWatcherPass(b *testing.B) {
	for _, n := range []int{10, 200} {
		b.Run(fmt.Sprintf("deployments=%d/allocs=%d", n, n*10), func(b *testing.B) {
			now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
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
			healthy := true
			for i := 0; i < n; i++ {
				job := mock.Job(mock.JobID(fmt.Sprintf("job-%04d", i)), mock.Count(10))
				job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthCheck: structs.UpdateHealthCheckTaskStates,
					MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute}
				write(func(tx *state.Txn) error { return tx.UpsertJob(job) })
				stored, _ := s.JobByID(nil, job.Namespace, job.ID)
				d := structs.NewDeployment(stored, 50, now)
				d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 20}
				write(func(tx *state.Txn) error { return tx.UpsertDeployment(d) })
				var allocs []*structs.Allocation
				for k := 0; k < 10; k++ {
					a := mock.Alloc(mock.ForJob(stored, k), mock.ClientStatus(structs.AllocClientStatusRunning))
					a.DeploymentID = d.ID
					a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &healthy}
					allocs = append(allocs, a)
				}
				write(func(tx *state.Txn) error { return tx.UpsertAllocs(allocs) })
				ev := mock.Eval(mock.EvalForJob(stored))
				write(func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{ev}) })
			}
			w, err := New(Config{State: func() *state.StateStore { return s }, Raft: NewStateRaft(func() *state.StateStore { return s })})
			if err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := w.pass(memdb.NewWatchSet(), now); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if got := len(w.cfg.Raft.(*StateRaft).Evals()); got != 0 {
				b.Fatalf("the steady state wrote %d evals", got)
			}
		})
	}
}
