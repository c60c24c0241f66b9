package worker

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// newTestPool starts a pool of n workers against a local leader.
func newTestPool(t *testing.T, n int) (*Pool, *workerHarness) {
	t.Helper()
	h := newWorkerHarness(t)
	cfg := DefaultPoolConfig(Config{
		Endpoints: h.ep,
		State:     func() *state.StateStore { return h.s.StateStore() },
		Factories: map[string]scheduler.Factory{structs.JobTypeService: factoryOf(
			func(_ scheduler.State, p scheduler.Planner, eval *structs.Evaluation) error {
				return completeEval(p, eval)
			})},
		Clock: h.clock,
	})
	cfg.NumSchedulers = n
	cfg.MaxSchedulers = 16
	p, err := NewPool(cfg)
	must.NoError(t, err)
	p.Start(context.Background())
	t.Cleanup(p.Shutdown)
	return p, h
}

// poolWorkers returns the pool's current workers.
func poolWorkers(p *Pool) []*Worker {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.workers)
}

func waitPaused(t *testing.T, ws []*Worker, paused int) {
	t.Helper()
	for i, w := range ws {
		if i < paused {
			waitForWorker(t, w, "paused", func(st Status, _ WorkloadStatus) bool { return st == Paused })
		} else {
			waitForWorker(t, w, "started", func(st Status, _ WorkloadStatus) bool { return st == Started })
		}
	}
}

func TestPool_StartsAndLists(t *testing.T) {
	p, h := newTestPool(t, 3)
	infos := p.Workers()
	must.Len(t, 3, infos)
	for _, w := range poolWorkers(p) {
		waitForWorker(t, w, "idle", idle)
	}
	for _, info := range p.Workers() {
		must.Eq(t, "Started", info.Status)
		must.Eq(t, "WaitingToDequeue", info.WorkloadStatus)
		must.Eq(t, AllSchedulers(), info.EnabledSchedulers)
		must.UUIDv4(t, info.ID)
	}
	// They work.
	e := h.register(h.s.Job())
	must.Eq(t, e.ID, receive(t, h.ep.acks, "ack"))
}

// TestPool_LeaderPausesThreeQuarters: floor(3n/4) of n workers.
func TestPool_LeaderPausesThreeQuarters(t *testing.T) {
	for n, paused := range map[int]int{1: 0, 2: 1, 4: 3, 5: 3, 8: 6} {
		p, _ := newTestPool(t, n)
		p.SetLeader(true)
		waitPaused(t, poolWorkers(p), paused)
		p.SetLeader(false)
		waitPaused(t, poolWorkers(p), 0)
	}
}

func TestPool_OperatorPause(t *testing.T) {
	p, h := newTestPool(t, 4)
	p.SetLeader(true)
	must.False(t, p.Paused())
	p.Pause()
	must.True(t, p.Paused())
	waitPaused(t, poolWorkers(p), 4)
	e := h.register(h.s.Job())
	p.Resume() // the leader still keeps 3 paused
	waitPaused(t, poolWorkers(p), 3)
	must.Eq(t, e.ID, receive(t, h.ep.acks, "ack"))
}

// TestPool_PauseOneWorker: an operator pauses and resumes one worker by
// its ID; the others keep working; resuming the pool resumes it too; an
// unknown ID is refused.
func TestPool_PauseOneWorker(t *testing.T) {
	p, h := newTestPool(t, 3)
	ws := poolWorkers(p)
	last := ws[2]
	must.NoError(t, p.SetWorkerPaused(last.ID(), true))
	must.True(t, p.WorkerPaused(last.ID()))
	waitForWorker(t, last, "paused", func(st Status, _ WorkloadStatus) bool { return st == Paused })
	for _, w := range ws[:2] {
		waitForWorker(t, w, "started", func(st Status, _ WorkloadStatus) bool { return st == Started })
	}
	e := h.register(h.s.Job())
	must.Eq(t, e.ID, receive(t, h.ep.acks, "ack"))

	must.NoError(t, p.SetWorkerPaused(last.ID(), false))
	must.False(t, p.WorkerPaused(last.ID()))
	waitPaused(t, ws, 0)

	must.NoError(t, p.SetWorkerPaused(ws[0].ID(), true))
	p.Resume()
	must.False(t, p.WorkerPaused(ws[0].ID()))
	waitPaused(t, ws, 0)

	err := p.SetWorkerPaused("no-such-worker", true)
	must.ErrorIs(t, err, ErrUnknownWorker)
	must.True(t, structs.IsKind(err, structs.ErrNotFound))
}

