package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// inmemCluster is n servers in one process: Raft over connected
// in-memory transports (which tests can cut to partition a server), RPC
// over real loopback listeners so that followers forward to the leader.
type inmemCluster struct {
	servers    []*Server
	transports []*raft.InmemTransport
}

// newTestCluster starts n servers and bootstraps them as one cluster, as
// gossip would, and returns them once one leads.
func newTestCluster(t *testing.T, n int) []*Server {
	return newInmemCluster(t, n, nil).servers
}

// newInmemCluster is newTestCluster with cb adjusting each server's
// configuration.
func newInmemCluster(t *testing.T, n int, cb func(*Config)) *inmemCluster {
	t.Helper()
	c := &inmemCluster{transports: make([]*raft.InmemTransport, n)}
	for i := range c.transports {
		_, c.transports[i] = raft.NewInmemTransport("")
	}
	for i := range c.transports {
		for j := range c.transports {
			if i != j {
				c.transports[i].Connect(c.transports[j].LocalAddr(), c.transports[j])
			}
		}
	}
	var configuration raft.Configuration
	for i := range c.transports {
		cfg := testConfig()
		cfg.BootstrapExpect = n
		cfg.RaftTransport = c.transports[i]
		cfg.Cluster.RPCAddr = "127.0.0.1:0"
		// Three voters in one process: keep the lease generous so a busy
		// test machine does not cost leadership.
		cfg.RaftConfig.LeaderLeaseTimeout = 200 * time.Millisecond
		cfg.RaftConfig.HeartbeatTimeout = 200 * time.Millisecond
		cfg.RaftConfig.ElectionTimeout = 200 * time.Millisecond
		if cb != nil {
			cb(cfg)
		}
		s, err := NewServer(cfg)
		must.NoError(t, err)
		t.Cleanup(func() { _ = s.Shutdown() })
		c.servers = append(c.servers, s)
		configuration.Servers = append(configuration.Servers, raft.Server{
			ID: raft.ServerID(s.ID()), Address: c.transports[i].LocalAddr(), Suffrage: raft.Voter,
		})
	}
	// Gossip would tell every server the others' RPC addresses.
	for _, s := range c.servers {
		for _, other := range c.servers {
			s.SetPeer(other.ID(), other.RPCAdvertise(), other.memberName())
		}
	}
	must.NoError(t, c.servers[0].Raft().BootstrapCluster(configuration).Error())
	leaderOf(t, c.servers)
	return c
}

// isolate cuts server i off from the others' Raft traffic (both ways);
// heal reconnects it.
func (c *inmemCluster) isolate(i int) {
	for j, tr := range c.transports {
		if j != i {
			tr.Disconnect(c.transports[i].LocalAddr())
			c.transports[i].Disconnect(tr.LocalAddr())
		}
	}
}

func (c *inmemCluster) heal(i int) {
	for j, tr := range c.transports {
		if j != i {
			tr.Connect(c.transports[i].LocalAddr(), c.transports[i])
			c.transports[i].Connect(tr.LocalAddr(), tr)
		}
	}
}

// index returns the position of s in the cluster.
func (c *inmemCluster) index(s *Server) int {
	for i, other := range c.servers {
		if other == s {
			return i
		}
	}
	return -1
}

// leaderOf waits until one server has established leadership and returns
// it.
func leaderOf(t *testing.T, servers []*Server) *Server {
	t.Helper()
	var leader *Server
	waitFor(t, func() bool {
		for _, s := range servers {
			if s.isEstablishedLeader() {
				leader = s
				return true
			}
		}
		return false
	})
	return leader
}

// The server runs unchanged in a multi-server cluster: writes replicate
// to every server's state, followers answer stale reads and forward what
// only the leader serves, and the leader's duties run on the leader only.
func TestCluster_ThreeServersReplicate(t *testing.T) {
	servers := newTestCluster(t, 3)
	leader := leaderOf(t, servers)
	var followers []*Server
	for _, s := range servers {
		if s != leader {
			followers = append(followers, s)
		}
	}

	job := mock.Job()
	reply := registerJob(t, leader, job)
	for _, f := range followers {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := f.State().SnapshotMinIndex(ctx, reply.Index)
		cancel()
		must.NoError(t, err)
		got, err := f.State().JobByID(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		must.NotNil(t, got)
		must.False(t, f.isEstablishedLeader())
		must.False(t, f.evalBroker.Enabled(), must.Sprint("only the leader's broker is enabled"))
	}

	f := followers[0]
	var stale structs.SingleJobResponse
	must.NoError(t, f.RPC("Job.GetJob", &structs.JobSpecificRequest{JobID: job.ID,
		QueryOptions: structs.QueryOptions{AllowStale: true}}, &stale))
	must.Eq(t, job.ID, stale.Job.ID)
	must.True(t, stale.KnownLeader)

	// A write through a follower is forwarded to the leader.
	forwarded := mock.Job()
	var r structs.JobRegisterResponse
	must.NoError(t, f.RPC("Job.Register", &structs.JobRegisterRequest{Job: forwarded}, &r))
	must.Positive(t, r.Index)
	got, err := leader.State().JobByID(nil, forwarded.Namespace, forwarded.ID)
	must.NoError(t, err)
	must.NotNil(t, got)
	// A consistent read through a follower is answered by the leader.
	var consistent structs.SingleJobResponse
	must.NoError(t, f.RPC("Job.GetJob", &structs.JobSpecificRequest{JobID: forwarded.ID}, &consistent))
	must.NotNil(t, consistent.Job)
	must.Eq(t, time.Duration(0), consistent.LastContact, must.Sprint("the leader answered"))

	var leaderAddr string
	must.NoError(t, f.RPC("Status.Leader", &structs.GenericRequest{}, &leaderAddr))
	must.Eq(t, leader.RPCAdvertise(), leaderAddr, must.Sprint("the leader is named by its RPC address"))
	var peers []string
	must.NoError(t, f.RPC("Status.Peers", &structs.GenericRequest{}, &peers))
	must.Len(t, 3, peers)
}

// When the leader dies a follower takes over its duties with the state
// intact, and a live node gets the failover TTL rather than being marked
// down for heartbeating the dead leader.
func TestCluster_FailoverKeepsStateAndDuties(t *testing.T) {
	servers := newTestCluster(t, 3)
	old := leaderOf(t, servers)
	node := mock.Node()
	registerNode(t, old, node)
	job := mock.Job()
	evalID := registerJob(t, old, job).EvalID
	must.NoError(t, old.Shutdown())

	var rest []*Server
	for _, s := range servers {
		if s != old {
			rest = append(rest, s)
		}
	}
	leader := leaderOf(t, rest)
	got, err := leader.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.NotNil(t, got)
	must.Eq(t, 1, leader.heartbeats.count(), must.Sprint("the live node is tracked with the failover TTL"))
	deq := dequeue(t, leader, structs.JobTypeService)
	must.Eq(t, evalID, deq.Eval.ID, must.Sprint("the pending eval was restored into the new broker"))
	registerJob(t, leader, mock.Job())
}
