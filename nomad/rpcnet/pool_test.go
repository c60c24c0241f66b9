package rpcnet

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestPool_RoundTrip(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	p := newTestPool(t, PoolConfig{})
	addr := srv.Addr().String()

	var reply EchoReply
	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "hello"}, &reply))
	must.Eq(t, "hello", reply.Msg)

	// The stream is reused: the second call needs no new connection.
	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "again"}, &reply))
	must.Eq(t, "again", reply.Msg)
	must.Eq(t, 1, srv.counting.accepted.Load())
}

func TestPool_ConcurrentCallsShareOneSession(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	p := newTestPool(t, PoolConfig{MaxIdleStreams: 4})
	addr := srv.Addr().String()

	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := fmt.Sprintf("call-%d", i)
			var reply EchoReply
			// The sleep keeps calls overlapping on the server.
			if err := p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: msg, Sleep: 20 * time.Millisecond}, &reply); err != nil {
				errs <- err
				return
			}
			if reply.Msg != msg {
				errs <- fmt.Errorf("call %d got %q", i, reply.Msg)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	must.Eq(t, n, srv.echo.calls.Load())
	must.Eq(t, 1, srv.counting.accepted.Load(), must.Sprint("every call rides the one connection"))
	must.Eq(t, 1, p.numConns())
}

func TestPool_ReconnectsAfterServerRestart(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	addr := srv.Addr().String()
	p := newTestPool(t, PoolConfig{})

	var reply EchoReply
	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "before"}, &reply))
	srv.stop(t)

	// While the server is down calls fail as connection failures.
	err := p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "down"}, &reply)
	must.ErrorIs(t, err, ErrConnection)

	restarted := startTestServer(t, addr)
	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "after"}, &reply))
	must.Eq(t, "after", reply.Msg)
	must.Eq(t, 1, restarted.echo.calls.Load())
}

// A pooled connection whose server restarted behind it is replaced
// without the caller seeing an error when the call had not been sent.
func TestPool_StalePooledConnectionIsRedialled(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	addr := srv.Addr().String()
	p := newTestPool(t, PoolConfig{})
	var reply EchoReply
	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "one"}, &reply))

	srv.stop(t)
	startTestServer(t, addr)
	// Give the client side a moment to see the old session end.
	waitFor(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		c := p.conns[addr]
		return c == nil || c.session.IsClosed()
	})
	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "two"}, &reply))
	must.Eq(t, "two", reply.Msg)
}

func TestPool_CallTimeout(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	addr := srv.Addr().String()
	p := newTestPool(t, PoolConfig{CallTimeout: 50 * time.Millisecond})

	var reply EchoReply
	err := p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "slow", Sleep: 300 * time.Millisecond}, &reply)
	must.ErrorIs(t, err, ErrConnection)
	must.False(t, errors.Is(err, ErrNotSent), must.Sprint("a timed-out call was sent"))
	var netErr net.Error
	must.True(t, errors.As(err, &netErr) && netErr.Timeout(), must.Sprintf("want a timeout, got %v", err))

	// A request that declares a hold time gets it on top of the timeout.
	err = p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "held", Sleep: 300 * time.Millisecond, Hold: time.Second}, &reply)
	must.NoError(t, err)
	must.Eq(t, "held", reply.Msg)

	// The connection survives a timed-out stream.
	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "fast"}, &reply))
	must.Eq(t, 1, srv.counting.accepted.Load())
}

func TestPool_DialFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()

	p := newTestPool(t, PoolConfig{DialTimeout: time.Second})
	err = p.RPC(addr, "Echo.Echo", &EchoArgs{}, &EchoReply{})
	must.ErrorIs(t, err, ErrConnection)
	must.ErrorIs(t, err, ErrNotSent)
	must.ErrorIs(t, err, syscall.ECONNREFUSED)
}

func TestPool_ServerErrorsKeepTheirIdentity(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	addr := srv.Addr().String()
	p := newTestPool(t, PoolConfig{})

	err := p.RPC(addr, "Echo.Fail", &EchoArgs{Msg: "Job.Register: No cluster leader"}, &EchoReply{})
	must.ErrorIs(t, err, structs.ErrNoLeader)
	must.EqError(t, err, "Job.Register: No cluster leader")
	must.False(t, errors.Is(err, ErrConnection))

	err = p.RPC(addr, "Echo.Fail", &EchoArgs{Msg: "RPC Error:: 404,job not found"}, &EchoReply{})
	var coded structs.CodedError
	must.True(t, errors.As(err, &coded))
	must.Eq(t, 404, coded.Code())
	must.ErrorIs(t, err, structs.ErrUnknownJob)

	err = p.RPC(addr, "Echo.FailWrapped", &EchoArgs{}, &EchoReply{})
	must.ErrorIs(t, err, structs.ErrNoLeader)

	err = p.RPC(addr, "Echo.Missing", &EchoArgs{}, &EchoReply{})
	must.ErrorContains(t, err, "can't find method")

	// The connection is still good after server errors.
	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "ok"}, &EchoReply{}))
	must.Eq(t, 1, srv.counting.accepted.Load())
}

func TestPool_ReapsIdleConnections(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	addr := srv.Addr().String()
	p := newTestPool(t, PoolConfig{MaxIdle: 30 * time.Millisecond, ReapInterval: 10 * time.Millisecond})

	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{}, &EchoReply{}))
	must.Eq(t, 1, p.numConns())
	waitFor(t, func() bool { return p.numConns() == 0 })

	// The next call dials again.
	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{}, &EchoReply{}))
	must.Eq(t, 2, srv.counting.accepted.Load())
}

func TestPool_Close(t *testing.T) {
	srv := startTestServer(t, "127.0.0.1:0")
	addr := srv.Addr().String()
	p := NewPool(PoolConfig{})
	must.NoError(t, p.RPC(addr, "Echo.Echo", &EchoArgs{}, &EchoReply{}))

	// A call in flight fails when the pool closes under it.
	errc := make(chan error, 1)
	go func() {
		errc <- p.RPC(addr, "Echo.Echo", &EchoArgs{Sleep: 500 * time.Millisecond}, &EchoReply{})
	}()
	waitFor(t, func() bool { return srv.echo.calls.Load() == 2 })
	must.NoError(t, p.Close())
	must.ErrorIs(t, <-errc, ErrConnection)
	must.ErrorIs(t, p.RPC(addr, "Echo.Echo", &EchoArgs{}, &EchoReply{}), ErrPoolClosed)
	must.NoError(t, p.Close())
}

// waitFor polls cond for up to 5 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
