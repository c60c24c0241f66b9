package nomad

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// testRaftConfig shortens Raft's timeouts so a single test server elects
// itself in milliseconds; one voter never loses its lease.
func testRaftConfig() *raft.Config {
	c := DefaultRaftConfig()
	c.HeartbeatTimeout = 50 * time.Millisecond
	c.ElectionTimeout = 50 * time.Millisecond
	c.LeaderLeaseTimeout = 50 * time.Millisecond
	return c
}

// testConfig is an in-memory single server configuration without
// scheduling workers, so tests can play the worker themselves; tests of
// the whole pipeline set NumSchedulers.
func testConfig() *Config {
	c := DefaultConfig()
	c.DevMode = true
	c.RaftConfig = testRaftConfig()
	c.NodeName = "test"
	c.NumSchedulers = 0
	return c
}

// newTestServer starts a server (in memory unless cb sets a data dir) and
// waits until it leads. It is shut down when the test ends.
func newTestServer(t testing.TB, cb func(*Config)) *Server {
	t.Helper()
	return newTestServerWith(t, cb, nil)
}

// newTestServerWith is newTestServer with the leader components p builds
// (the real ones when nil).
func newTestServerWith(t testing.TB, cb func(*Config), p func(*Config) (pipeline, error)) *Server {
	t.Helper()
	cfg := testConfig()
	if cb != nil {
		cb(cfg)
	}
	s, err := newServer(cfg, p)
	must.NoError(t, err)
	t.Cleanup(func() { _ = s.Shutdown() })
	waitForLeadership(t, s)
	// A new cluster's leader writes its first root key on its own
	// goroutine; tests start from the state the cluster settles into.
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		keys, err := store.RootKeys(ws)
		must.NoError(t, err)
		return len(keys) > 0, "no root key yet"
	})
	return s
}

// leadershipSignal closes gained on the first LeadershipGained.
type leadershipSignal struct {
	once   sync.Once
	gained chan struct{}
}

func (l *leadershipSignal) LeadershipGained(context.Context) { l.once.Do(func() { close(l.gained) }) }
func (l *leadershipSignal) LeadershipLost()                  {}

// waitForLeadership blocks until the server has established leadership.
func waitForLeadership(t testing.TB, s *Server) {
	t.Helper()
	sig := &leadershipSignal{gained: make(chan struct{})}
	s.AddLeadershipObserver(sig)
	select {
	case <-sig.gained:
	case <-time.After(10 * time.Second):
		t.Fatal("server did not become leader")
	}
}

// registerJob registers job through the endpoint and returns the reply.
func registerJob(t *testing.T, s *Server, job *structs.Job) *structs.JobRegisterResponse {
	t.Helper()
	var reply structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reply))
	return &reply
}

// registerNode registers a node through the endpoint.
func registerNode(t *testing.T, s *Server, node *structs.Node) *structs.NodeUpdateResponse {
	t.Helper()
	var reply structs.NodeUpdateResponse
	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node}, &reply))
	return &reply
}

// placeAlloc commits an alloc of job on node as the plan applier would.
func placeAlloc(t *testing.T, s *Server, job *structs.Job, node *structs.Node, index int) *structs.Allocation {
	t.Helper()
	stored, err := s.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	alloc := mock.Alloc(mock.ForJob(stored, index), mock.OnNode(node))
	_, _, err = s.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{alloc}, Job: stored},
	})
	must.NoError(t, err)
	got, err := s.State().AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.NotNil(t, got)
	return got
}

// mustCoded asserts that err carries the HTTP status code and message msg.
func mustCoded(t *testing.T, err error, code int, msg string) {
	t.Helper()
	got, gotMsg, ok := structs.ErrorCode(err)
	must.True(t, ok, must.Sprintf("error %v carries no status", err))
	must.Eq(t, code, got, must.Sprintf("status of %v", err))
	must.Eq(t, msg, gotMsg)
}

