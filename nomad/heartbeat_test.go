package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestHeartbeatTTL(t *testing.T) {
	cases := []struct {
		name   string
		nodes  int
		min    time.Duration
		perSec float64
		r      float64
		want   time.Duration
	}{
		// 100 nodes at 50/s take 2 s to hear once: the 10 s minimum rules.
		{"small cluster gets the minimum", 100, 10 * time.Second, 50, 0, 10 * time.Second},
		// Jitter adds up to the base again: 10 s + 0.5*10 s.
		{"jitter adds a share of the base", 100, 10 * time.Second, 50, 0.5, 15 * time.Second},
		// 1000 nodes at 50/s take 20 s, more than the minimum.
		{"large cluster spreads heartbeats", 1000, 10 * time.Second, 50, 0, 20 * time.Second},
		// 20 s + 0.25*20 s.
		{"large cluster with jitter", 1000, 10 * time.Second, 50, 0.25, 25 * time.Second},
		{"no nodes", 0, time.Second, 50, 0, time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, heartbeatTTL(tc.nodes, tc.min, tc.perSec, tc.r))
		})
	}
}

// heartbeatFixture is a leader on a fake clock with one ready node that
// runs an alloc of a service job, and a system job.
type heartbeatFixture struct {
	srv    *Server
	clock  *clock.Fake
	node   *structs.Node
	job    *structs.Job
	sysJob *structs.Job
	ttl    time.Duration
}

func newHeartbeatFixture(t *testing.T, cb func(*Config)) *heartbeatFixture {
	t.Helper()
	fake := clock.NewFake(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newTestServer(t, func(c *Config) {
		c.Clock = fake
		if cb != nil {
			cb(c)
		}
	})
	f := &heartbeatFixture{srv: s, clock: fake, node: mock.Node(), job: mock.Job(), sysJob: mock.SystemJob()}
	reply := registerNode(t, s, f.node)
	f.ttl = reply.HeartbeatTTL
	registerJob(t, s, f.job)
	registerJob(t, s, f.sysJob)
	placeAlloc(t, s, f.job, f.node, 0)
	return f
}

func (f *heartbeatFixture) nodeStatus(t *testing.T) *structs.Node {
	t.Helper()
	n, err := f.srv.State().NodeByID(nil, f.node.ID)
	must.NoError(t, err)
	return n
}

func TestHeartbeat_MissedHeartbeatMarksNodeDownAndReplacesAllocs(t *testing.T) {
	f := newHeartbeatFixture(t, nil)
	cfg := f.srv.config
	must.Between(t, cfg.MinHeartbeatTTL, f.ttl, 2*cfg.MinHeartbeatTTL)
	must.Eq(t, 1, f.srv.heartbeats.count())

	// The client is told ttl; the server waits the grace on top.
	deadline := f.ttl + cfg.HeartbeatGrace
	f.clock.Advance(deadline - time.Millisecond)
	must.Eq(t, structs.NodeStatusReady, f.nodeStatus(t).Status)

	f.clock.Advance(time.Millisecond)
	node := f.nodeStatus(t)
	must.Eq(t, structs.NodeStatusDown, node.Status)
	must.Eq(t, structs.NodeEventMsgHeartbeatMissed, node.Events[len(node.Events)-1].Message)
	must.Eq(t, 0, f.srv.heartbeats.count())

	// One node-update eval per job with work on the node, plus the system
	// job that targets it, written with the status change.
	for _, job := range []*structs.Job{f.job, f.sysJob} {
		evals, err := f.srv.State().EvalsByJob(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		var nodeEvals []*structs.Evaluation
		for _, e := range evals {
			if e.TriggeredBy == structs.EvalTriggerNodeUpdate {
				nodeEvals = append(nodeEvals, e)
			}
		}
		must.Len(t, 1, nodeEvals, must.Sprintf("job %s", job.ID))
		must.Eq(t, f.node.ID, nodeEvals[0].NodeID)
		must.Eq(t, node.ModifyIndex, nodeEvals[0].NodeModifyIndex)
		must.Eq(t, node.ModifyIndex, nodeEvals[0].CreateIndex)
		must.Eq(t, structs.EvalStatusPending, nodeEvals[0].Status)
	}
}

func TestHeartbeat_HeartbeatRearmsTheTimer(t *testing.T) {
	f := newHeartbeatFixture(t, nil)
	deadline := f.ttl + f.srv.config.HeartbeatGrace
	f.clock.Advance(deadline - time.Second)

	var reply structs.NodeUpdateResponse
	must.NoError(t, f.srv.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{
		NodeID: f.node.ID, SecretID: f.node.SecretID, Status: structs.NodeStatusReady}, &reply))
	must.Positive(t, reply.HeartbeatTTL)
	// A heartbeat that changes nothing writes nothing.
	must.Eq(t, f.nodeStatus(t).ModifyIndex, reply.Index)

	f.clock.Advance(time.Second)
	must.Eq(t, structs.NodeStatusReady, f.nodeStatus(t).Status, must.Sprint("the old deadline must not fire"))
	f.clock.Advance(reply.HeartbeatTTL + f.srv.config.HeartbeatGrace)
	must.Eq(t, structs.NodeStatusDown, f.nodeStatus(t).Status)
}

func TestHeartbeat_NewLeaderGivesEveryNodeTheFailoverTTL(t *testing.T) {
	dir := t.TempDir()
	fake := clock.NewFake(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	onDisk := func(c *Config) {
		c.DevMode, c.DataDir, c.Clock = false, dir, fake
		c.FailoverHeartbeatTTL = 3 * time.Minute
	}
	s1 := newTestServer(t, onDisk)
	live, down := mock.Node(), mock.Node()
	registerNode(t, s1, live)
	registerNode(t, s1, down)
	var reply structs.NodeUpdateResponse
	must.NoError(t, s1.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{
		NodeID: down.ID, Status: structs.NodeStatusDown}, &reply))
	must.NoError(t, s1.Shutdown())

	s2 := newTestServer(t, onDisk)
	must.Eq(t, 1, s2.heartbeats.count(), must.Sprint("only the live node is tracked"))
	fake.Advance(3*time.Minute - time.Millisecond)
	n, _ := s2.State().NodeByID(nil, live.ID)
	must.Eq(t, structs.NodeStatusReady, n.Status)
	fake.Advance(time.Millisecond)
	n, _ = s2.State().NodeByID(nil, live.ID)
	must.Eq(t, structs.NodeStatusDown, n.Status)
}

func TestHeartbeat_LosingLeadershipClearsTimers(t *testing.T) {
	f := newHeartbeatFixture(t, nil)
	must.Eq(t, 1, f.srv.heartbeats.count())
	f.srv.revokeLeadership()
	must.Eq(t, 0, f.srv.heartbeats.count())
	f.clock.Advance(time.Hour)
	must.Eq(t, structs.NodeStatusReady, f.nodeStatus(t).Status)
}
