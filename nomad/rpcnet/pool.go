package rpcnet

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	msgpackrpc "github.com/hashicorp/net-rpc-msgpackrpc/v2"
	"github.com/hashicorp/yamux"

	"github.com/opennomad/nomad/structs"
)

// PoolConfig tunes a Pool. Zero fields take the defaults of
// DefaultPoolConfig.
type PoolConfig struct {
	// DialTimeout bounds connecting to a server.
	DialTimeout time.Duration
	// CallTimeout bounds one call: sending it, the server's work (a Raft
	// write waits for a quorum) and reading the answer. A request that
	// may block on the server (see Holder) gets its hold time on top.
	CallTimeout time.Duration
	// MaxIdle is how long a connection with no call in flight is kept;
	// ReapInterval how often idle and broken connections are closed.
	MaxIdle      time.Duration
	ReapInterval time.Duration
	// MaxIdleStreams is how many finished streams a connection keeps
	// open for reuse, saving a round trip per call.
	MaxIdleStreams int
	// KeepAliveInterval is how often an idle connection is pinged; a
	// server that stops answering pings (or a write that stalls for
	// WriteTimeout) breaks the connection and fails its calls.
	KeepAliveInterval time.Duration
	WriteTimeout      time.Duration
	// TLSWrap, when set, makes every connection TLS (ProtoTLS, then the
	// handshake it does, then the protocol byte inside): pools of agents
	// whose tls.rpc is on. DialTimeout bounds the handshake too.
	TLSWrap TLSWrapper
	// Logger receives connection-level logs; a null logger when nil.
	Logger hclog.Logger
}

// DefaultPoolConfig returns the pool's defaults.
func DefaultPoolConfig() PoolConfig {
	return PoolConfig{
		DialTimeout:       5 * time.Second,
		CallTimeout:       time.Minute,
		MaxIdle:           2 * time.Minute,
		ReapInterval:      30 * time.Second,
		MaxIdleStreams:    32,
		KeepAliveInterval: 10 * time.Second,
		WriteTimeout:      10 * time.Second,
	}
}

