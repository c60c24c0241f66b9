package rpcnet

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/hashicorp/yamux"

	"github.com/opennomad/nomad/nomad/connlimit"
)

// metricConnRefused counts connections closed over the per-client limit.
var metricConnRefused = []string{"nomad", "rpc", "conn_refused"}

// ListenerConfig configures a Listener.
type ListenerConfig struct {
	// ServeRPC serves msgpack-RPC requests read from conn until it
	// closes, then returns. The listener calls it on a goroutine of its
	// own for every plain RPC connection and every multiplexed stream; it
	// must not return before the conversation ends. Required.
	ServeRPC func(conn io.ReadWriteCloser)
	// ServeStream serves one streaming call (ProtoStream) of method on
	// conn, whose header was read; the arguments are next (DecodeArgs).
	// Called on a goroutine of its own; the listener closes conn after it
	// returns. Nil refuses streaming calls.
	ServeStream func(method string, conn *StreamConn)
	// RaftAdvertise is the address other servers dial for this server's
	// Raft ("10.0.0.1:4647"): the listener's own address unless set. Raft
	// publishes it as this server's address, so a wildcard bind needs it.
	RaftAdvertise net.Addr
	// FirstByteTimeout bounds the wait for a connection's protocol byte,
	// and for the TLS handshake and the byte inside it: the agent's
	// limits.rpc_handshake_timeout. 10s when 0.
	FirstByteTimeout time.Duration
	// MaxConnsPerClient bounds the connections one client IP may hold
	// open (limits.rpc_max_conns_per_client); a connection over it is
	// closed at once and counted in nomad.rpc.conn_refused. Each Raft
	// connection and multiplexed session counts as one. 0: no limit.
	MaxConnsPerClient int
	// KeepAliveInterval and WriteTimeout tune multiplexed sessions as in
	// PoolConfig.
	KeepAliveInterval time.Duration
	WriteTimeout      time.Duration
	// TLS, when set, serves connections that open with ProtoTLS and
	// dials Raft over TLS; nil closes them as an unknown protocol.
	TLS    *ListenerTLS
	Logger hclog.Logger
}

// Listener accepts connections on a server's RPC port and routes each by
// its first byte: Raft connections to its RaftLayer, RPC connections
// (plain or yamux-multiplexed) to ServeRPC; a TLS byte wraps the
// connection and routes it by the byte that follows inside. Unknown
// bytes close the connection.
type Listener struct {
	ln     net.Listener
	cfg    ListenerConfig
	yamux  *yamux.Config
	raft   *RaftLayer
	logger hclog.Logger

	mu     sync.Mutex
	conns  map[io.Closer]struct{}
	closed bool
	wg     sync.WaitGroup
}

// NewListener wraps ln, which the Listener owns from now on. Call Serve
// to start accepting.
func NewListener(ln net.Listener, cfg ListenerConfig) (*Listener, error) {
	if cfg.ServeRPC == nil {
		return nil, errors.New("rpc listener: ServeRPC is required")
	}
	var raftWrap TLSWrapper
	if cfg.TLS != nil {
		if cfg.TLS.Config == nil || cfg.TLS.Dial == nil {
			return nil, errors.New("rpc listener: TLS needs a Config and a Dial wrapper")
		}
		raftWrap = cfg.TLS.Dial
	}
	d := DefaultPoolConfig()
	if cfg.FirstByteTimeout <= 0 {
		cfg.FirstByteTimeout = 10 * time.Second
	}
	if cfg.KeepAliveInterval <= 0 {
		cfg.KeepAliveInterval = d.KeepAliveInterval
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = d.WriteTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.RaftAdvertise == nil {
		cfg.RaftAdvertise = ln.Addr()
	}
	yc := yamux.DefaultConfig()
	yc.EnableKeepAlive = true
	yc.KeepAliveInterval = cfg.KeepAliveInterval
	yc.ConnectionWriteTimeout = cfg.WriteTimeout
	yc.LogOutput = nil
	yc.Logger = cfg.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	ln = connlimit.NewListener(ln, cfg.MaxConnsPerClient, func(c net.Conn) {
		metrics.IncrCounter(metricConnRefused, 1)
		cfg.Logger.Named("rpc_listener").Warn("closing a connection over rpc_max_conns_per_client",
			"remote", c.RemoteAddr(), "limit", cfg.MaxConnsPerClient)
	})
	return &Listener{
		ln:     ln,
		cfg:    cfg,
		yamux:  yc,
		raft:   newRaftLayer(cfg.RaftAdvertise, raftWrap),
		logger: cfg.Logger.Named("rpc_listener"),
		conns:  make(map[io.Closer]struct{}),
	}, nil
}

// Addr is the address the listener accepts on.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// RaftLayer is the stream layer for raft.NewNetworkTransportWithConfig:
// it yields the Raft connections this listener accepts and dials other
// servers' listeners with the Raft byte.
func (l *Listener) RaftLayer() *RaftLayer { return l.raft }

// Serve accepts connections until Close; it returns nil then, or the
// accept error that stopped it.
func (l *Listener) Serve() error {
	var backoff time.Duration
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			if l.isClosed() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: wait and retry.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				l.logger.Warn("accept failed; retrying", "error", err, "delay", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		if !l.track(conn) {
			conn.Close()
			return nil
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.handle(conn)
		}()
	}
}

// handle reads the protocol byte and serves the connection by it.
func (l *Listener) handle(conn net.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(l.cfg.FirstByteTimeout))
	p, ok := l.readProtocol(conn)
	if !ok {
		l.untrack(conn)
		conn.Close()
		return
	}
	if p == ProtoTLS {
		if conn, p, ok = l.upgrade(conn); !ok {
			return
		}
	} else if t := l.cfg.TLS; t != nil && (t.AllowPlaintext == nil || !t.AllowPlaintext()) {
		l.logger.Warn("refusing a plaintext connection: this server requires TLS (rpc_upgrade_mode is off)",
			"remote", conn.RemoteAddr(), "protocol", p)
		l.untrack(conn)
		conn.Close()
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	l.serve(conn, p)
}

// readProtocol reads one protocol byte.
func (l *Listener) readProtocol(conn net.Conn) (Protocol, bool) {
	var b [1]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		if !l.isClosed() && !errors.Is(err, io.EOF) {
			l.logger.Debug("failed to read the protocol byte", "remote", conn.RemoteAddr(), "error", err)
		}
		return 0, false
	}
	return Protocol(b[0]), true
}