func TestServer_ConfigValidation(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Region = ""
	cfg.MinHeartbeatTTL = 0
	cfg.EnabledSchedulers = []string{"service", "bogus"}
	_, err := NewServer(cfg)
	must.Error(t, err)
	for _, want := range []string{"region is required", "data_dir is required", "min_heartbeat_ttl",
		`unknown scheduler "bogus"`, `must include "_core"`} {
		must.StrContains(t, err.Error(), want)
	}
}

func TestServer_LeadsAndWritesClusterDefaults(t *testing.T) {
	s := newTestServer(t, func(c *Config) {
		c.DefaultSchedulerConfig.SchedulerAlgorithm = structs.SchedulerAlgorithmSpread
	})
	must.True(t, s.IsLeader())
	must.NotEq(t, "", s.Leader())
	meta, err := s.State().ClusterMetadata(nil)
	must.NoError(t, err)
	must.NotNil(t, meta)
	must.NotEq(t, "", meta.ClusterID)
	_, cfg, err := s.State().SchedulerConfig(nil)
	must.NoError(t, err)
	must.Eq(t, structs.SchedulerAlgorithmSpread, cfg.SchedulerAlgorithm)

	var leader string
	must.NoError(t, s.RPC("Status.Leader", &structs.GenericRequest{}, &leader))
	must.Eq(t, s.Leader(), leader)
	var peers []string
	must.NoError(t, s.RPC("Status.Peers", &structs.GenericRequest{}, &peers))
	must.Eq(t, []string{leader}, peers)
	must.NoError(t, s.RPC("Status.Ping", struct{}{}, &struct{}{}))
}

func TestServer_RegisterJobWritesItsEval(t *testing.T) {
	s := newTestServer(t, nil)
	job := mock.Job()
	reply := registerJob(t, s, job)
	must.NotEq(t, "", reply.EvalID)
	must.Eq(t, reply.Index, reply.EvalCreateIndex)
	must.Eq(t, reply.Index, reply.JobModifyIndex)

	stored, err := s.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Eq(t, reply.JobModifyIndex, stored.JobModifyIndex)
	eval, err := s.State().EvalByID(nil, reply.EvalID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalTriggerJobRegister, eval.TriggeredBy)
	must.Eq(t, structs.EvalStatusPending, eval.Status)
	must.Eq(t, reply.Index, eval.CreateIndex)
	must.Eq(t, stored.JobModifyIndex, eval.JobModifyIndex)
	must.Eq(t, job.Priority, eval.Priority)

	// The same job again: no new version, a fresh eval.
	again := registerJob(t, s, job.Copy())
	must.NotEq(t, reply.EvalID, again.EvalID)
	must.Eq(t, reply.JobModifyIndex, again.JobModifyIndex)
	evals, err := s.State().EvalsByJob(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Len(t, 2, evals)
}

func TestServer_RPCSeam(t *testing.T) {
	s := newTestServer(t, nil)
	var reply structs.SingleJobResponse
	err := s.RPC("Job.Nope", &structs.JobSpecificRequest{}, &reply)
	must.ErrorIs(t, err, structs.ErrUnknownMethod)
	err = s.RPC("Job.GetJob", &structs.NodeSpecificRequest{}, &reply)
	must.ErrorContains(t, err, "args are")
	err = s.RPC("Job.GetJob", &structs.JobSpecificRequest{}, &structs.SingleNodeResponse{})
	must.ErrorContains(t, err, "reply is")

	// Requests for another region have nowhere to go.
	err = s.RPC("Job.GetJob", &structs.JobSpecificRequest{QueryOptions: structs.QueryOptions{Region: "mars"}}, &reply)
	must.ErrorIs(t, err, ErrNoRegionPath)
}

func TestServer_ClockIsInjected(t *testing.T) {
	fake := clock.NewFake(time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC))
	s := newTestServer(t, func(c *Config) { c.Clock = fake })
	job := mock.Job()
	registerJob(t, s, job)
	stored, _ := s.State().JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, fake.Now().UnixNano(), stored.SubmitTime)
}
