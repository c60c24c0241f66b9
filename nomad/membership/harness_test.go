package membership

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"
	"github.com/shoenig/test/must"
)

// fastGossip shortens gossip timings so failures are seen in a fraction
// of a second on loopback.
func fastGossip(c *serf.Config) {
	ml := c.MemberlistConfig
	ml.ProbeInterval = 50 * time.Millisecond
	ml.ProbeTimeout = 25 * time.Millisecond
	ml.GossipInterval = 10 * time.Millisecond
	ml.SuspicionMult = 1
	ml.PushPullInterval = 200 * time.Millisecond
	ml.TCPTimeout = 200 * time.Millisecond
	c.LeavePropagateDelay = 50 * time.Millisecond
	c.ReapInterval = 100 * time.Millisecond
	c.ReconnectInterval = 100 * time.Millisecond
	c.CoalescePeriod = 0
}

// testNode is one server: gossip, in-memory Raft and a counting FSM.
type testNode struct {
	name     string
	m        *Membership
	raft     *raft.Raft
	counting *countingRaft
	trans    *raft.InmemTransport
	addr     string
	serf     int
	down     bool
	// stopLeadership stops relaying Raft's leadership to m.
	stopLeadership func()
}

// testCluster holds nodes whose in-memory Raft transports all reach
// each other.
type testCluster struct {
	t     *testing.T
	mu    sync.Mutex
	nodes []*testNode
}

func newTestCluster(t *testing.T) *testCluster {
	c := &testCluster{t: t}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			n.stop()
		}
	})
	return c
}

// freePort returns a port free for TCP (and, in practice, UDP) on
// loopback.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start adds a server named name expecting expect servers; tune adjusts
// its configuration.
func (c *testCluster) start(name string, expect int, tune func(*Config)) *testNode {
	return c.startOnPort(name, expect, freePort(c.t), tune)
}

func (c *testCluster) startOnPort(name string, expect, port int, tune func(*Config)) *testNode {
	t := c.t
	t.Helper()
	// The transport's address stands in for the RPC address, as one
	// port carries both in production.
	addr := fmt.Sprintf("127.0.0.1:%d", 20000+len(c.nodes))
	_, trans := raft.NewInmemTransport(raft.ServerAddress(addr))
	c.mu.Lock()
	for _, other := range c.nodes {
		trans.Connect(other.trans.LocalAddr(), other.trans)
		other.trans.Connect(trans.LocalAddr(), trans)
	}
	c.mu.Unlock()

	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID("id-" + name)
	conf.HeartbeatTimeout = 100 * time.Millisecond
	conf.ElectionTimeout = 100 * time.Millisecond
	conf.LeaderLeaseTimeout = 100 * time.Millisecond
	conf.Logger = hclog.NewNullLogger()
	store := raft.NewInmemStore()
	r, err := raft.NewRaft(conf, nopFSM{}, store, store, raft.NewInmemSnapshotStore(), trans)
	must.NoError(t, err)

	cfg := DefaultConfig()
	cfg.NodeName = name
	cfg.Datacenter = "dc1"
	cfg.BindAddr = "127.0.0.1"
	cfg.BindPort = port
	cfg.ServerID = string(conf.LocalID)
	cfg.RPCAddr = addr
	cfg.Build = "test"
	cfg.BootstrapExpect = expect
	cfg.BootstrapRetryInterval = 50 * time.Millisecond
	cfg.ReconcileInterval = time.Second
	cfg.Profile = ProfileLocal
	cfg.Tune = fastGossip
	cfg.Logger = hclog.NewNullLogger()
	if tune != nil {
		tune(&cfg)
	}
	counting := &countingRaft{Raft: r}
	m, err := New(cfg, counting)
	must.NoError(t, err)
	n := &testNode{name: name, m: m, raft: r, counting: counting, trans: trans, addr: addr, serf: port}
	leadership := watchLeadership(r, m)
	n.stopLeadership = leadership
	c.mu.Lock()
	c.nodes = append(c.nodes, n)
	c.mu.Unlock()
	return n
}

