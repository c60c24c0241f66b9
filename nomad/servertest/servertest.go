// Package servertest starts real single servers for the tests of packages
// that talk to a server (clients, simulators, load generators): in
// memory or on a data directory, with Raft timeouts short enough that a
// test does not wait a second for its server to lead.
package servertest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad"
)

// Config returns a dev-mode (in-memory) server configuration named name
// with 50 ms Raft heartbeat, election and lease timeouts. Tests edit it
// before Start.
func Config(name string) *nomad.Config {
	cfg := nomad.DefaultConfig()
	cfg.DevMode = true
	cfg.NodeName = name
	rc := nomad.DefaultRaftConfig()
	rc.HeartbeatTimeout = 50 * time.Millisecond
	rc.ElectionTimeout = 50 * time.Millisecond
	rc.LeaderLeaseTimeout = 50 * time.Millisecond
	cfg.RaftConfig = rc
	return cfg
}

// Start starts a server of cfg, shuts it down when the test ends, and
// returns once it has taken up its leader duties (broker, plan applier,
// heartbeat timers), failing the test after 10 s.
func Start(t testing.TB, cfg *nomad.Config) *nomad.Server {
	t.Helper()
	srv, err := nomad.NewServer(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = srv.Shutdown() })
	lead := &leadSignal{ch: make(chan struct{})}
	srv.AddLeadershipObserver(lead)
	select {
	case <-lead.ch:
	case <-time.After(10 * time.Second):
		t.Fatal("test server did not become leader")
	}
	return srv
}

// leadSignal closes ch the first time the server's leadership is
// established.
type leadSignal struct {
	once sync.Once
	ch   chan struct{}
}

func (l *leadSignal) LeadershipGained(context.Context) { l.once.Do(func() { close(l.ch) }) }
func (l *leadSignal) LeadershipLost()                  {}
