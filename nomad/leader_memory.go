package nomad

import (
	"context"
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
	last := map[raft.ServerID]structs.ServerMemory{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		readings := s.gatherMemory(ctx, last)
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

// gatherMemory returns this server's reading and every other server's of
// the Raft configuration, asked in parallel; a server that does not
// answer within memoryStatsTimeout counts with its last reading, kept in
// last (servers no longer in the configuration are forgotten).
func (s *Server) gatherMemory(ctx context.Context, last map[raft.ServerID]structs.ServerMemory) []structs.ServerMemory {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return []structs.ServerMemory{s.localMemory()}
	}
	type answer struct {
		id raft.ServerID
		r  structs.ServerMemory
	}
	servers := f.Configuration().Servers
	answers := make(chan answer, len(servers))
	asked := 0
	current := map[raft.ServerID]bool{}
	for _, srv := range servers {
		current[srv.ID] = true
		if string(srv.ID) == s.id || s.net.pool == nil {
			continue
		}
		asked++
		go func(id raft.ServerID, addr string) {
			var r structs.ServerMemory
			if err := s.net.pool.RPC(addr, "Status.MemoryStats", &structs.GenericRequest{}, &r); err != nil {
				s.logger.Debug("memory backpressure: no reading", "server", id, "error", err)
				answers <- answer{}
				return
			}
			answers <- answer{id: id, r: r}
		}(srv.ID, s.peerAddr(srv.ID, srv.Address))
	}
	timeout := time.NewTimer(memoryStatsTimeout)
	defer timeout.Stop()
collect:
	for ; asked > 0; asked-- {
		select {
		case a := <-answers:
			if a.id != "" {
				last[a.id] = a.r
			}
		case <-timeout.C:
			break collect
		case <-ctx.Done():
			break collect
		}
	}
	out := []structs.ServerMemory{s.localMemory()}
	for id, r := range last {
		if !current[id] {
			delete(last, id)
			continue
		}
		out = append(out, r)
	}
	return out
}
