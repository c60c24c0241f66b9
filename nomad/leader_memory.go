package nomad

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/mempressure"
	"github.com/opennomad/nomad/structs"
)

// The leader gathers every server's live heap with an RPC to each
// (Status.MemoryStats), every MemoryCheckInterval, the way its health
// report gathers their Raft stats. Gossip tags were the other way: they
// would spread the figure without a call, but a tag change is a gossip
// broadcast to every agent, clients included, that converges in an
// unbounded time, and the figure changes every second during a flood;
// the direct call costs one small round trip per follower and is as
// fresh as the interval.

// memoryStatsTimeout bounds the wait for a follower's reading; one that
// does not answer in time keeps its last reading.
const memoryStatsTimeout = time.Second

// Metric names of the memory backpressure, published by the leader.
var (
	metricHeapLive       = []string{"nomad", "backpressure", "heap_live_bytes"}
	metricMemoryLimit    = []string{"nomad", "backpressure", "memory_limit_bytes"}
	metricMemoryPressure = []string{"nomad", "backpressure", "memory_pressure"}
)

// localMemory is this server's reading.
func (s *Server) localMemory() structs.ServerMemory {
	read := s.config.HeapLive
	if read == nil {
		read = mempressure.LiveHeap
	}
	return structs.ServerMemory{Server: s.config.NodeName, HeapLive: read(), Limit: s.config.MemoryLimit}
}

// watchMemory gathers the servers' readings on every tick while this
// server leads and turns the memory backpressure on or off. Leaving
// leadership clears it.
func (s *Server) watchMemory(ctx context.Context, ticks <-chan struct{}) {
	defer s.memory.Reset()
	g := &memoryGatherer{s: s, last: map[raft.ServerID]structs.ServerMemory{}, asking: map[raft.ServerID]bool{}}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		readings := g.gather(ctx)
		refusing := s.memory.Update(readings)
		pressure := float32(0)
		if refusing {
			pressure = 1
		}
		metrics.SetGauge(metricMemoryPressure, pressure)
		for _, r := range readings {
			labels := []metrics.Label{{Name: "server", Value: r.Server}}
			metrics.SetGaugeWithLabels(metricHeapLive, float32(r.HeapLive), labels)
			metrics.SetGaugeWithLabels(metricMemoryLimit, float32(r.Limit), labels)
		}
	}
}

// memoryGatherer keeps the last reading of every other server, and which
// of them it is still asking: a server that does not answer (stalled, cut
// off) is not asked again until its call ends, so calls do not pile up at
// one per tick for as long as the RPC timeout.
type memoryGatherer struct {
	s      *Server
	mu     sync.Mutex
	last   map[raft.ServerID]structs.ServerMemory
	asking map[raft.ServerID]bool
}

// gather returns this server's reading and every other server's of the
// Raft configuration, asked in parallel; a server that has not answered
// within memoryStatsTimeout counts with its last reading (servers no
// longer in the configuration are forgotten).
func (g *memoryGatherer) gather(ctx context.Context) []structs.ServerMemory {
	s := g.s
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return []structs.ServerMemory{s.localMemory()}
	}
	servers := f.Configuration().Servers
	done := make(chan struct{}, len(servers))
	asked := 0
	current := map[raft.ServerID]bool{}
	g.mu.Lock()
	for _, srv := range servers {
		current[srv.ID] = true
		if string(srv.ID) == s.id || s.net.pool == nil || g.asking[srv.ID] {
			continue
		}
		g.asking[srv.ID] = true
		asked++
		go g.ask(srv.ID, s.peerAddr(srv.ID, srv.Address), done)
	}
	g.mu.Unlock()
	timeout := time.NewTimer(memoryStatsTimeout)
	defer timeout.Stop()
collect:
	for ; asked > 0; asked-- {
		select {
		case <-done:
		case <-timeout.C:
			break collect
		case <-ctx.Done():
			break collect
		}
	}
	out := []structs.ServerMemory{s.localMemory()}
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, r := range g.last {
		if !current[id] {
			delete(g.last, id)
			continue
		}
		out = append(out, r)
	}
	return out
}

// ask calls one server for its reading, records it, and signals done.
func (g *memoryGatherer) ask(id raft.ServerID, addr string, done chan<- struct{}) {
	var r structs.ServerMemory
	err := g.s.net.pool.RPC(addr, "Status.MemoryStats", &structs.GenericRequest{}, &r)
	g.mu.Lock()
	delete(g.asking, id)
	if err == nil {
		g.last[id] = r
	}
	g.mu.Unlock()
	if err != nil {
		g.s.logger.Debug("memory backpressure: no reading", "server", id, "error", err)
	}
	done <- struct{}{}
}
