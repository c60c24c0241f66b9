package nomad

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/nomad/worker/workertest"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// The scheduling invariants: many workers scheduling many jobs at once
// against one plan applier never overcommit a node, leave every eval
// terminal or blocked, and give every job exactly its count.
const (
	invariantWorkers = 8
	invariantNodes   = 40
	invariantJobs    = 300
	invariantCount   = 3
	// 40 nodes x floor(3900/150) = 1040 slots for 900 allocs: tight enough
	// that workers fight over the last free nodes, roomy enough that every
	// job fits in the end.
	invariantTaskCPU = 150
)

// testEpoch is the fake clocks' starting time.
var testEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestSchedulingInvariants(t *testing.T) {
	t.Run("racing test scheduler", func(t *testing.T) {
		runSchedulingInvariants(t, newRacingScheduler, true)
	})
	t.Run("builtin service scheduler", func(t *testing.T) {
		runSchedulingInvariants(t, scheduler.Builtin()[structs.JobTypeService], false)
	})
}

// signalEndpoints pings a channel after every ack and nack, so the test
// can wait for the broker to drain without polling.
type signalEndpoints struct {
	worker.Endpoints
	ch chan struct{}
	// plans and rejections count submitted plans and rejected nodes.
	plans, rejections atomic.Int64
}

func (s *signalEndpoints) SubmitPlan(req *structs.PlanRequest) (*structs.PlanResponse, error) {
	resp, err := s.Endpoints.SubmitPlan(req)
	s.plans.Add(1)
	if err == nil && resp.Result != nil {
		s.rejections.Add(int64(len(resp.Result.RejectedNodes)))
	}
	return resp, err
}

func (s *signalEndpoints) Ack(req *structs.EvalAckRequest) error {
	defer s.signal()
	return s.Endpoints.Ack(req)
}

func (s *signalEndpoints) Nack(req *structs.EvalAckRequest) error {
	defer s.signal()
	return s.Endpoints.Nack(req)
}

func (s *signalEndpoints) signal() {
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

func runSchedulingInvariants(t *testing.T, service scheduler.Factory, mustRace bool) {
	s := statetest.NewStore(t)
	leader := newLocalLeader(t, s, clock.NewFake(testEpoch), planapply.DefaultPipeline)
	for range invariantNodes {
		s.Node()
	}
	ep := &signalEndpoints{Endpoints: leader, ch: make(chan struct{}, 1)}
	cfg := worker.DefaultPoolConfig(worker.Config{
		Endpoints: ep,
		State:     s.StateStore,
		Factories: map[string]scheduler.Factory{structs.JobTypeService: service},
		Clock:     clock.NewFake(testEpoch),
	})
	cfg.NumSchedulers, cfg.MaxSchedulers = invariantWorkers, invariantWorkers
	pool, err := worker.NewPool(cfg)
	must.NoError(t, err)
	pool.Start(context.Background())
	t.Cleanup(pool.Shutdown)

	jobs := make([]*structs.Job, invariantJobs)
	for i := range jobs {
		jobs[i] = s.Job(mock.Count(invariantCount), mock.TaskResources(invariantTaskCPU, 256))
		must.NoError(t, leader.WriteEvals(&structs.Evaluation{
			ID: structs.GenerateUUID(), Namespace: jobs[i].Namespace, Priority: jobs[i].Priority,
			Type: jobs[i].Type, TriggeredBy: structs.EvalTriggerJobRegister, JobID: jobs[i].ID,
			Status: structs.EvalStatusPending,
		}))
	}

	// Wait until the broker has nothing left and every eval is settled.
	deadline := time.After(2 * time.Minute)
	for {
		ws := memdb.NewWatchSet()
		settled, why := invariantSettled(t, s, leader, ws)
		if settled {
			break
		}
		ctx, cancel := context.WithCancel(context.Background())
		select {
		case <-ws.WatchCh(ctx):
		case <-ep.ch:
		case <-deadline:
			cancel()
			t.Fatalf("scheduling did not settle within 2 minutes: %s", why)
		}
		cancel()
	}

	statetest.NoOvercommit(t, s.StateStore())
	for _, j := range jobs {
		allocs, err := s.StateStore().AllocsByJob(nil, j.Namespace, j.ID, false)
		must.NoError(t, err)
		live := 0
		for _, a := range allocs {
			if !a.TerminalStatus() {
				live++
			}
		}
		must.Eq(t, invariantCount, live, must.Sprintf("job %s", j.ID))
	}
	evals, err := s.StateStore().Evals(nil, structs.AllNamespaces)
	must.NoError(t, err)
	for _, e := range evals {
		must.True(t, e.TerminalStatus() || e.Status == structs.EvalStatusBlocked,
			must.Sprintf("eval %s is %s", e.ID, e.Status))
	}
	t.Logf("%d jobs, %d evals, %d plans, %d node rejections", len(jobs), len(evals), ep.plans.Load(), ep.rejections.Load())
	if mustRace {
		// The racing scheduler bin-packs, so eight of them collide: the
		// applier must have turned plans down for the test to mean much.
		must.Positive(t, ep.rejections.Load())
	}
}

// invariantSettled reports whether every eval in state is terminal or
// blocked and the broker holds nothing; otherwise it says what is left.
// It registers the evals table in ws.
func invariantSettled(t *testing.T, s *statetest.Store, l *workertest.Leader, ws memdb.WatchSet) (bool, string) {
	t.Helper()
	evals, err := s.StateStore().Evals(ws, structs.AllNamespaces)
	must.NoError(t, err)
	open := 0
	for _, e := range evals {
		if !e.TerminalStatus() && e.Status != structs.EvalStatusBlocked {
			open++
		}
	}
	st := l.Broker.Stats()
	busy := st.TotalReady + st.TotalUnacked + st.TotalPending + st.TotalWaiting
	if open == 0 && busy == 0 {
		return true, ""
	}
	return false, fmt.Sprintf("%d open evals; broker ready=%d unacked=%d pending=%d waiting=%d",
		open, st.TotalReady, st.TotalUnacked, st.TotalPending, st.TotalWaiting)
}
