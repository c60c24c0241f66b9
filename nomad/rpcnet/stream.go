package rpcnet

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/opennomad/nomad/structs"
)

// StreamHeader opens a streaming call; the arguments follow it.
type StreamHeader struct {
	Method string
}

// StreamResponse is what the server answers a streaming call with,
// before any data (or after the data it read, as the method defines).
// Error is empty on success.
type StreamResponse struct {
	Error string
	// Index is the Raft index the streamed data reflects, where that
	// means something.
	Index uint64
}

// StreamConn is one streaming call's connection. Read and Write move the
// method's data; the header and arguments have been sent already.
type StreamConn struct {
	net.Conn
	r   *bufio.Reader
	dec *codec.Decoder
	enc *codec.Encoder
}

// Read reads the method's data.
func (c *StreamConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// ReadResponse reads the server's StreamResponse; an error it carries is
// decoded as DecodeError does.
func (c *StreamConn) ReadResponse() (StreamResponse, error) {
	var resp StreamResponse
	if err := c.dec.Decode(&resp); err != nil {
		return resp, fmt.Errorf("reading stream response: %w", codecCause(err))
	}
	if resp.Error != "" {
		return resp, DecodeError(resp.Error)
	}
	return resp, nil
}

// WriteResponse sends a StreamResponse; the serving side calls it.
func (c *StreamConn) WriteResponse(resp StreamResponse) error {
	return c.enc.Encode(&resp)
}

// DecodeArgs reads the call's arguments; the serving side calls it once,
// first.
func (c *StreamConn) DecodeArgs(args interface{}) error {
	return c.dec.Decode(args)
}

// CloseWrite tells the other side no more data follows, keeping the
// connection open for its answer.
func (c *StreamConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.New("connection cannot half-close")
}

func newStreamConn(conn net.Conn) *StreamConn {
	r := bufio.NewReader(conn)
	return &StreamConn{
		Conn: conn,
		r:    r,
		dec:  codec.NewDecoder(r, structs.MsgpackHandle),
		enc:  codec.NewEncoder(conn, structs.MsgpackHandle),
	}
}

// Stream opens a streaming call of method on the server at addr with
// args. The caller exchanges the method's data on the returned
// connection and closes it. Streams do not use the pool's connections:
// they are long and rare.
func (p *Pool) Stream(addr, method string, args interface{}) (*StreamConn, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, ErrPoolClosed
	}
	nc, err := dialProto(addr, p.cfg.DialTimeout, ProtoStream, p.cfg.TLSWrap)
	if err != nil {
		return nil, connError(addr, method, err, false)
	}
	_ = nc.SetWriteDeadline(time.Now().Add(p.cfg.WriteTimeout))
	c := newStreamConn(nc)
	if err := c.enc.Encode(&StreamHeader{Method: method}); err != nil {
		nc.Close()
		return nil, connError(addr, method, err, false)
	}
	if err := c.enc.Encode(args); err != nil {
		nc.Close()
		return nil, fmt.Errorf("stream %s to %s: encoding arguments: %w", method, addr, err)
	}
	_ = nc.SetWriteDeadline(time.Time{})
	return c, nil
}

// serveStream reads a streaming call's header and hands it to the
// configured handler.
func (l *Listener) serveStream(conn net.Conn) {
	c := newStreamConn(conn)
	_ = conn.SetReadDeadline(time.Now().Add(l.cfg.FirstByteTimeout))
	var h StreamHeader
	if err := c.dec.Decode(&h); err != nil {
		l.logger.Debug("failed to read a stream header", "remote", conn.RemoteAddr(), "error", err)
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	l.cfg.ServeStream(h.Method, c)
}

// errNoStreams answers streaming calls on a listener without a handler.
var errNoStreams = errors.New("this server serves no streaming calls")

// rejectStream answers a streaming call the listener cannot serve.
func rejectStream(conn net.Conn) {
	c := newStreamConn(conn)
	var h StreamHeader
	if err := c.dec.Decode(&h); err != nil {
		return
	}
	_ = c.WriteResponse(StreamResponse{Error: errNoStreams.Error()})
}
