package nomad

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// BenchmarkWorkers measures evaluations per second through the whole
// in-process pipeline: broker, workers (waiting for the eval's index,
// snapshot, scheduler, plan submission, eval update, ack), plan applier
// and the Raft twin committing at once. The scheduler places one alloc
// per eval, so the figure is the pipeline's overhead per eval, not a
// scheduler's cost.
func BenchmarkWorkers(b *testing.B) {
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) { benchWorkers(b, workers) })
	}
}

func benchWorkers(b *testing.B, workers int) {
	s := statetest.NewStore(b)
	leader := newLocalLeader(b, s, clock.Real{}, planapply.DefaultPipeline)
	var nodes []*structs.Node
	for range 100 {
		nodes = append(nodes, s.Node(mock.NodeResources(1<<40, 1<<40)))
	}
	j := s.Job()
	acked := make(chan struct{}, b.N)
	ep := &signalEndpoints{Endpoints: leader, ch: acked}
	var next atomic.Int64
	place := factoryOf(func(_ scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error {
		plan := eval.MakePlan(j)
		plan.AppendAlloc(statetest.SizedAlloc(j, nodes[next.Add(1)%int64(len(nodes))], 1))
		if _, _, err := p.SubmitPlan(plan); err != nil {
			return err
		}
		return completeEval(p, eval)
	})
	cfg := worker.DefaultPoolConfig(worker.Config{
		Endpoints: ep,
		State:     s.StateStore,
		Factories: map[string]scheduler.Factory{structs.JobTypeService: place},
	})
	cfg.NumSchedulers, cfg.MaxSchedulers = workers, workers
	pool, err := worker.NewPool(cfg)
	must.NoError(b, err)

	// One job per eval, so the broker hands them out in parallel.
	evals := make([]*structs.Evaluation, b.N)
	for i := range evals {
		job := s.Job()
		evals[i] = &structs.Evaluation{
			ID: structs.GenerateUUID(), Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
			TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID, Status: structs.EvalStatusPending,
		}
	}
	must.NoError(b, leader.WriteEvals(evals...))

	b.ResetTimer()
	start := time.Now()
	pool.Start(context.Background())
	for range b.N {
		<-acked
	}
	elapsed := time.Since(start)
	b.StopTimer()
	pool.Shutdown()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "evals/s")
}

// schedulerFunc is a scheduler made of one function, for tests.
type schedulerFunc func(eval *structs.Evaluation) error

func (f schedulerFunc) Process(eval *structs.Evaluation) error { return f(eval) }

// factoryOf builds a Factory whose schedulers run fn.
func factoryOf(fn func(st scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error) scheduler.Factory {
	return func(_ *scheduler.Config, st scheduler.State, p scheduler.Planner) scheduler.Scheduler {
		return schedulerFunc(func(eval *structs.Evaluation) error { return fn(st, p, eval) })
	}
}

// completeEval marks the eval complete through the planner.
func completeEval(p scheduler.Planner, eval *structs.Evaluation) error {
	e := eval.Copy()
	e.Status = structs.EvalStatusComplete
	return p.UpdateEval(e)
}