// withDefaults fills zero fields.
func (c PoolConfig) withDefaults() PoolConfig {
	d := DefaultPoolConfig()
	if c.DialTimeout <= 0 {
		c.DialTimeout = d.DialTimeout
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = d.CallTimeout
	}
	if c.MaxIdle <= 0 {
		c.MaxIdle = d.MaxIdle
	}
	if c.ReapInterval <= 0 {
		c.ReapInterval = d.ReapInterval
	}
	if c.MaxIdleStreams <= 0 {
		c.MaxIdleStreams = d.MaxIdleStreams
	}
	if c.KeepAliveInterval <= 0 {
		c.KeepAliveInterval = d.KeepAliveInterval
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = d.WriteTimeout
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// Holder is implemented by requests the server may hold before answering
// (blocking queries, a worker's dequeue): the pool waits that much longer
// than PoolConfig.CallTimeout for their answer.
type Holder interface {
	TimeToBlock() time.Duration
}

// ErrPoolClosed is returned by calls on a closed pool.
var ErrPoolClosed = errors.New("rpc pool is closed")

// Pool holds one multiplexed connection per server address and makes
// calls on them. Every method is safe for concurrent use; calls to one
// server share its connection, each on its own stream.
type Pool struct {
	cfg    PoolConfig
	yamux  *yamux.Config
	logger hclog.Logger

	mu      sync.Mutex
	conns   map[string]*serverConn
	dialing map[string]*dial
	closed  bool

	stop chan struct{}
	wg   sync.WaitGroup
}

// dial is a connection attempt other callers for the same address wait
// on instead of dialling themselves.
type dial struct {
	done chan struct{}
	conn *serverConn
	err  error
}

// NewPool returns a pool and starts its reaper; Close stops it.
func NewPool(cfg PoolConfig) *Pool {
	cfg = cfg.withDefaults()
	yc := yamux.DefaultConfig()
	yc.EnableKeepAlive = true
	yc.KeepAliveInterval = cfg.KeepAliveInterval
	yc.ConnectionWriteTimeout = cfg.WriteTimeout
	yc.StreamOpenTimeout = cfg.DialTimeout + cfg.WriteTimeout
	yc.LogOutput = nil
	yc.Logger = cfg.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	p := &Pool{
		cfg:     cfg,
		yamux:   yc,
		logger:  cfg.Logger.Named("rpc_pool"),
		conns:   make(map[string]*serverConn),
		dialing: make(map[string]*dial),
		stop:    make(chan struct{}),
	}
	p.wg.Add(1)
	go p.reap()
	return p
}

// RPC calls method ("Job.Register") on the server at addr ("host:port")
// with args and fills reply. Errors the server returned come back as
// *RemoteError (see DecodeError); a failed connection or a missed
// deadline comes back wrapping ErrConnection. A call that failed before
// its request was sent on a pooled connection (the server restarted
// since) is retried once on a fresh connection.
func (p *Pool) RPC(addr, method string, args, reply interface{}) error {
	timeout := p.cfg.CallTimeout
	if h, ok := args.(Holder); ok {
		if hold := h.TimeToBlock(); hold > 0 {
			timeout += hold
		}
	}
	for attempt := 0; ; attempt++ {
		conn, fresh, err := p.acquire(addr)
		if err != nil {
			return connError(addr, method, err, false)
		}
		sent, err := conn.call(method, args, reply, timeout)
		p.release(conn)
		if err == nil {
			return nil
		}
		var serverErr rpc.ServerError
		if errors.As(err, &serverErr) {
			return DecodeError(string(serverErr))
		}
		if !transportError(err) && !conn.session.IsClosed() {
			return fmt.Errorf("rpc %s to %s: %w", method, addr, err)
		}
		if !sent && !fresh && attempt == 0 {
			p.logger.Debug("pooled connection failed before the call was sent; redialling",
				"server", addr, "method", method, "error", err)
			continue
		}
		return connError(addr, method, err, sent)
	}
}

// transportError reports whether err came from the connection rather than
// from encoding or decoding a message.
func transportError(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, yamux.ErrSessionShutdown) ||
		errors.Is(err, yamux.ErrStreamClosed) || errors.Is(err, yamux.ErrConnectionReset) || errors.Is(err, yamux.ErrConnectionWriteTimeout) ||
		errors.Is(err, yamux.ErrKeepAliveTimeout) ||
		errors.Is(err, yamux.ErrRemoteGoAway) || errors.Is(err, errOutOfStep)
}

// acquire returns the live connection to addr, dialling one if there is
// none, and counts a call on it; release uncounts it. fresh reports a
// connection dialled for this call.
func (p *Pool) acquire(addr string) (c *serverConn, fresh bool, err error) {
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			return nil, false, ErrPoolClosed
		}
		if c := p.conns[addr]; c != nil {
			if !c.session.IsClosed() {
				c.inFlight++
				p.mu.Unlock()
				return c, false, nil
			}
			p.dropLocked(c)
		}
		d := p.dialing[addr]
		if d == nil {
			break
		}
		p.mu.Unlock()
		<-d.done
		p.mu.Lock()
		if d.err != nil {
			p.mu.Unlock()
			return nil, false, d.err
		}
	}
	d := &dial{done: make(chan struct{})}
	p.dialing[addr] = d
	p.mu.Unlock()

	d.conn, d.err = p.dial(addr)

	p.mu.Lock()
	delete(p.dialing, addr)
	close(d.done)
	if d.err != nil {
		p.mu.Unlock()
		return nil, false, d.err
	}
	if p.closed {
		p.mu.Unlock()
		d.conn.close()
		return nil, false, ErrPoolClosed
	}
	p.conns[addr] = d.conn
	d.conn.inFlight++
	p.mu.Unlock()
	return d.conn, true, nil
}

// release ends a call on c. A broken connection leaves the pool.
func (p *Pool) release(c *serverConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.inFlight--
	c.lastUsed = time.Now()
	if c.session.IsClosed() {
		p.dropLocked(c)
	}
}

// dropLocked removes c from the pool and closes it. p.mu is held.
func (p *Pool) dropLocked(c *serverConn) {
	if p.conns[c.addr] == c {
		delete(p.conns, c.addr)
	}
	c.close()
}

// dial connects to addr and starts a yamux session on it.
func (p *Pool) dial(addr string) (*serverConn, error) {
	nc, err := dialProto(addr, p.cfg.DialTimeout, ProtoMultiplex, p.cfg.TLSWrap)
	if err != nil {
		return nil, err
	}
	session, err := yamux.Client(newFrameConn(nc), p.yamux)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("starting yamux session: %w", err)
	}
	p.logger.Debug("connected", "server", addr)
	return &serverConn{addr: addr, session: session, maxIdle: p.cfg.MaxIdleStreams, lastUsed: time.Now()}, nil
}

