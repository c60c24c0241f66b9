package nomad

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// Benchmarks of the whole server through real Raft: the log in raft-wal
// on a temp dir with fsync, as in production (benchServer).

// benchServerWith is benchServer with the configuration changed by cb and
// heartbeats and nack timers long enough not to fire during a run.
func benchServerWith(b *testing.B, cb func(*Config)) *Server {
	b.Helper()
	dir := b.TempDir()
	cfg := testConfig()
	cfg.DevMode = false
	cfg.DataDir = dir
	cfg.MinHeartbeatTTL = time.Hour
	cfg.EvalNackTimeout = time.Hour
	if cb != nil {
		cb(cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Shutdown() })
	deadline := time.Now().Add(10 * time.Second)
	for !s.isEstablishedLeader() {
		if time.Now().After(deadline) {
			b.Fatal("no leader")
		}
		time.Sleep(time.Millisecond)
	}
	return s
}

// benchNodes writes n ready nodes in one Raft entry each, straight
// through Raft so that no heartbeat timer is armed for them.
func benchNodes(b *testing.B, s *Server, n int, opts ...mock.NodeOption) []*structs.Node {
	b.Helper()
	nodes := make([]*structs.Node, n)
	for i := range nodes {
		nodes[i] = mock.Node(opts...)
		if _, _, err := s.raftApply(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: nodes[i]}); err != nil {
			b.Fatal(err)
		}
	}
	return nodes
}

// BenchmarkServerPlanApply measures plans and allocs committed per second
// by the server's plan applier over real Raft with fsync: 32 submitters
// (standing for workers, each holding a dequeued eval) send plans through
// Plan.Submit and wait for the answer. Plans place 1 or 10 allocs round
// robin on 1,000 nodes too large to reject anything. The pipeline depth
// is 1 (the classic applier) or the default.
func BenchmarkServerPlanApply(b *testing.B) {
	for _, allocs := range []int{1, 10} {
		for _, pipeline := range []int{1, planapply.DefaultPipeline} {
			b.Run(fmt.Sprintf("allocs=%d/pipeline=%d", allocs, pipeline), func(b *testing.B) {
				benchServerPlanApply(b, allocs, pipeline)
			})
		}
	}
}

func benchServerPlanApply(b *testing.B, allocsPerPlan, pipeline int) {
	const submitters = 32
	s := benchServerWith(b, func(c *Config) { c.PlanApplyPipeline = pipeline })
	nodes := benchNodes(b, s, 1000, mock.NodeResources(1<<40, 1<<40))

	type held struct {
		job   *structs.Job
		eval  *structs.Evaluation
		token string
	}
	hold := make([]held, submitters)
	for i := range hold {
		job := mock.Job()
		var reg structs.JobRegisterResponse
		if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reg); err != nil {
			b.Fatal(err)
		}
		var deq structs.EvalDequeueResponse
		if err := s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService},
			Timeout: time.Second, SchedulerVersion: structs.SchedulerVersion}, &deq); err != nil || deq.Eval == nil {
			b.Fatalf("dequeue: %v", err)
		}
		stored, err := s.State().JobByID(nil, deq.Eval.Namespace, deq.Eval.JobID)
		if err != nil {
			b.Fatal(err)
		}
		hold[i] = held{job: stored, eval: deq.Eval, token: deq.Token}
	}

	var (
		next   atomic.Int64
		failed atomic.Int64
		wg     sync.WaitGroup
	)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for g := range submitters {
		wg.Go(func() {
			h := hold[g]
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				plan := h.eval.MakePlan(h.job)
				plan.EvalToken = h.token
				for k := range allocsPerPlan {
					a := statetest.SizedAlloc(h.job, nodes[(int(i)*allocsPerPlan+k)%len(nodes)], 1)
					a.EvalID = h.eval.ID
					plan.AppendAlloc(a)
				}
				var reply structs.PlanResponse
				if err := s.RPC("Plan.Submit", &structs.PlanRequest{Plan: plan}, &reply); err != nil {
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

// BenchmarkServerPipeline measures registrations turned into placements
// per second by the whole server: 16 callers register b.N service jobs of
// 3 allocs each through Job.Register, and the clock stops once every
// alloc is committed and every eval is complete. Everything runs in
// process on the benchmark's cores: Raft with fsync, FSM, broker, the
// workers running the builtin service scheduler, the applier at its
// default depth. Workers are the machine's CPU count (the default) with
// the leader's default three quarters paused or all working, or eight
// all working: each eval waits for two fsyncs (its plan and its eval
// update), so more workers overlap more of them.
func BenchmarkServerPipeline(b *testing.B) {
	cpus := DefaultConfig().NumSchedulers
	for _, c := range []struct {
		workers int
		paused  float64
	}{{cpus, worker.DefaultLeaderPausedFraction}, {cpus, 0}, {8, 0}} {
		b.Run(fmt.Sprintf("workers=%d/leader_paused=%v", c.workers, c.paused), func(b *testing.B) {
			benchServerPipeline(b, c.workers, c.paused)
		})
	}
}

func benchServerPipeline(b *testing.B, workers int, paused float64) {
	const (
		callers = 16
		count   = 3
	)
	s := benchServerWith(b, func(c *Config) {
		c.NumSchedulers = workers
		c.LeaderPausedFraction = paused
	})
	benchNodes(b, s, 100)
	jobs := make([]*structs.Job, b.N)
	for i := range jobs {
		jobs[i] = mock.Job(mock.Count(count), mock.TaskResources(10, 16))
	}

	var (
		next   atomic.Int64
		failed atomic.Int64
		wg     sync.WaitGroup
	)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range callers {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				var reply structs.JobRegisterResponse
				if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: jobs[i-1]}, &reply); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d registrations failed", n)
	}
	want := b.N * count
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		ws := memdb.NewWatchSet()
		allocs, err := s.State().Allocs(ws, structs.AllNamespaces)
		if err != nil {
			b.Fatal(err)
		}
		pending, err := s.State().EvalsByStatus(ws, structs.EvalStatusPending)
		if err != nil {
			b.Fatal(err)
		}
		if len(allocs) >= want && len(pending) == 0 {
			break
		}
		if err := ws.WatchCtx(ctx); err != nil {
			b.Fatalf("%d of %d allocs placed, %d evals pending", len(allocs), want, len(pending))
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
	b.ReportMetric(float64(want)/elapsed.Seconds(), "allocs/s")
}
