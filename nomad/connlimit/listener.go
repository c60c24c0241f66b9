package connlimit

import (
	"io"
	"net"
	"sync"
)

// Listener admits the connections its Limiter allows and refuses the
// others: it hands each refused connection to Refuse (which may answer
// it, as the HTTP listener answers 429; it must not block long, and the
// listener closes the connection after it returns, on a goroutine of its
// own so that accepting goes on) and accepts the next one.
type Listener struct {
	net.Listener
	limiter *Limiter
	refuse  func(net.Conn)
}

// NewListener wraps ln with a limit of max connections per client IP
// (<= 0: none, ln is returned as is). refuse may be nil.
func NewListener(ln net.Listener, max int, refuse func(net.Conn)) net.Listener {
	if max <= 0 {
		return ln
	}
	return &Listener{Listener: ln, limiter: NewLimiter(max), refuse: refuse}
}

// Accept returns the next admitted connection; closing it releases its
// place.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		release, ok := l.limiter.Take(conn.RemoteAddr())
		if ok {
			return &limitedConn{Conn: conn, release: release}, nil
		}
		go func() {
			if l.refuse != nil {
				l.refuse(conn)
			}
			conn.Close()
		}()
	}
}

// limitedConn gives its place back when closed, once, whoever closes it
// (a TLS wrapper, a multiplexed session, the HTTP server).
type limitedConn struct {
	net.Conn
	release func()
	once    sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes the connection when it can: http.Server does so
// after an error answer (a 431) so that the client reads the answer
// before the connection closes, instead of a reset.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps the connection's own copy (sendfile on TCP) for large
// answers.
func (c *limitedConn) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(c.Conn, r)
}
