package deploymentwatcher

import (
	"fmt"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// steadyDeployment is one deployment of a steadyFixture with its allocs.
type steadyDeployment struct {
	d      *structs.Deployment
	allocs []*structs.Allocation
}

// steadyFixture writes n running deployments of allocsEach healthy
// allocs each, whose verdicts an eval has already seen: a pass over them
// writes nothing. It returns the store and the deployments.
func steadyFixture(tb testing.TB, now time.Time, n, allocsEach int) (*state.StateStore, []steadyDeployment) {
	tb.Helper()
	healthy := true
	return deploymentsFixture(tb, now, n, allocsEach, func(a *structs.Allocation) {
		a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &healthy}
	})
}

// deploymentsFixture writes n running deployments of allocsEach running
// allocs each, as edit leaves them, and an eval of each job. It returns
// the store and the deployments.
func deploymentsFixture(tb testing.TB, now time.Time, n, allocsEach int, edit func(a *structs.Allocation)) (*state.StateStore, []steadyDeployment) {
	tb.Helper()
	s, err := state.NewStateStore(nil)
	if err != nil {
		tb.Fatal(err)
	}
	index := uint64(1)
	write := func(fn func(tx *state.Txn) error) {
		index++
		if err := s.WithWriteTxn(index, fn); err != nil {
			tb.Fatal(err)
		}
	}
	out := make([]steadyDeployment, 0, n)
	for i := 0; i < n; i++ {
		job := mock.Job(mock.JobID(fmt.Sprintf("job-%04d", i)), mock.Count(allocsEach))
		job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthCheck: structs.UpdateHealthCheckTaskStates,
			MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute}
		write(func(tx *state.Txn) error { return tx.UpsertJob(job) })
		stored, _ := s.JobByID(nil, job.Namespace, job.ID)
		d := structs.NewDeployment(stored, 50, now)
		d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 2 * allocsEach}
		write(func(tx *state.Txn) error { return tx.UpsertDeployment(d) })
		var allocs []*structs.Allocation
		for k := 0; k < allocsEach; k++ {
			a := mock.Alloc(mock.ForJob(stored, k), mock.ClientStatus(structs.AllocClientStatusRunning))
			a.DeploymentID = d.ID
			edit(a)
			allocs = append(allocs, a)
		}
		write(func(tx *state.Txn) error { return tx.UpsertAllocs(allocs) })
		ev := mock.Eval(mock.EvalForJob(stored))
		write(func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{ev}) })
		out = append(out, steadyDeployment{d: d, allocs: allocs})
	}
	return s, out
}
