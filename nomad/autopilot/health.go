// Package autopilot judges the servers' health the way the leader
// reports it at /v1/operator/autopilot/health: from the Raft
// configuration, what gossip says of each server, and each server's own
// view of its Raft log. It is pure: the leader gathers the inputs.
//
// The dead-server cleanup, the other half of autopilot, lives with
// membership (nomad/membership), which already owns the Raft
// configuration changes; it reads the stored autopilot configuration.
package autopilot

import (
	"sort"
	"sync"
	"time"

	"github.com/opennomad/nomad/structs"
)

// Peer is one server of the Raft configuration.
type Peer struct {
	ID      string
	Address string
	Voter   bool
}

// Member is what gossip knows of a server.
type Member struct {
	Name string
	// Status is gossip's: "alive", "leaving", "left", "failed".
	Status  string
	Version string
}

// Input is one judgement's inputs.
type Input struct {
	Config   *structs.AutopilotConfig
	Peers    []Peer
	LeaderID string
	// Members by Raft ID; a server gossip does not know is "none".
	Members map[string]Member
	// Stats by Raft ID: each server's answer about its own log; a
	// server that did not answer is missing.
	Stats map[string]structs.RaftStats
	Now   time.Time
}

// Tracker remembers since when each server has been healthy (or not)
// across judgements: StableSince. Safe for concurrent use.
type Tracker struct {
	mu   sync.Mutex
	seen map[string]stability
}

type stability struct {
	healthy bool
	since   time.Time
}

// Health judges every server of in.Peers. A server is healthy when
// gossip says it is alive, it answered, it heard from the leader within
// LastContactThreshold, it is in the leader's term and its log trails the
// leader's by at most MaxTrailingLogs. The cluster is healthy when every
// server is; its failure tolerance is how many healthy voters exceed a
// quorum.
func (t *Tracker) Health(in Input) *structs.OperatorHealthReply {
	cfg := in.Config
	if cfg == nil {
		cfg = structs.DefaultAutopilotConfig()
	}
	leaderStats, leaderAnswered := in.Stats[in.LeaderID]
	out := &structs.OperatorHealthReply{Leader: in.LeaderID, Healthy: true, Voters: []string{}}
	voters, healthyVoters := 0, 0

	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen == nil {
		t.seen = make(map[string]stability)
	}
	current := make(map[string]bool, len(in.Peers))
	for _, p := range in.Peers {
		current[p.ID] = true
		m, known := in.Members[p.ID]
		if !known {
			m = Member{Status: "none"}
		}
		st, answered := in.Stats[p.ID]
		h := structs.ServerHealth{
			ID: p.ID, Name: m.Name, Address: p.Address, SerfStatus: m.Status, Version: m.Version,
			Leader: p.ID == in.LeaderID, Voter: p.Voter,
			LastContact: st.LastContact, LastTerm: st.LastTerm, LastIndex: st.LastIndex,
		}
		h.Healthy = m.Status == "alive" && answered && leaderAnswered &&
			(h.Leader || (st.LastContact >= 0 && st.LastContact <= cfg.LastContactThreshold)) &&
			st.LastTerm == leaderStats.LastTerm &&
			st.LastIndex+cfg.MaxTrailingLogs >= leaderStats.LastIndex

		prev, ok := t.seen[p.ID]
		if !ok || prev.healthy != h.Healthy {
			prev = stability{healthy: h.Healthy, since: in.Now}
			t.seen[p.ID] = prev
		}
		h.StableSince = prev.since

		if p.Voter {
			voters++
			out.Voters = append(out.Voters, p.ID)
			if h.Healthy {
				healthyVoters++
			}
		}
		if !h.Healthy {
			out.Healthy = false
		}
		out.Servers = append(out.Servers, h)
	}
	for id := range t.seen {
		if !current[id] {
			delete(t.seen, id)
		}
	}
	sort.Strings(out.Voters)
	if voters > 0 {
		out.FailureTolerance = max(0, healthyVoters-(voters/2+1))
	}
	return out
}