// serfAddr is the node's gossip address for Join.
func (n *testNode) serfAddr() string { return fmt.Sprintf("127.0.0.1:%d", n.serf) }

// stop shuts the node down without leaving: the others see it fail.
func (n *testNode) stop() {
	if n.down {
		return
	}
	n.down = true
	n.stopLeadership()
	n.m.Shutdown()
	n.raft.Shutdown().Error()
}

// watchLeadership tells m about r's leadership changes, as the server's
// leader loop does; the returned function stops watching.
func watchLeadership(r *raft.Raft, m *Membership) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		obs := make(chan raft.Observation, 16)
		o := raft.NewObserver(obs, false, func(o *raft.Observation) bool {
			_, ok := o.Data.(raft.LeaderObservation)
			return ok
		})
		r.RegisterObserver(o)
		defer r.DeregisterObserver(o)
		leading := false
		check := func() {
			switch isLeader := r.State() == raft.Leader; {
			case isLeader && !leading:
				m.LeadershipGained(context.Background())
			case !isLeader && leading:
				m.LeadershipLost()
			}
			leading = r.State() == raft.Leader
		}
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				if leading {
					m.LeadershipLost()
				}
				return
			case <-obs:
				check()
			case <-t.C:
				check()
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// leader waits for a node whose Raft leads and returns it.
func (c *testCluster) leader() *testNode {
	c.t.Helper()
	var leader *testNode
	waitFor(c.t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, n := range c.nodes {
			if !n.down && n.raft.State() == raft.Leader {
				leader = n
				return true
			}
		}
		return false
	})
	return leader
}

// voters returns the Raft voter IDs a node's configuration holds.
func voters(t *testing.T, r *raft.Raft) []string {
	t.Helper()
	f := r.GetConfiguration()
	must.NoError(t, f.Error())
	var out []string
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			out = append(out, string(s.ID))
		}
	}
	return out
}

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// nopFSM applies nothing; membership tests watch the configuration only.
type nopFSM struct{}

func (nopFSM) Apply(*raft.Log) interface{}         { return nil }
func (nopFSM) Snapshot() (raft.FSMSnapshot, error) { return nopSnapshot{}, nil }
func (nopFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }

type nopSnapshot struct{}

func (nopSnapshot) Persist(sink raft.SnapshotSink) error { return sink.Close() }
func (nopSnapshot) Release()                             {}

// countingRaft counts bootstrap attempts that took effect.
type countingRaft struct {
	*raft.Raft
	bootstraps atomic.Int64
}

func (c *countingRaft) BootstrapCluster(configuration raft.Configuration) raft.Future {
	f := c.Raft.BootstrapCluster(configuration)
	if f.Error() == nil {
		c.bootstraps.Add(1)
	}
	return f
}

// threeVoters starts three servers, joined, that elected a leader with
// all three as voters, and returns the leader and one follower.
func (c *testCluster) threeVoters(tune func(*Config)) (leader, follower *testNode) {
	t := c.t
	t.Helper()
	a := c.start("a", 3, tune)
	b := c.start("b", 3, tune)
	cc := c.start("c", 3, tune)
	for _, n := range []*testNode{b, cc} {
		_, err := n.m.Join([]string{a.serfAddr()})
		must.NoError(t, err)
	}
	leader = c.leader()
	waitFor(t, func() bool { return len(voters(t, leader.raft)) == 3 })
	for _, n := range []*testNode{a, b, cc} {
		if n != leader {
			return leader, n
		}
	}
	panic("unreachable: three servers, one leader")
}

// waitForStatus waits until observer's gossip sees the server of n in
// status.
func waitForStatus(t *testing.T, observer, n *testNode, status serf.MemberStatus) {
	t.Helper()
	waitFor(t, func() bool {
		for _, m := range observer.m.KnownServers() {
			if m.ID == n.m.cfg.ServerID {
				return m.Status == status
			}
		}
		return false
	})
}
