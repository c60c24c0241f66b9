package nomad

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/autopilot"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/version"
)

// autopilotInterval is how often the leader judges the servers' health
// on its own, so that StableSince follows changes between reports and
// the health gauges stay current.
const autopilotInterval = 10 * time.Second

// raftStatsTimeout bounds the wait for the other servers' Raft stats in a
// health report: a server slower than that is judged unhealthy.
const raftStatsTimeout = 2 * time.Second

// autopilotConfig is the stored autopilot configuration, or the default
// before the first leader wrote one.
func (s *Server) autopilotConfig() *structs.AutopilotConfig {
	_, cfg, err := s.State().AutopilotConfig(nil)
	if err != nil || cfg == nil {
		return structs.DefaultAutopilotConfig()
	}
	return cfg
}

// ensureAutopilotConfig writes the default autopilot configuration on a
// cluster that has none; the write is a check-and-set on "none yet", so
// it never overwrites an operator's.
func (s *Server) ensureAutopilotConfig() error {
	_, cfg, err := s.State().AutopilotConfig(nil)
	if err != nil || cfg != nil {
		return err
	}
	req := &structs.AutopilotSetConfigRequest{Config: *structs.DefaultAutopilotConfig(), CAS: true}
	if _, _, err := s.raftApply(structs.AutopilotRequestType, req); err != nil {
		return fmt.Errorf("writing default autopilot configuration: %w", err)
	}
	return nil
}

// deadServerCleanup tells membership's dead-server cleanup whether it may
// run and the fewest voters it must leave, from the stored autopilot
// configuration.
func (s *Server) deadServerCleanup() (bool, int) {
	cfg := s.autopilotConfig()
	return cfg.CleanupDeadServers, int(cfg.MinQuorum)
}

// localRaftStats is this server's view of its Raft log.
func (s *Server) localRaftStats() structs.RaftStats {
	stats := s.raft.Stats()
	term, _ := strconv.ParseUint(stats["last_log_term"], 10, 64)
	index, _ := strconv.ParseUint(stats["last_log_index"], 10, 64)
	out := structs.RaftStats{LastTerm: term, LastIndex: index}
	switch last := s.raft.LastContact(); {
	case s.raft.State() == raft.Leader:
	case last.IsZero():
		out.LastContact = -1
	default:
		out.LastContact = time.Since(last)
	}
	return out
}

// serverHealth judges every server of the Raft configuration; only the
// leader can (followers do not know the others' state).
func (s *Server) serverHealth() (*structs.OperatorHealthReply, error) {
	if s.raft.State() != raft.Leader {
		return nil, fmt.Errorf("server health: %w", structs.ErrNoLeader)
	}
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	in := autopilot.Input{
		Config:   s.autopilotConfig(),
		LeaderID: s.id,
		Stats:    map[string]structs.RaftStats{s.id: s.localRaftStats()},
		Now:      s.clock.Now(),
	}
	type answer struct {
		id    string
		stats structs.RaftStats
	}
	answers := make(chan answer, len(f.Configuration().Servers))
	asked := 0
	for _, srv := range f.Configuration().Servers {
		in.Peers = append(in.Peers, autopilot.Peer{ID: string(srv.ID), Address: s.peerAddr(srv.ID, srv.Address),
			Voter: srv.Suffrage == raft.Voter})
		if string(srv.ID) == s.id || s.net.pool == nil {
			continue
		}
		asked++
		go func(id raft.ServerID, addr string) {
			var st structs.RaftStats
			if err := s.net.pool.RPC(addr, "Status.RaftStats", &structs.GenericRequest{}, &st); err != nil {
				s.logger.Debug("server health: no raft stats", "server", id, "error", err)
				answers <- answer{}
				return
			}
			answers <- answer{id: string(id), stats: st}
		}(srv.ID, s.peerAddr(srv.ID, srv.Address))
	}
	in.Members = s.gossipMembers(in.Peers)
	timeout := time.NewTimer(raftStatsTimeout)
	defer timeout.Stop()
collect:
	for ; asked > 0; asked-- {
		select {
		case a := <-answers:
			if a.id != "" {
				in.Stats[a.id] = a.stats
			}
		case <-timeout.C:
			// The rest are judged unanswered.
			break collect
		}
	}
	return s.autopilot.Health(in), nil
}

// gossipMembers are the servers gossip knows, by Raft ID. A server
// running without gossip (servers wired by hand, in tests) has nothing
// that could call a peer failed: every server of the Raft configuration
// counts as alive there.
func (s *Server) gossipMembers(peers []autopilot.Peer) map[string]autopilot.Member {
	out := map[string]autopilot.Member{}
	if s.net.membership == nil {
		for _, p := range peers {
			info, _ := s.peers.get(raft.ServerID(p.ID))
			out[p.ID] = autopilot.Member{Name: info.name, Status: "alive", Version: version.String()}
		}
		return out
	}
	for _, m := range s.net.membership.KnownServers() {
		out[m.ID] = autopilot.Member{Name: m.Name, Status: m.Status.String(), Version: m.Build}
	}
	return out
}

// watchServerHealth judges the servers' health at every tick while this
// server leads and publishes it as the nomad.autopilot.healthy (1 or 0)
// and nomad.autopilot.failure_tolerance gauges.
func (s *Server) watchServerHealth(ctx context.Context, ticks <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		health, err := s.serverHealth()
		if err != nil {
			s.logger.Debug("judging server health", "error", err)
			continue
		}
		healthy := float32(0)
		if health.Healthy {
			healthy = 1
		}
		metrics.SetGauge([]string{"nomad", "autopilot", "healthy"}, healthy)
		metrics.SetGauge([]string{"nomad", "autopilot", "failure_tolerance"}, float32(health.FailureTolerance))
	}
}