// upgrade does the server side of the TLS handshake on conn and reads
// the protocol byte inside, which the peer's certificate must be allowed
// to speak. It returns the TLS connection, tracked in conn's place, or
// closes conn and reports false.
func (l *Listener) upgrade(conn net.Conn) (net.Conn, Protocol, bool) {
	fail := func(msg string, args ...any) (net.Conn, Protocol, bool) {
		if !l.isClosed() {
			l.logger.Warn(msg, append([]any{"remote", conn.RemoteAddr()}, args...)...)
		}
		l.untrack(conn)
		conn.Close()
		return nil, 0, false
	}
	t := l.cfg.TLS
	if t == nil {
		return fail("closing a TLS connection: TLS is not configured on this server")
	}
	tc := tls.Server(conn, t.Config)
	if err := tc.Handshake(); err != nil {
		return fail("TLS handshake failed", "error", err)
	}
	p, ok := l.readProtocol(tc)
	if !ok {
		return fail("closing a TLS connection that sent no protocol byte")
	}
	if p == ProtoTLS {
		return fail("closing a TLS connection that asked for TLS again")
	}
	if t.Authorize != nil {
		if err := t.Authorize(p, tc.ConnectionState()); err != nil {
			return fail("refusing a TLS connection", "protocol", p, "error", err)
		}
	}
	if !l.swap(conn, tc) {
		tc.Close()
		return nil, 0, false
	}
	return tc, p, true
}

// serve hands the connection to what speaks p.
func (l *Listener) serve(conn net.Conn, p Protocol) {
	switch p {
	case ProtoRPC:
		l.cfg.ServeRPC(conn)
		l.untrack(conn)
		conn.Close()
	case ProtoRaft:
		// Raft owns the connection from here. It stays tracked until Raft
		// closes it, so that Close ends it even if Raft does not.
		tc := &trackedConn{Conn: conn}
		tc.onClose = func() { l.untrack(tc) }
		if !l.swap(conn, tc) {
			conn.Close()
			return
		}
		l.raft.handoff(tc)
	case ProtoMultiplex:
		l.serveMultiplex(conn)
	case ProtoStream:
		if l.cfg.ServeStream != nil {
			l.serveStream(conn)
		} else {
			rejectStream(conn)
		}
		l.untrack(conn)
		conn.Close()
	default:
		l.logger.Warn("closing connection with an unknown protocol byte",
			"remote", conn.RemoteAddr(), "protocol", p)
		l.untrack(conn)
		conn.Close()
	}
}

// serveMultiplex serves every stream of a yamux session until it ends.
func (l *Listener) serveMultiplex(conn net.Conn) {
	session, err := yamux.Server(newFrameConn(conn), l.yamux)
	if err != nil {
		l.logger.Error("failed to start a multiplexed session", "remote", conn.RemoteAddr(), "error", err)
		l.untrack(conn)
		conn.Close()
		return
	}
	// The session closes conn; track the session in its place.
	if !l.swap(conn, session) {
		session.Close()
		return
	}
	defer func() {
		l.untrack(session)
		session.Close()
	}()
	for {
		stream, err := session.AcceptStream()
		if err != nil {
			if !session.IsClosed() && !l.isClosed() {
				l.logger.Debug("multiplexed session ended", "remote", conn.RemoteAddr(), "error", err)
			}
			return
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.cfg.ServeRPC(stream)
			stream.Close()
		}()
	}
}

// track records an open connection for Close; false once closed.
func (l *Listener) track(c io.Closer) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.conns[c] = struct{}{}
	return true
}

// swap replaces a tracked connection by what now owns it.
func (l *Listener) swap(old, c io.Closer) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, old)
	if l.closed {
		return false
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *Listener) untrack(c io.Closer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
}

func (l *Listener) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Close stops accepting, closes every connection it accepted (Raft's
// included) and waits until every ServeRPC call returned. ServeRPC calls
// return once their connection is closed and their in-flight requests
// finished, so requests that block (blocking queries) must be ended by
// their owner first.
func (l *Listener) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	err := l.ln.Close()
	conns := make([]io.Closer, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.conns = nil
	l.mu.Unlock()

	l.raft.Close()
	for _, c := range conns {
		c.Close()
	}
	l.wg.Wait()
	return err
}

// trackedConn leaves the listener's books when closed.
type trackedConn struct {
	net.Conn
	once    sync.Once
	onClose func()
}

// Close closes the connection and untracks it.
func (c *trackedConn) Close() error {
	c.once.Do(c.onClose)
	return c.Conn.Close()
}
