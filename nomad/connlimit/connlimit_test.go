package connlimit

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestLimiter(t *testing.T) {
	a := &net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 1}
	a2 := &net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 2}
	b := &net.TCPAddr{IP: net.ParseIP("10.0.0.2"), Port: 1}
	l := NewLimiter(2)
	r1, ok := l.Take(a)
	must.True(t, ok)
	_, ok = l.Take(a2)
	must.True(t, ok, must.Sprint("the port does not matter: the IP is the client"))
	_, ok = l.Take(a)
	must.False(t, ok)
	_, ok = l.Take(b)
	must.True(t, ok, must.Sprint("each client has its own count"))
	r1()
	r1()
	must.Eq(t, 1, l.Open(a), must.Sprint("a release counts once"))
	_, ok = l.Take(a)
	must.True(t, ok)

	for _, none := range []*Limiter{nil, NewLimiter(0)} {
		for range 10 {
			_, ok := none.Take(a)
			must.True(t, ok)
		}
	}
}

// Over the limit a connection is refused (refuse sees it, then it is
// closed); closing an admitted one makes room.
func TestListener_RefusesOverTheLimit(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	var refused atomic.Int32
	ln := NewListener(inner, 2, func(c net.Conn) {
		refused.Add(1)
		c.Write([]byte("no"))
	})
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		must.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	dial()
	first := <-accepted
	<-accepted

	third := dial()
	third.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(third)
	must.NoError(t, err, must.Sprint("the refused connection is answered, then closed"))
	must.Eq(t, "no", string(got))
	must.Eq(t, 1, refused.Load())

	first.Close()
	dial()
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("closing a connection did not make room")
	}
}
