package client

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad"
	"github.com/opennomad/nomad/structs"
)

// testServer starts a real single server, in memory, with short Raft
// timeouts and heartbeat TTLs, and waits until it leads.
func testServer(t *testing.T, cb func(*nomad.Config)) *nomad.Server {
	t.Helper()
	cfg := nomad.DefaultConfig()
	cfg.DevMode = true
	cfg.NodeName = "test-server"
	rc := nomad.DefaultRaftConfig()
	rc.HeartbeatTimeout = 50 * time.Millisecond
	rc.ElectionTimeout = 50 * time.Millisecond
	rc.LeaderLeaseTimeout = 50 * time.Millisecond
	cfg.RaftConfig = rc
	cfg.MinHeartbeatTTL = 200 * time.Millisecond
	cfg.HeartbeatGrace = time.Second
	cfg.AllocUpdateBatchInterval = 10 * time.Millisecond
	if cb != nil {
		cb(cfg)
	}
	s, err := nomad.NewServer(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = s.Shutdown() })
	lead := &leadSignal{ch: make(chan struct{})}
	s.AddLeadershipObserver(lead)
	select {
	case <-lead.ch:
	case <-time.After(10 * time.Second):
		t.Fatal("test server did not become leader")
	}
	return s
}

type leadSignal struct {
	once sync.Once
	ch   chan struct{}
}

func (l *leadSignal) LeadershipGained(context.Context) { l.once.Do(func() { close(l.ch) }) }
func (l *leadSignal) LeadershipLost()                  {}

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

// methodsOf lists the methods called, in order, without repeats in a row.
func methodsOf(w *twin) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, c := range w.calls {
		if len(out) == 0 || out[len(out)-1] != c.method {
			out = append(out, c.method)
		}
	}
	return slices.Clip(out)
}

var errNoLeader = structs.ErrNoLeader
