package membership

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/hashicorp/raft"
)

// peerCountTimeout bounds asking one server for its Raft peers.
const peerCountTimeout = 5 * time.Second

// bootstrapLoop tries to bootstrap on every membership change and every
// BootstrapRetryInterval until it succeeded or found it need not.
func (m *Membership) bootstrapLoop() {
	defer m.wg.Done()
	t := time.NewTicker(m.cfg.BootstrapRetryInterval)
	defer t.Stop()
	for {
		select {
		case <-m.shutdownCtx.Done():
			return
		case <-m.bootstrapKick:
		case <-t.C:
		}
		done, err := m.tryBootstrap(m.shutdownCtx)
		if err != nil {
			m.logger.Warn("not bootstrapping yet", "error", err)
		}
		if done {
			close(m.bootstrapped)
			return
		}
	}
}

// errWaiting reports that too few servers are known to bootstrap; it is
// not logged.
var errWaiting = errors.New("waiting for servers")

// tryBootstrap bootstraps Raft with every alive server once
// BootstrapExpect of them are known. done reports that bootstrapping is
// settled: this server did it, Raft already has a configuration, or
// another server has peers. Every server that expects the same count
// computes the same configuration, so it does not matter how many of
// them bootstrap.
func (m *Membership) tryBootstrap(ctx context.Context) (done bool, err error) {
	f := m.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return false, fmt.Errorf("reading the raft configuration: %w", err)
	}
	if len(f.Configuration().Servers) > 0 {
		m.logger.Info("raft already has a configuration; not bootstrapping")
		return true, nil
	}
	servers, err := bootstrapServers(m.servers.alive(), m.cfg.BootstrapExpect)
	if err != nil {
		if errors.Is(err, errWaiting) {
			return false, nil
		}
		return false, err
	}
	if m.cfg.PeerCount != nil {
		for _, s := range servers {
			if s.ID == m.cfg.ServerID {
				continue
			}
			qctx, cancel := context.WithTimeout(ctx, peerCountTimeout)
			n, err := m.cfg.PeerCount(qctx, s.RPCAddr)
			cancel()
			if err != nil {
				return false, fmt.Errorf("asking %s for its raft peers: %w", s.Name, err)
			}
			if n > 0 {
				m.logger.Info("found an existing cluster; waiting to be added to it", "server", s.Name, "peers", n)
				return true, nil
			}
		}
	}
	var configuration raft.Configuration
	for _, s := range servers {
		configuration.Servers = append(configuration.Servers, raft.Server{
			ID: raft.ServerID(s.ID), Address: raft.ServerAddress(s.RPCAddr), Suffrage: raft.Voter,
		})
	}
	if err := m.raft.BootstrapCluster(configuration).Error(); err != nil {
		if errors.Is(err, raft.ErrCantBootstrap) {
			return true, nil
		}
		return false, fmt.Errorf("bootstrapping raft: %w", err)
	}
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.Name
	}
	m.logger.Info("bootstrapped the cluster", "servers", names)
	return true, nil
}

// bootstrapServers picks the servers of a new cluster from the alive
// ones, sorted by Raft ID: errWaiting while fewer than expect are known,
// an error when a server expects another count or bootstraps alone.
func bootstrapServers(alive []ServerInfo, expect int) ([]ServerInfo, error) {
	var servers []ServerInfo
	for _, s := range alive {
		if s.Expect != 0 && s.Expect != expect {
			return nil, fmt.Errorf("server %s expects %d servers, this one %d: every server must expect the same number",
				s.Name, s.Expect, expect)
		}
		if s.Bootstrap && expect != 1 {
			return nil, fmt.Errorf("server %s bootstraps alone; bootstrap_expect is disabled", s.Name)
		}
		servers = append(servers, s)
	}
	if len(servers) < expect {
		return nil, errWaiting
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
	return servers, nil
}
