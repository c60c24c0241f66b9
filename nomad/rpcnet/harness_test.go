package rpcnet

import (
	"errors"
	"io"
	"net"
	"net/rpc"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// EchoArgs is the test endpoint's request. Hold is reported as the
// request's hold time (see Holder).
type EchoArgs struct {
	Msg string
	// Payload gives benchmarks a realistic request size.
	Payload *structs.Job
	Sleep   time.Duration
	Hold    time.Duration
}

func (a *EchoArgs) TimeToBlock() time.Duration { return a.Hold }

type EchoReply struct {
	Msg string
}

// Echo is the test endpoint.
type Echo struct {
	calls atomic.Int64
}

func (e *Echo) Echo(args *EchoArgs, reply *EchoReply) error {
	e.calls.Add(1)
	time.Sleep(args.Sleep)
	reply.Msg = args.Msg
	return nil
}

func (e *Echo) Fail(args *EchoArgs, reply *EchoReply) error {
	return errors.New(args.Msg)
}

func (e *Echo) FailWrapped(args *EchoArgs, reply *EchoReply) error {
	return errors.Join(errors.New("context"), structs.ErrNoLeader)
}

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (c *countingListener) Accept() (net.Conn, error) {
	conn, err := c.Listener.Accept()
	if err == nil {
		c.accepted.Add(1)
	}
	return conn, err
}

// testServer is a Listener serving the Echo endpoint on 127.0.0.1.
type testServer struct {
	*Listener
	echo     *Echo
	counting *countingListener
	done     chan error
}

// startTestServer listens on addr ("127.0.0.1:0" for a free port).
func startTestServer(t testing.TB, addr string) *testServer {
	t.Helper()
	return startTestServerTLS(t, addr, nil)
}

// startTestServerTLS is startTestServer serving TLS as tc says (nil:
// none).
func startTestServerTLS(t testing.TB, addr string, tc *ListenerTLS) *testServer {
	t.Helper()
	var ln net.Listener
	var err error
	// A restarted server may find its port briefly unavailable.
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	must.NoError(t, err)
	echo := &Echo{}
	rs := rpc.NewServer()
	must.NoError(t, rs.RegisterName("Echo", echo))
	counting := &countingListener{Listener: ln}
	l, err := NewListener(counting, ListenerConfig{
		ServeRPC: func(conn io.ReadWriteCloser) {
			rs.ServeCodec(NewServerCodec(conn))
		},
		TLS: tc,
	})
	must.NoError(t, err)
	ts := &testServer{Listener: l, echo: echo, counting: counting, done: make(chan error, 1)}
	go func() { ts.done <- l.Serve() }()
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// stop closes the listener and checks Serve ended cleanly.
func (ts *testServer) stop(t testing.TB) {
	if ts.Listener.isClosed() {
		return
	}
	must.NoError(t, ts.Close())
	select {
	case err := <-ts.done:
		must.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
}

func newTestPool(t *testing.T, cfg PoolConfig) *Pool {
	p := NewPool(cfg)
	t.Cleanup(func() { p.Close() })
	return p
}

func (p *Pool) numConns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}