// reap closes, every ReapInterval, connections that broke or have had no
// call for MaxIdle.
func (p *Pool) reap() {
	defer p.wg.Done()
	t := time.NewTicker(p.cfg.ReapInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.mu.Lock()
			for _, c := range p.conns {
				if c.session.IsClosed() || (c.inFlight == 0 && now.Sub(c.lastUsed) > p.cfg.MaxIdle) {
					p.dropLocked(c)
				}
			}
			p.mu.Unlock()
		}
	}
}

// Shutdown closes the connection to addr, if any; calls in flight on it
// fail. The next call dials again.
func (p *Pool) Shutdown(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.conns[addr]; c != nil {
		p.dropLocked(c)
	}
}

// Close closes every connection and stops the reaper. Calls in flight
// fail; later calls return ErrPoolClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for _, c := range p.conns {
		p.dropLocked(c)
	}
	p.mu.Unlock()
	close(p.stop)
	p.wg.Wait()
	return nil
}

// serverConn is the pool's connection to one server.
type serverConn struct {
	addr    string
	session *yamux.Session
	maxIdle int

	// inFlight and lastUsed are guarded by the pool's mutex.
	inFlight int
	lastUsed time.Time

	mu   sync.Mutex
	idle []*stream
}

// stream is one yamux stream with its codec. Calls on it are strictly
// sequential: one request, then its response.
type stream struct {
	conn  *yamux.Stream
	codec *msgpackrpc.MsgpackCodec
}

// call runs one request on a stream of c. sent reports whether the
// request may have reached the server.
func (c *serverConn) call(method string, args, reply interface{}, timeout time.Duration) (sent bool, err error) {
	s, err := c.getStream()
	if err != nil {
		return false, err
	}
	if err := s.conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		s.conn.Close()
		return false, err
	}
	sent, clean, err := s.roundTrip(method, args, reply)
	if clean {
		c.putStream(s)
	} else {
		// Half a request or answer may be on the stream: it cannot carry
		// another call. Close the stream itself, not the codec, whose
		// Close is not safe against a concurrent read.
		s.conn.Close()
	}
	return sent, err
}

// errOutOfStep is an answer to another request than the one sent: the
// stream is unusable.
var errOutOfStep = errors.New("stream out of step")

// callSeq numbers requests; the server echoes the number back.
var callSeq atomic.Uint64

// roundTrip writes one request and reads its answer. clean reports that
// the stream is positioned for the next call (the answer was read whole,
// whether it was a reply or a server error).
func (s *stream) roundTrip(method string, args, reply interface{}) (sent, clean bool, err error) {
	req := rpc.Request{ServiceMethod: method, Seq: callSeq.Add(1)}
	if err := s.codec.WriteRequest(&req, args); err != nil {
		return false, false, codecCause(err)
	}
	var resp rpc.Response
	if err := s.codec.ReadResponseHeader(&resp); err != nil {
		return true, false, codecCause(err)
	}
	if resp.Seq != req.Seq {
		return true, false, fmt.Errorf("%w: answer %d to request %d", errOutOfStep, resp.Seq, req.Seq)
	}
	if resp.Error != "" {
		if err := s.codec.ReadResponseBody(nil); err != nil {
			return true, false, codecCause(err)
		}
		return true, true, rpc.ServerError(resp.Error)
	}
	if err := s.codec.ReadResponseBody(reply); err != nil {
		return true, false, fmt.Errorf("decoding reply: %w", codecCause(err))
	}
	return true, true, nil
}

// codecCause returns the connection error behind a msgpack decode error,
// which reports it only through Cause, or err itself.
func codecCause(err error) error {
	var c interface{ Cause() error }
	if errors.As(err, &c) {
		if cause := c.Cause(); cause != nil && transportError(cause) {
			return cause
		}
	}
	return err
}

// getStream reuses an idle stream or opens one.
func (c *serverConn) getStream() (*stream, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		s := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	ys, err := c.session.OpenStream()
	if err != nil {
		return nil, err
	}
	return &stream{conn: ys, codec: msgpackrpc.NewCodecFromHandle(true, true, ys, structs.MsgpackHandle)}, nil
}

// putStream keeps s for reuse, or closes it when enough are idle.
func (c *serverConn) putStream(s *stream) {
	_ = s.conn.SetDeadline(time.Time{})
	c.mu.Lock()
	if len(c.idle) < c.maxIdle && !c.session.IsClosed() {
		c.idle = append(c.idle, s)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	s.conn.Close()
}

// close ends the session and with it every stream.
func (c *serverConn) close() {
	c.mu.Lock()
	c.idle = nil
	c.mu.Unlock()
	_ = c.session.Close()
}
