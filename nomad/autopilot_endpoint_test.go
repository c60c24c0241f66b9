package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/structs"
)

func TestAutopilotConfig_DefaultSetAndCAS(t *testing.T) {
	s := newTestServer(t, nil)
	var got structs.AutopilotConfigResponse
	must.NoError(t, s.RPC("Operator.AutopilotGetConfiguration", &structs.GenericRequest{}, &got))
	must.True(t, got.Config.CleanupDeadServers)
	must.Eq(t, 200*time.Millisecond, got.Config.LastContactThreshold)
	must.Eq(t, uint64(250), got.Config.MaxTrailingLogs)
	must.Eq(t, 10*time.Second, got.Config.ServerStabilizationTime)
	must.Positive(t, got.Config.ModifyIndex, must.Sprint("the leader stored the default"))

	cfg := *got.Config
	cfg.CleanupDeadServers = false
	cfg.MinQuorum = 3
	stale := cfg
	stale.ModifyIndex--
	var set structs.AutopilotSetConfigResponse
	must.NoError(t, s.RPC("Operator.AutopilotSetConfiguration", &structs.AutopilotSetConfigRequest{Config: stale, CAS: true}, &set))
	must.False(t, set.Updated)
	must.NoError(t, s.RPC("Operator.AutopilotSetConfiguration", &structs.AutopilotSetConfigRequest{Config: cfg, CAS: true}, &set))
	must.True(t, set.Updated)

	must.NoError(t, s.RPC("Operator.AutopilotGetConfiguration", &structs.GenericRequest{}, &got))
	must.False(t, got.Config.CleanupDeadServers)
	must.Eq(t, uint(3), got.Config.MinQuorum)
	enabled, minQuorum := s.deadServerCleanup()
	must.False(t, enabled)
	must.Eq(t, 3, minQuorum)

	bad := cfg
	bad.LastContactThreshold = -time.Second
	err := s.RPC("Operator.AutopilotSetConfiguration", &structs.AutopilotSetConfigRequest{Config: bad}, &set)
	must.ErrorIs(t, err, structs.ErrInvalid)
}

func TestAutopilotHealth_ThreeServers(t *testing.T) {
	c := newInmemCluster(t, 3, nil)
	leader := leaderOf(t, c.servers)

	health := func(via *Server) *structs.OperatorHealthReply {
		t.Helper()
		var out structs.OperatorHealthReply
		must.NoError(t, via.RPC("Operator.ServerHealth", &structs.GenericRequest{}, &out))
		return &out
	}
	var follower *Server
	for _, s := range c.servers {
		if s != leader {
			follower = s
		}
	}
	waitFor(t, func() bool { return health(leader).Healthy })
	// A follower's request is answered by the leader.
	out := health(follower)
	must.Eq(t, leader.ID(), out.Leader)
	must.Len(t, 3, out.Voters)
	must.Eq(t, 1, out.FailureTolerance)
	for _, srv := range out.Servers {
		must.Eq(t, srv.ID == leader.ID(), srv.Leader)
		must.True(t, srv.Voter)
		must.Eq(t, "alive", srv.SerfStatus)
		must.Positive(t, srv.LastIndex)
		must.NotEq(t, "", srv.Name)
	}

	// Cut off from the leader's Raft traffic, a follower stops hearing
	// from it and is judged unhealthy; the cluster tolerates no more
	// failures.
	c.isolate(c.index(follower))
	waitFor(t, func() bool {
		out := health(leader)
		return !out.Healthy && out.FailureTolerance == 0
	})
	for _, srv := range health(leader).Servers {
		must.Eq(t, srv.ID != follower.ID(), srv.Healthy, must.Sprintf("server %s", srv.ID))
	}
}

func TestRaftTransferLeadership(t *testing.T) {
	c := newInmemCluster(t, 3, nil)
	leader := leaderOf(t, c.servers)
	var target *Server
	for _, s := range c.servers {
		if s != leader {
			target = s
		}
	}
	var reply structs.GenericResponse
	cases := []struct {
		name string
		req  structs.LeadershipTransferRequest
		err  string
	}{
		{"both", structs.LeadershipTransferRequest{ID: "x", Address: "y"}, "not both"},
		{"unknown id", structs.LeadershipTransferRequest{ID: "nosuch"}, `id "nosuch" was not found`},
		{"unknown address", structs.LeadershipTransferRequest{Address: "10.9.9.9:1"}, `address "10.9.9.9:1" was not found`},
		{"itself", structs.LeadershipTransferRequest{ID: leader.ID()}, "cannot transfer leadership to itself"},
	}
	for _, tc := range cases {
		err := leader.RPC("Operator.RaftTransferLeadership", &tc.req, &reply)
		must.ErrorIs(t, err, structs.ErrInvalid, must.Sprint(tc.name))
		must.ErrorContains(t, err, tc.err, must.Sprint(tc.name))
	}

	must.NoError(t, leader.RPC("Operator.RaftTransferLeadership",
		&structs.LeadershipTransferRequest{ID: target.ID()}, &reply))
	waitFor(t, target.isEstablishedLeader)
}

// The leader publishes the health it judges at every tick.
func TestWatchServerHealth_Gauges(t *testing.T) {
	sink := metricstest.WithInmem(t)
	s := newTestServer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	ticks := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.watchServerHealth(ctx, ticks)
	}()
	ticks <- struct{}{}
	ticks <- struct{}{} // the first tick's judgement is complete
	cancel()
	<-done
	healthy, ok := metricstest.Gauge(t, sink, "nomad.nomad.autopilot.healthy")
	must.True(t, ok)
	must.Eq(t, float32(1), healthy)
	tolerance, ok := metricstest.Gauge(t, sink, "nomad.nomad.autopilot.failure_tolerance")
	must.True(t, ok)
	must.Eq(t, float32(0), tolerance)
}
