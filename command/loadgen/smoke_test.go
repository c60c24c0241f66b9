package loadgen

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/acl"
	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/command/agent"
	"github.com/opennomad/nomad/command/nodesim"
	"github.com/opennomad/nomad/nomad"
	"github.com/opennomad/nomad/nomad/servertest"
	"github.com/opennomad/nomad/nomad/stream"
)

// eventServer is the part of an agent's local server the HTTP API needs
// for the event stream; the worker endpoints are not served.
type eventServer struct {
	broker *stream.EventBroker
}

var errNotServed = errors.New("not served by this test server")

func (e *eventServer) SchedulerWorkers() ([]api.AgentSchedulerWorkerInfo, error) {
	return nil, errNotServed
}

func (e *eventServer) SchedulerWorkerConfig() (api.AgentSchedulerWorkerConfigRequest, error) {
	return api.AgentSchedulerWorkerConfigRequest{}, errNotServed
}

func (e *eventServer) SetSchedulerWorkerConfig(api.AgentSchedulerWorkerConfigRequest) (api.AgentSchedulerWorkerConfigRequest, error) {
	return api.AgentSchedulerWorkerConfigRequest{}, errNotServed
}

func (e *eventServer) Stats() map[string]map[string]string { return nil }

func (e *eventServer) Subscribe(req *stream.SubscribeRequest) (*stream.Subscription, error) {
	return e.broker.Subscribe(req)
}

// inProcessCluster is one in-memory server with its HTTP API on a free
// loopback port.
type inProcessCluster struct {
	srv  *nomad.Server
	addr string
}

func startInProcessCluster(t *testing.T) *inProcessCluster {
	t.Helper()
	return startInProcessClusterOn(t, "")
}

// startInProcessClusterOn starts the server on dataDir (Raft log written
// with fsync), or in memory when dataDir is empty.
func startInProcessClusterOn(t testing.TB, dataDir string) *inProcessCluster {
	t.Helper()
	broker := stream.NewEventBroker(stream.Config{EventBufferSize: 10000})
	cfg := servertest.Config("loadgen-test")
	cfg.DevMode = dataDir == ""
	cfg.DataDir = dataDir
	cfg.EventPublisher = broker
	srv := servertest.Start(t, cfg)

	httpSrv, err := agent.NewHTTPServer(agent.HTTPServerConfig{
		RPC:            srv,
		Server:         &eventServer{broker: broker},
		Metrics:        metrics.NewInmemSink(100*time.Millisecond, time.Minute),
		EventHeartbeat: time.Second,
	})
	must.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	httpSrv.Start(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = httpSrv.Shutdown(ctx)
	})
	return &inProcessCluster{srv: srv, addr: "http://" + ln.Addr().String()}
}

// TestRun_SimulatedNodesAgainstOneServer is the smoke test of the
// cluster benchmark: simulated nodes take the allocations of jobs the
// load generator submits, report them running, and the load generator
// sees every one committed and running through the event stream.
func TestRun_SimulatedNodesAgainstOneServer(t *testing.T) {
	c := startInProcessCluster(t)

	simCfg := nodesim.DefaultConfig()
	simCfg.Nodes = 30
	simCfg.SyncInterval = 50 * time.Millisecond
	sim, err := nodesim.New(simCfg, []nodesim.Server{{Name: "local", Conn: c.srv}})
	must.NoError(t, err)
	sim.Start()
	t.Cleanup(sim.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	must.NoError(t, sim.WaitRegistered(ctx))

	var progressOut strings.Builder
	cfg := DefaultConfig()
	cfg.Addresses = []string{c.addr}
	cfg.Jobs = 20
	cfg.Count = 5
	cfg.Concurrency = 4
	cfg.Timeout = 30 * time.Second
	cfg.Progress = &progressOut
	res, err := Run(ctx, cfg)
	must.NoError(t, err)

	must.False(t, res.Incomplete)
	must.Eq(t, 1, res.Servers)
	must.Eq(t, 30, res.Nodes)
	must.Eq(t, 100, res.Allocs)
	must.Eq(t, 100, res.Committed)
	must.Eq(t, 100, res.Running)
	must.Positive(t, res.AllocsPerSec)
	must.Positive(t, res.CommitP50)
	must.LessEq(t, res.CommitMax, res.CommitP99)
	must.LessEq(t, res.RunningP99, res.CommitP99)
	var report strings.Builder
	res.Report(&report)
	t.Log("\n" + report.String())
	// One eval per registration, and those the deployment watcher writes
	// as allocations turn healthy (some may still wait when the run
	// ends); none failed or blocked.
	must.GreaterEq(t, 20, res.Evals["complete"], must.Sprint(res.Evals))
	must.Eq(t, 0, res.Evals["failed"]+res.Evals["blocked"], must.Sprint(res.Evals))
	// The agent's metrics were read (no rejection: one server, one
	// applier, nothing races).
	must.True(t, res.PlanRejectionsKnown)
	must.Eq(t, 0.0, res.PlanRejections)
	must.StrContains(t, progressOut.String(), "100/100 committed")
	must.StrHasPrefix(t, "W2 servers=1 nodes=30 allocs=100 per_job=5 allocs_per_sec=", res.Line("W2"))

	st := sim.Stats()
	must.Eq(t, int64(100), st.AllocsSeen)
	must.Eq(t, int64(100), st.AllocsRunning)
	must.Eq(t, int64(0), st.UpdateErrors)
}

// ResolveACL: the server runs with ACLs off.
func (e *eventServer) ResolveACL(string) (*acl.ACL, error) { return acl.ACLsDisabled, nil }
