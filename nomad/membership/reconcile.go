package membership

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"
)

// LeadershipGained starts the leader's reconciler, which runs until ctx
// ends or LeadershipLost. The server calls it when it becomes leader.
func (m *Membership) LeadershipGained(ctx context.Context) {
	m.leaderMu.Lock()
	defer m.leaderMu.Unlock()
	if m.leaderStop != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	m.leaderStop, m.leaderDone = cancel, done
	go func() {
		defer close(done)
		m.reconcileLoop(ctx)
	}()
}

// LeadershipLost stops the reconciler and waits for it.
func (m *Membership) LeadershipLost() {
	m.leaderMu.Lock()
	stop, done := m.leaderStop, m.leaderDone
	m.leaderStop, m.leaderDone = nil, nil
	m.leaderMu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// reconcileLoop reconciles at once, after every membership change, every
// ReconcileInterval, and looks for dead servers every CleanupInterval.
func (m *Membership) reconcileLoop(ctx context.Context) {
	m.missingSince = make(map[string]time.Time)
	reconcile := time.NewTicker(m.cfg.ReconcileInterval)
	defer reconcile.Stop()
	cleanup := time.NewTicker(m.cfg.CleanupInterval)
	defer cleanup.Stop()
	m.reconcile()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.reconcileKick:
			m.reconcile()
		case <-reconcile.C:
			m.reconcile()
		case <-cleanup.C:
			m.removeDeadServers(time.Now())
		}
	}
}

// raftChangeTimeout bounds the wait for Raft to accept a membership
// change.
const raftChangeTimeout = 10 * time.Second

// reconcile makes Raft's voters follow gossip: alive servers become
// voters, servers that left are removed. Failed servers stay until the
// dead-server cleanup; this server is never touched.
func (m *Membership) reconcile() {
	if m.raft.State() != raft.Leader {
		return
	}
	f := m.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		m.logger.Error("reconcile: reading the raft configuration", "error", err)
		return
	}
	configuration := f.Configuration()
	for _, s := range m.servers.all() {
		if s.ID == m.cfg.ServerID {
			continue
		}
		var err error
		switch s.Status {
		case serf.StatusAlive:
			err = m.addVoter(configuration, s)
		case serf.StatusLeft:
			err = m.removePeer(configuration, s.ID, s.Name, "left")
		}
		if err != nil {
			m.logger.Error("reconcile", "server", s.Name, "error", err)
		}
	}
	// Servers gossip no longer lists (reaped, or pruned by a
	// force-leave) left too.
	for _, s := range m.servers.pendingReaped() {
		if s.ID == m.cfg.ServerID {
			m.servers.forgetReaped(s)
			continue
		}
		if err := m.removePeer(configuration, s.ID, s.Name, "reaped"); err != nil {
			m.logger.Error("reconcile", "server", s.Name, "error", err)
			continue
		}
		m.servers.forgetReaped(s)
	}
}

// addVoter makes s a voter unless it is one already. A configuration
// entry with s's address but another ID (the server was rebuilt with a
// new data dir), or with s's ID at another address, is replaced.
func (m *Membership) addVoter(configuration raft.Configuration, s ServerInfo) error {
	for _, cs := range configuration.Servers {
		sameID, sameAddr := string(cs.ID) == s.ID, string(cs.Address) == s.RPCAddr
		switch {
		case sameID && sameAddr:
			if cs.Suffrage == raft.Voter {
				return nil
			}
		case sameID || sameAddr:
			if string(cs.ID) == m.cfg.ServerID {
				return fmt.Errorf("server %s claims this server's raft ID or address", s.Name)
			}
			if err := m.removePeer(configuration, string(cs.ID), s.Name, "replaced"); err != nil {
				return err
			}
		}
	}
	if err := m.raft.AddVoter(raft.ServerID(s.ID), raft.ServerAddress(s.RPCAddr), 0, raftChangeTimeout).Error(); err != nil {
		return fmt.Errorf("adding %s (%s) as a raft voter: %w", s.Name, s.RPCAddr, err)
	}
	m.logger.Info("added raft voter", "server", s.Name, "id", s.ID, "address", s.RPCAddr)
	return nil
}

// removePeer removes id from Raft when the configuration holds it.
func (m *Membership) removePeer(configuration raft.Configuration, id, name, why string) error {
	for _, cs := range configuration.Servers {
		if string(cs.ID) != id {
			continue
		}
		if err := m.raft.RemoveServer(cs.ID, 0, raftChangeTimeout).Error(); err != nil {
			return fmt.Errorf("removing %s (%s) from raft: %w", name, id, err)
		}
		m.logger.Info("removed raft peer", "server", name, "id", id, "reason", why)
		return nil
	}
	return nil
}

// removeDeadServers removes voters that have been failed, or unknown to
// gossip, for DeadServerGrace, as long as enough voters remain (see
// removableDead).
func (m *Membership) removeDeadServers(now time.Time) {
	if m.cfg.DeadServerGrace <= 0 || m.raft.State() != raft.Leader {
		return
	}
	minQuorum := m.cfg.MinQuorum
	if m.cfg.CleanupPolicy != nil {
		enabled, policyMin := m.cfg.CleanupPolicy()
		if !enabled {
			return
		}
		minQuorum = max(minQuorum, policyMin)
	}
	f := m.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		m.logger.Error("dead server cleanup: reading the raft configuration", "error", err)
		return
	}
	configuration := f.Configuration()
	voters := 0
	var dead []deadServer
	seen := make(map[string]bool)
	for _, cs := range configuration.Servers {
		if cs.Suffrage != raft.Voter {
			continue
		}
		voters++
		id := string(cs.ID)
		seen[id] = true
		if id == m.cfg.ServerID {
			continue
		}
		info, failedSince, known := m.servers.byID(id)
		var since time.Time
		switch {
		case !known:
			if m.missingSince[id].IsZero() {
				m.missingSince[id] = now
			}
			since = m.missingSince[id]
			info = ServerInfo{ID: id, Name: string(cs.Address)}
		case info.Status == serf.StatusFailed:
			delete(m.missingSince, id)
			since = failedSince
		default:
			delete(m.missingSince, id)
			continue
		}
		if now.Sub(since) >= m.cfg.DeadServerGrace {
			dead = append(dead, deadServer{info: info, gossip: known})
		}
	}
	for id := range m.missingSince {
		if !seen[id] {
			delete(m.missingSince, id)
		}
	}
	if len(dead) == 0 {
		return
	}
	if !removableDead(voters, len(dead), minQuorum) {
		m.logger.Warn("not removing dead servers: too few voters would remain",
			"voters", voters, "dead", len(dead), "min_quorum", minQuorum)
		return
	}
	for _, d := range dead {
		if d.gossip {
			if err := m.serf.RemoveFailedNode(d.info.Name); err != nil {
				m.logger.Warn("dead server cleanup: force-leave", "server", d.info.Name, "error", err)
			}
		}
		if err := m.removePeer(configuration, d.info.ID, d.info.Name, "dead"); err != nil {
			m.logger.Error("dead server cleanup", "error", err)
		}
	}
}

// deadServer is a voter the cleanup may remove; gossip reports whether
// gossip still knows it.
type deadServer struct {
	info   ServerInfo
	gossip bool
}

// removableDead reports whether dead of voters may be removed at once:
// the voters left must be a majority of the current configuration (so
// the cluster was never relying on the dead ones) and at least
// minQuorum.
func removableDead(voters, dead, minQuorum int) bool {
	remaining := voters - dead
	return dead > 0 && remaining > voters/2 && remaining >= minQuorum
}