func TestPool_Resize(t *testing.T) {
	p, _ := newTestPool(t, 2)
	p.SetLeader(true)
	before := poolWorkers(p)

	must.NoError(t, p.SetSchedulerConfig(4, AllSchedulers()))
	after := poolWorkers(p)
	must.Len(t, 4, after)
	must.Eq(t, before, after[:2]) // grown, not replaced
	waitPaused(t, after, 3)       // the leader's share follows the size

	must.NoError(t, p.SetSchedulerConfig(1, AllSchedulers()))
	must.Len(t, 1, poolWorkers(p))
	for _, w := range after[1:] {
		<-w.Done()
	}
	waitPaused(t, poolWorkers(p), 0)

	// New schedulers: every worker is replaced.
	only := []string{structs.JobTypeBatch, structs.JobTypeCore}
	must.NoError(t, p.SetSchedulerConfig(2, only))
	replaced := poolWorkers(p)
	must.Len(t, 2, replaced)
	must.NotEq(t, after[0].ID(), replaced[0].ID())
	<-after[0].Done()
	num, enabled := p.SchedulerConfig()
	must.Eq(t, 2, num)
	must.Eq(t, only, enabled)
	must.Eq(t, only, p.Workers()[0].EnabledSchedulers)

	// Zero workers is allowed: the server schedules nothing.
	must.NoError(t, p.SetSchedulerConfig(0, only))
	must.SliceEmpty(t, p.Workers())
}

func TestPool_RejectsBadConfig(t *testing.T) {
	p, _ := newTestPool(t, 1)
	cases := map[string]struct {
		num     int
		enabled []string
		want    string
	}{
		"too many":     {17, AllSchedulers(), "num_schedulers must be between 0 and 16, got 17"},
		"negative":     {-1, AllSchedulers(), "got -1"},
		"without core": {1, []string{structs.JobTypeService}, `must include "_core"`},
		"unknown":      {1, []string{"_core", "gpu"}, `unknown scheduler "gpu"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := p.SetSchedulerConfig(tc.num, tc.enabled)
			must.ErrorIs(t, err, ErrInvalidSchedulerConfig)
			must.ErrorContains(t, err, tc.want)
			num, _ := p.SchedulerConfig()
			must.Eq(t, 1, num) // unchanged
		})
	}
	_, err := NewPool(PoolConfig{NumSchedulers: 1, EnabledSchedulers: AllSchedulers(), LeaderPausedFraction: 2})
	must.ErrorContains(t, err, "LeaderPausedFraction")
	_, err = NewPool(PoolConfig{NumSchedulers: 1, EnabledSchedulers: AllSchedulers()})
	must.ErrorContains(t, err, "Endpoints is required")
}

func TestPool_LeadershipObserver(t *testing.T) {
	p, _ := newTestPool(t, 4)
	p.LeadershipGained(context.Background())
	waitPaused(t, poolWorkers(p), 3)
	p.LeadershipLost()
	waitPaused(t, poolWorkers(p), 0)
}

// AllSchedulers names exactly the builtin schedulers and the garbage
// collector: the list and the factories cannot drift apart.
func TestAllSchedulers_AreTheBuiltinOnesAndCore(t *testing.T) {
	want := slices.Sorted(maps.Keys(scheduler.Builtin()))
	want = append(want, structs.JobTypeCore)
	slices.Sort(want)
	must.Eq(t, want, slices.Sorted(slices.Values(AllSchedulers())))
}
