package nomad

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestVersionGate: the answer is checked at first use and again only
// once it is versionGateTTL old, so a server that upgrades (or an old
// one that joins) is seen within that time.
func TestVersionGate(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	checks, answer := 0, false
	g := newVersionGate(clk, func() bool { checks++; return answer })

	must.False(t, g.Open())
	answer = true
	must.False(t, g.Open(), must.Sprint("cached"))
	must.Eq(t, 1, checks)

	clk.Advance(versionGateTTL)
	must.True(t, g.Open())
	must.Eq(t, 2, checks)

	answer = false
	clk.Advance(versionGateTTL / 2)
	must.True(t, g.Open(), must.Sprint("cached"))
	clk.Advance(versionGateTTL / 2)
	must.False(t, g.Open())
	must.Eq(t, 3, checks)
}

// keepLog keeps every Raft entry in the log, for planResultJobs.
func keepLog(c *Config) {
	c.RaftConfig.SnapshotThreshold = 1 << 40
	c.RaftConfig.TrailingLogs = 1 << 40
}

// planResultJobs returns, for every plan result in s's Raft log that
// placed allocs, whether it carried the job and whether it named it.
func planResultJobs(t *testing.T, s *Server) (carried, named int) {
	t.Helper()
	for i := uint64(1); i <= s.raft.LastIndex(); i++ {
		var l raft.Log
		if err := s.raftStores.logs.GetLog(i, &l); err != nil {
			continue // compacted
		}
		if l.Type != raft.LogCommand || len(l.Data) == 0 || structs.MessageType(l.Data[0]) != structs.ApplyPlanResultsRequestType {
			continue
		}
		var req structs.ApplyPlanResultsRequest
		must.NoError(t, structs.Decode(l.Data[1:], &req))
		if req.Job != nil {
			carried++
		}
		if req.JobRef != nil {
			named++
		}
	}
	return carried, named
}

// TestServer_PlanResultsNameTheJobOnlyWhenEveryServerCan: a server alone
// in its Raft configuration knows every server's build (its own), so its
// plan results name the job; the leader of three servers that share no
// gossip cannot vouch for the others' builds and keeps carrying the job.
func TestServer_PlanResultsNameTheJobOnlyWhenEveryServerCan(t *testing.T) {
	t.Run("alone", func(t *testing.T) {
		s := newPipelineServer(t, 1, keepLog)
		registerNode(t, s, mock.Node())
		job := mock.Job(mock.Count(1))
		registerJob(t, s, job.Copy())
		waitForLive(t, s, job, 1)
		carried, named := planResultJobs(t, s)
		must.Eq(t, 0, carried)
		must.Positive(t, named)
	})
	t.Run("among servers of unknown builds", func(t *testing.T) {
		c := newInmemCluster(t, 3, func(cfg *Config) {
			cfg.NumSchedulers = 1
			cfg.LeaderPausedFraction = 0
			keepLog(cfg)
		})
		leader := leaderOf(t, c.servers)
		registerNode(t, leader, mock.Node())
		job := mock.Job(mock.Count(1))
		registerJob(t, leader, job.Copy())
		waitForLive(t, leader, job, 1)
		carried, named := planResultJobs(t, leader)
		must.Positive(t, carried, must.Sprintf("carried %d, named %d", carried, named))
		must.Eq(t, 0, named)
	})
}

// planResultEvals counts, in s's Raft log, the plan results that carried
// their eval and the eval updates written for evals in done.
func planResultEvals(t *testing.T, s *Server, done map[string]bool) (carried, updates int) {
	t.Helper()
	for i := uint64(1); i <= s.raft.LastIndex(); i++ {
		var l raft.Log
		if err := s.raftStores.logs.GetLog(i, &l); err != nil {
			continue // compacted
		}
		if l.Type != raft.LogCommand || len(l.Data) == 0 {
			continue
		}
		switch structs.MessageType(l.Data[0]) {
		case structs.ApplyPlanResultsRequestType:
			var req structs.ApplyPlanResultsRequest
			must.NoError(t, structs.Decode(l.Data[1:], &req))
			if req.Eval != nil {
				carried++
			}
		case structs.EvalUpdateRequestType:
			var req structs.EvalUpdateRequest
			must.NoError(t, structs.Decode(l.Data[1:], &req))
			for _, e := range req.Evals {
				if done[e.ID] && e.Status == structs.EvalStatusComplete {
					updates++
				}
			}
		}
	}
	return carried, updates
}

// TestServer_PlanResultsCarryTheEvalOnlyWhenEveryServerCan: a server
// alone writes a job's eval with its plan, and no eval update follows;
// the leader of servers whose builds it cannot vouch for leaves the eval
// to the worker's update, and the eval completes all the same.
func TestServer_PlanResultsCarryTheEvalOnlyWhenEveryServerCan(t *testing.T) {
	check := func(t *testing.T, s *Server, wantCarried bool) {
		registerNode(t, s, mock.Node())
		job := mock.Job(mock.Count(1))
		registerJob(t, s, job.Copy())
		waitForLive(t, s, job, 1) // and every eval of the job closed
		evals, err := s.State().EvalsByJob(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		must.Len(t, 1, evals)
		must.Eq(t, structs.EvalStatusComplete, evals[0].Status)
		carried, updates := planResultEvals(t, s, map[string]bool{evals[0].ID: true})
		if wantCarried {
			must.Eq(t, 1, carried)
			must.Eq(t, 0, updates)
		} else {
			must.Eq(t, 0, carried)
			must.Eq(t, 1, updates)
		}
	}
	t.Run("alone", func(t *testing.T) {
		check(t, newPipelineServer(t, 1, keepLog), true)
	})
	t.Run("among servers of unknown builds", func(t *testing.T) {
		c := newInmemCluster(t, 3, func(cfg *Config) {
			cfg.NumSchedulers = 1
			cfg.LeaderPausedFraction = 0
			keepLog(cfg)
		})
		check(t, leaderOf(t, c.servers), false)
	})
}
