package nomad

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// Three servers with a memory figure of 1000 MiB each and injected heap
// readings. A follower's heap past 70% of its figure makes the leader
// refuse registrations sent to any server, naming that follower, with
// nothing written; the refusals go on while it is between the marks and
// stop once it is under 60%.
func TestMemoryBackpressure_CountsTheFollowers(t *testing.T) {
	sink := metricstest.WithInmem(t)
	const limit = 1000 << 20
	heaps := make([]atomic.Uint64, 3)
	next := 0
	c := newInmemCluster(t, 3, func(cfg *Config) {
		heap := &heaps[next]
		cfg.NodeName = fmt.Sprintf("server-%d", next)
		next++
		heap.Store(100 << 20)
		cfg.MemoryLimit = limit
		cfg.MemoryCheckInterval = 5 * time.Millisecond
		cfg.HeapLive = heap.Load
	})
	leader := leaderOf(t, c.servers)
	follower := c.servers[(c.index(leader)+1)%3]
	followerHeap := &heaps[c.index(follower)]

	registerJob(t, follower, mock.Job())

	followerHeap.Store(700 << 20)
	waitFor(t, func() bool { refusing, _ := leader.memory.Refusing(); return refusing })
	before := latestIndex(t, leader)
	err := follower.RPC("Job.Register", &structs.JobRegisterRequest{Job: mock.Job()}, &structs.JobRegisterResponse{})
	must.True(t, structs.IsKind(err, structs.ErrMemoryPressure), must.Sprintf("%v", err))
	must.StrContains(t, err.Error(), `server "`+follower.config.NodeName+`" holds 700 MiB of live heap, its memory limit is 1000 MiB`)
	wait, ok := structs.RetryAfterOf(err)
	must.True(t, ok)
	must.Eq(t, 5*time.Second, wait)
	must.Eq(t, before, latestIndex(t, leader), must.Sprint("a refused write reaches no Raft entry"))

	// Between the marks it stays refused; under the low mark it lets go.
	followerHeap.Store(650 << 20)
	waitFor(t, func() bool { _, worst := leader.memory.Refusing(); return worst.HeapLive == 650<<20 })
	err = leader.RPC("Job.Register", &structs.JobRegisterRequest{Job: mock.Job()}, &structs.JobRegisterResponse{})
	var refusal *structs.MemoryPressureError
	must.True(t, errors.As(err, &refusal), must.Sprintf("%v", err))
	must.Eq(t, follower.config.NodeName, refusal.Server)

	followerHeap.Store(590 << 20)
	waitFor(t, func() bool { refusing, _ := leader.memory.Refusing(); return !refusing })
	registerJob(t, leader, mock.Job())

	must.Eq(t, 2.0, metricstest.Counter(t, sink, "nomad.nomad.backpressure.refused;method=Job.Register;reason=memory"))
	pressure, _ := metricstest.Gauge(t, sink, "nomad.nomad.backpressure.memory_pressure")
	must.Eq(t, 0, pressure)
	heap, _ := metricstest.Gauge(t, sink, "nomad.nomad.backpressure.heap_live_bytes;server="+follower.config.NodeName)
	must.Eq(t, float32(590<<20), heap)
}

// A server without a memory figure never refuses for memory, whatever
// its heap.
func TestMemoryBackpressure_NoFigureNoRefusal(t *testing.T) {
	sink := metricstest.WithInmem(t)
	s := newTestServer(t, func(c *Config) {
		c.MemoryCheckInterval = 5 * time.Millisecond
		c.HeapLive = func() uint64 { return 1 << 40 }
	})
	waitFor(t, func() bool {
		heap, ok := metricstest.Gauge(t, sink, "nomad.nomad.backpressure.heap_live_bytes;server=test")
		return ok && heap == 1<<40
	})
	registerJob(t, s, mock.Job())
	refusing, _ := s.memory.Refusing()
	must.False(t, refusing)
}
