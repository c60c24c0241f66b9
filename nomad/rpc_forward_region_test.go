package nomad

import (
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/membership"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// startRegionServer starts an in-memory server of region that listens for
// RPC and gossips on loopback, expecting expect servers in its region,
// and joins the gossip member at join unless it is empty.
func startRegionServer(t *testing.T, region, name string, expect int, join string) *Server {
	t.Helper()
	cfg := testConfig()
	cfg.Region = region
	cfg.NodeName = name
	return startConfiguredRegionServer(t, cfg, expect, join)
}

// startConfiguredRegionServer is startRegionServer with the rest of the
// configuration given.
func startConfiguredRegionServer(t *testing.T, cfg *Config, expect int, join string) *Server {
	t.Helper()
	cfg.BootstrapExpect = expect
	// Servers on a real network transport in one busy process: keep
	// leadership from flapping under the race detector.
	cfg.RaftConfig.HeartbeatTimeout = time.Second
	cfg.RaftConfig.ElectionTimeout = time.Second
	cfg.RaftConfig.LeaderLeaseTimeout = 500 * time.Millisecond
	cfg.Cluster.RPCAddr = "127.0.0.1:0"
	cfg.Cluster.SerfAddr = fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	cfg.Cluster.GossipProfile = membership.ProfileLocal
	s, err := NewServer(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = s.Shutdown() })
	if join != "" {
		_, err := s.Join([]string{join})
		must.NoError(t, err)
	}
	return s
}

// freeLoopbackPort returns a port free on loopback (for gossip, TCP and
// UDP alike in practice).
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Two regions in one gossip pool: each keeps its own Raft, both list
// every region, and requests for the other region made to either are
// served there, by whichever of its servers gets them.
func TestFederation_ForwardsToOtherRegion(t *testing.T) {
	a := startRegionServer(t, "regionA", "a1", 1, "")
	waitForLeadership(t, a)
	join := a.config.Cluster.SerfAddr
	b1 := startRegionServer(t, "regionB", "b1", 2, join)
	b2 := startRegionServer(t, "regionB", "b2", 2, join)
	bLeader := leaderOf(t, []*Server{b1, b2})

	waitFor(t, func() bool { return slices.Equal(a.Regions(), []string{"regionA", "regionB"}) })
	waitFor(t, func() bool { return slices.Equal(b1.Regions(), []string{"regionA", "regionB"}) })
	var regions []string
	must.NoError(t, a.RPC("Region.List", &structs.GenericRequest{}, &regions))
	must.Eq(t, []string{"regionA", "regionB"}, regions)
	waitFor(t, func() bool { return len(a.members()) == 3 })

	// Each region's Raft holds its own servers only.
	peers, err := a.raftPeers()
	must.NoError(t, err)
	must.Eq(t, []string{a.RPCAdvertise()}, peers)
	peers, err = bLeader.raftPeers()
	must.NoError(t, err)
	must.Len(t, 2, peers)

	// Writes for regionB through regionA land in regionB's state. The
	// server of regionB is picked at random, so over ten writes both the
	// leader and the follower (which sends them on to its leader) serve.
	inB := structs.WriteRequest{Region: "regionB", Namespace: structs.DefaultNamespace}
	var jobs []*structs.Job
	for range 10 {
		job := mock.Job()
		job.Region = "regionB"
		var reply structs.JobRegisterResponse
		must.NoError(t, a.RPC("Job.Register", &structs.JobRegisterRequest{Job: job, WriteRequest: inB}, &reply))
		must.Positive(t, reply.JobModifyIndex)
		jobs = append(jobs, job)
	}
	for _, job := range jobs {
		stored, err := a.State().JobByID(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		must.Nil(t, stored, must.Sprint("a job of regionB is not in regionA's state"))
		stored, err = bLeader.State().JobByID(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		must.NotNil(t, stored)

		// Read back through regionA.
		var got structs.SingleJobResponse
		must.NoError(t, a.RPC("Job.GetJob", &structs.JobSpecificRequest{JobID: job.ID,
			QueryOptions: structs.QueryOptions{Region: "regionB", Namespace: job.Namespace}}, &got))
		must.NotNil(t, got.Job)
		must.Eq(t, "regionB", got.Job.Region)
	}

	// And the other way: regionB's follower asks regionA.
	var leader string
	must.NoError(t, b2.RPC("Status.Leader", &structs.GenericRequest{
		QueryOptions: structs.QueryOptions{Region: "regionA"}}, &leader))
	must.Eq(t, a.RPCAdvertise(), leader)

	// A region gossip does not know has no path.
	var reply structs.SingleJobResponse
	err = a.RPC("Job.GetJob", &structs.JobSpecificRequest{JobID: "x",
		QueryOptions: structs.QueryOptions{Region: "mars"}}, &reply)
	must.ErrorIs(t, err, ErrNoRegionPath)
	must.ErrorContains(t, err, `No path to region "mars"`)
}
