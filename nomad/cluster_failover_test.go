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

// followersOf returns the servers other than leader.
func followersOf(servers []*Server, leader *Server) []*Server {
	var out []*Server
	for _, s := range servers {
		if s != leader {
			out = append(out, s)
		}
	}
	return out
}

// hasJob reports whether s's state holds the job.
func hasJob(t *testing.T, s *Server, job *structs.Job) bool {
	t.Helper()
	got, err := s.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	return got != nil
}

// A write sent to a follower right after the leader dies waits out the
// election and is served by the new leader; nothing written before is
// lost.
func TestCluster_ForwardWaitsOutTheElection(t *testing.T) {
	servers := newTestCluster(t, 3)
	old := leaderOf(t, servers)
	before := mock.Job()
	registerJob(t, old, before)
	rest := followersOf(servers, old)
	must.NoError(t, old.Shutdown())

	after := mock.Job()
	var reply structs.JobRegisterResponse
	must.NoError(t, rest[0].RPC("Job.Register", &structs.JobRegisterRequest{Job: after}, &reply))

	leader := leaderOf(t, rest)
	for _, s := range rest {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := s.State().SnapshotMinIndex(ctx, reply.Index)
		cancel()
		must.NoError(t, err)
		must.True(t, hasJob(t, s, before), must.Sprintf("%s lost the job written before the failover", s.ID()))
		must.True(t, hasJob(t, s, after))
	}
	must.True(t, leader.isEstablishedLeader())
}

// Without a quorum there is no leader: a write waits the hold timeout and
// fails with "No cluster leader", while stale reads are still answered.
func TestCluster_NoQuorumFailsAfterHoldTimeout(t *testing.T) {
	c := newInmemCluster(t, 3, func(cfg *Config) { cfg.Cluster.RPCHoldTimeout = 300 * time.Millisecond })
	leader := leaderOf(t, c.servers)
	job := mock.Job()
	registerJob(t, leader, job)
	rest := followersOf(c.servers, leader)
	survivor := rest[0]
	waitFor(t, func() bool { return hasJob(t, survivor, job) })
	must.NoError(t, leader.Shutdown())
	must.NoError(t, rest[1].Shutdown())

	start := time.Now()
	err := survivor.RPC("Job.Register", &structs.JobRegisterRequest{Job: mock.Job()}, &structs.JobRegisterResponse{})
	must.ErrorIs(t, err, structs.ErrNoLeader)
	must.Greater(t, 300*time.Millisecond, time.Since(start), must.Sprint("the write waited for a leader"))

	var stale structs.SingleJobResponse
	must.NoError(t, survivor.RPC("Job.GetJob", &structs.JobSpecificRequest{JobID: job.ID,
		QueryOptions: structs.QueryOptions{AllowStale: true}}, &stale))
	must.NotNil(t, stale.Job)
	must.Positive(t, stale.LastContact, must.Sprint("a stale answer says how old it is"))
}

// A leader cut off from the others cannot commit: its write fails, the
// majority elects a new leader and commits, and once the partition heals
// the old leader follows and holds exactly what the majority committed.
func TestCluster_PartitionedMinorityCannotCommit(t *testing.T) {
	c := newInmemCluster(t, 3, func(cfg *Config) { cfg.Cluster.RPCHoldTimeout = 300 * time.Millisecond })
	old := leaderOf(t, c.servers)
	majority := followersOf(c.servers, old)
	c.isolate(c.index(old))

	lost := mock.Job()
	err := old.RPC("Job.Register", &structs.JobRegisterRequest{Job: lost}, &structs.JobRegisterResponse{})
	must.ErrorIs(t, err, structs.ErrNoLeader)

	leaderOf(t, majority)
	kept := mock.Job()
	var reply structs.JobRegisterResponse
	must.NoError(t, majority[0].RPC("Job.Register", &structs.JobRegisterRequest{Job: kept}, &reply))

	c.heal(c.index(old))
	waitFor(t, func() bool {
		l, _ := old.raft.LeaderWithID()
		return l != "" && old.raft.State() == raft.Follower && old.raft.AppliedIndex() >= reply.Index
	})
	for _, s := range c.servers {
		// Raft counts entries applied once handed to the FSM: wait for the
		// state store itself.
		waitFor(t, func() bool {
			idx, err := s.State().LatestIndex()
			return err == nil && idx >= reply.Index
		})
		must.False(t, hasJob(t, s, lost), must.Sprintf("%s has the job the minority could not commit", s.ID()))
		must.True(t, hasJob(t, s, kept), must.Sprintf("%s misses the job the majority committed", s.ID()))
	}
}

// A follower that fell behind past the log the leader kept catches up by
// installing the leader's snapshot, then follows the log again.
func TestCluster_LaggingFollowerCatchesUpFromSnapshot(t *testing.T) {
	c := newInmemCluster(t, 3, func(cfg *Config) {
		cfg.RaftTrailingLogs = 5
		cfg.RaftSnapshotThreshold = 10
	})
	leader := leaderOf(t, c.servers)
	lagging := followersOf(c.servers, leader)[0]
	c.isolate(c.index(lagging))

	var jobs []*structs.Job
	var last uint64
	for i := 0; i < 30; i++ {
		job := mock.Job()
		jobs = append(jobs, job)
		last = registerJob(t, leader, job).Index
	}
	// Compact the leader's log past what the follower has.
	must.NoError(t, leader.raft.Snapshot().Error())
	first, err := leader.raftStores.logs.FirstIndex()
	must.NoError(t, err)
	must.Greater(t, lagging.raft.AppliedIndex()+1, first, must.Sprint("the follower's next entry is gone from the leader's log"))

	c.heal(c.index(lagging))
	// The restore swaps the follower's store: poll rather than wait on one.
	waitFor(t, func() bool {
		idx, err := lagging.State().LatestIndex()
		return err == nil && idx >= last
	})
	for _, job := range jobs {
		must.True(t, hasJob(t, lagging, job))
	}
	snaps, err := lagging.raftStores.snaps.List()
	must.NoError(t, err)
	must.SliceNotEmpty(t, snaps, must.Sprint("the follower installed a snapshot"))

	// And it follows the log from there.
	next := mock.Job()
	idx := registerJob(t, leader, next).Index
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	_, err = lagging.State().SnapshotMinIndex(ctx2, idx)
	must.NoError(t, err)
	must.True(t, hasJob(t, lagging, next))
}
