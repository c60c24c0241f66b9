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

// newTestCluster starts n in-memory servers joined by connected in-memory
// Raft transports and bootstraps them as one cluster, as the membership
// layer will. It returns them once one leads.
func newTestCluster(t *testing.T, n int) []*Server {
	t.Helper()
	transports := make([]*raft.InmemTransport, n)
	for i := range transports {
		_, transports[i] = raft.NewInmemTransport("")
	}
	for i := range transports {
		for j := range transports {
			if i != j {
				transports[i].Connect(transports[j].LocalAddr(), transports[j])
			}
		}
	}
	servers := make([]*Server, n)
	var configuration raft.Configuration
	for i := range servers {
		cfg := testConfig()
		cfg.BootstrapExpect = n
		cfg.RaftTransport = transports[i]
		// Three voters in one process: keep the lease generous so a busy
		// test machine does not cost leadership.
		cfg.RaftConfig.LeaderLeaseTimeout = 200 * time.Millisecond
		cfg.RaftConfig.HeartbeatTimeout = 200 * time.Millisecond
		cfg.RaftConfig.ElectionTimeout = 200 * time.Millisecond
		s, err := NewServer(cfg)
		must.NoError(t, err)
		t.Cleanup(func() { _ = s.Shutdown() })
		servers[i] = s
		configuration.Servers = append(configuration.Servers, raft.Server{
			ID: raft.ServerID(s.ID()), Address: transports[i].LocalAddr(), Suffrage: raft.Voter,
		})
	}
	must.NoError(t, servers[0].Raft().BootstrapCluster(configuration).Error())
	leaderOf(t, servers)
	return servers
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
// to every server's state, followers answer stale reads and refuse what
// only the leader serves (until forwarding exists), and the leader's
// duties run on the leader only.
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

	var r structs.JobRegisterResponse
	err := f.RPC("Job.Register", &structs.JobRegisterRequest{Job: mock.Job()}, &r)
	must.ErrorIs(t, err, structs.ErrNoLeader)

	var leaderAddr string
	must.NoError(t, f.RPC("Status.Leader", &structs.GenericRequest{}, &leaderAddr))
	must.Eq(t, leader.Leader(), leaderAddr)
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
