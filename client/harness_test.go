package client

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad"
	"github.com/opennomad/nomad/nomad/servertest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// testServer starts a real single server, in memory, with short Raft
// timeouts and heartbeat TTLs, and waits until it leads.
func testServer(t *testing.T, cb func(*nomad.Config)) *nomad.Server {
	t.Helper()
	cfg := servertest.Config("test-server")
	cfg.MinHeartbeatTTL = 200 * time.Millisecond
	cfg.HeartbeatGrace = time.Second
	cfg.AllocUpdateBatchInterval = 10 * time.Millisecond
	// The tests place allocs themselves (place): no scheduler may place
	// a registered job's own allocs beside them.
	cfg.NumSchedulers = 0
	if cb != nil {
		cb(cfg)
	}
	return servertest.Start(t, cfg)
}

// testClientConfig is a client of servers with mock_driver, fast retries
// and a private data dir.
func testClientConfig(t *testing.T, servers ...ServerEndpoint) *Config {
	t.Helper()
	return &Config{
		DataDir:  t.TempDir(),
		NodeName: "test-node",
		Servers:  servers,
		Options:  map[string]string{OptionMockDriverEnable: "true"},
		DevMode:  true,
		RetryMin: 10 * time.Millisecond,
		RetryMax: 100 * time.Millisecond,
		// Fingerprinting needs no real numbers for these tests.
		CPUTotalCompute: 4000,
		MemoryTotalMB:   8192,
		Logger:          hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testWriter{t}}),
	}
}

// testClient starts a client; it is destroyed when the test ends.
func testClient(t *testing.T, cfg *Config) *Client {
	t.Helper()
	c, err := NewClient(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// local names the in-process server as the one endpoint of a client.
func local(s RPCer) ServerEndpoint { return ServerEndpoint{Name: "local", Conn: s} }

// testWriter sends logs to the test's log, and stops at its end.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	defer func() { _ = recover() }() // a log line after the test ended
	w.t.Log(string(p))
	return len(p), nil
}

// twin is an RPCer in front of another that records every call and
// fails the ones its rules pick: the error-path twin of a server.
type twin struct {
	inner RPCer

	mu    sync.Mutex
	calls []twinCall
	// fail answers err instead of calling inner while it returns true.
	fail func(method string, n int) error
}

type twinCall struct {
	method string
	at     time.Time
	args   interface{}
	// err is what the call returned, injected or the server's.
	err error
}

func (w *twin) RPC(method string, args, reply interface{}) error {
	w.mu.Lock()
	n := 0
	for _, c := range w.calls {
		if c.method == method {
			n++
		}
	}
	var err error
	if w.fail != nil {
		err = w.fail(method, n)
	}
	i := len(w.calls)
	w.calls = append(w.calls, twinCall{method: method, at: time.Now(), args: args, err: err})
	w.mu.Unlock()
	if err != nil {
		return err
	}
	if w.inner == nil {
		err = errors.New("twin: no server behind")
	} else {
		err = w.inner.RPC(method, args, reply)
	}
	w.mu.Lock()
	w.calls[i].err = err
	w.mu.Unlock()
	return err
}

// callsOf returns the recorded calls of method.
func (w *twin) callsOf(method string) []twinCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []twinCall
	for _, c := range w.calls {
		if c.method == method {
			out = append(out, c)
		}
	}
	return out
}

func (w *twin) setFail(f func(method string, n int) error) {
	w.mu.Lock()
	w.fail = f
	w.mu.Unlock()
}

// eventually polls cond for up to 10s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// nodeStatus reads the node's status from the server's state.
func nodeStatus(t *testing.T, s *nomad.Server, id string) string {
	t.Helper()
	n, err := s.State().NodeByID(nil, id)
	must.NoError(t, err)
	if n == nil {
		return ""
	}
	return n.Status
}

// mockDriverJob is a service job of count allocs whose task "web" runs
// under mock_driver with cfg; without run_for it runs for an hour, until
// the test stops it.
func mockDriverJob(count int, cfg map[string]interface{}) *structs.Job {
	j := mock.Job(mock.Count(count))
	tg := j.TaskGroups[0]
	tg.Networks = nil
	if cfg == nil {
		cfg = map[string]interface{}{}
	}
	if _, ok := cfg["run_for"]; !ok {
		cfg["run_for"] = "1h"
	}
	t := tg.Tasks[0]
	t.Driver, t.Config = "mock_driver", cfg
	return j
}

// asBatch turns a job into a batch job.
func asBatch(j *structs.Job) *structs.Job {
	j.Type = structs.JobTypeBatch
	for _, tg := range j.TaskGroups {
		tg.Migrate, tg.Update = nil, nil
	}
	j.Update = structs.UpdateStrategy{}
	return j
}

// registerJob registers a job and returns it as stored.
func registerJob(t *testing.T, s *nomad.Server, j *structs.Job) *structs.Job {
	t.Helper()
	var resp structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: j}, &resp))
	stored, err := s.State().JobByID(nil, j.Namespace, j.ID)
	must.NoError(t, err)
	must.NotNil(t, stored)
	return stored
}

// commitPlan writes a plan result through Raft, as the leader's plan
// applier does, and returns its index.
func commitPlan(t *testing.T, s *nomad.Server, req *structs.ApplyPlanResultsRequest) uint64 {
	t.Helper()
	buf, err := structs.Encode(structs.ApplyPlanResultsRequestType, req)
	must.NoError(t, err)
	f := s.Raft().Apply(buf, 5*time.Second)
	must.NoError(t, f.Error())
	if err, ok := f.Response().(error); ok {
		t.Fatalf("plan result refused: %v", err)
	}
	return f.Index()
}

// place commits count allocs of job on the client's node and returns
// them as stored; opts apply to every alloc.
func place(t *testing.T, s *nomad.Server, job *structs.Job, nodeID string, count int, opts ...mock.AllocOption) []*structs.Allocation {
	t.Helper()
	node, err := s.State().NodeByID(nil, nodeID)
	must.NoError(t, err)
	must.NotNil(t, node)
	var allocs []*structs.Allocation
	for i := 0; i < count; i++ {
		allocs = append(allocs, mock.Alloc(append([]mock.AllocOption{mock.ForJob(job, i), mock.OnNode(node)}, opts...)...))
	}
	commitPlan(t, s, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: allocs, Job: job},
	})
	out := make([]*structs.Allocation, 0, count)
	for _, a := range allocs {
		stored, err := s.State().AllocByID(nil, a.ID)
		must.NoError(t, err)
		out = append(out, stored)
	}
	return out
}

// stop commits the servers' decision to stop allocs.
func stop(t *testing.T, s *nomad.Server, ids ...string) {
	t.Helper()
	var stops []*structs.AllocStop
	for _, id := range ids {
		stops = append(stops, &structs.AllocStop{ID: id, DesiredDescription: "alloc is being stopped by the test"})
	}
	commitPlan(t, s, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsStopped: stops},
	})
}

// serverAlloc reads an alloc from the server's state (nil when gone).
func serverAlloc(t *testing.T, s *nomad.Server, id string) *structs.Allocation {
	t.Helper()
	a, err := s.State().AllocByID(nil, id)
	must.NoError(t, err)
	return a
}

// clientStatusIs reports whether the server holds status for alloc id.
func clientStatusIs(t *testing.T, s *nomad.Server, id, status string) func() bool {
	return func() bool {
		a := serverAlloc(t, s, id)
		return a != nil && a.ClientStatus == status
	}
}
