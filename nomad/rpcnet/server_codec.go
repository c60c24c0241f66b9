package rpcnet

import (
	"bufio"
	"fmt"
	"io"
	"net/rpc"
	"sync"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/opennomad/nomad/structs"
)

// ServerCodec reads msgpack-RPC requests from one connection and writes
// the responses, byte for byte what net-rpc-msgpackrpc's codec does. It
// exists because that codec's closed flag is read by the reading loop and
// written by a failed response write without a lock, which the race
// detector reports whenever a peer goes away mid-answer. Here the reading
// loop and the response writers share no unguarded state: a failed write
// closes the connection, which the reading loop then sees as a read
// error, and nothing else.
//
// ServerCodec is an rpc.ServerCodec, so net/rpc servers (the test
// harnesses' echo servers) use it as the server's own loop does.
type ServerCodec struct {
	conn io.ReadWriteCloser
	dec  *codec.Decoder

	writeMu sync.Mutex
	bufW    *bufio.Writer
	enc     *codec.Encoder
	broken  bool // a write failed; guarded by writeMu
}

// NewServerCodec returns a codec over conn using structs.MsgpackHandle.
func NewServerCodec(conn io.ReadWriteCloser) *ServerCodec {
	bufW := bufio.NewWriter(conn)
	return &ServerCodec{
		conn: conn,
		dec:  codec.NewDecoder(bufio.NewReader(conn), structs.MsgpackHandle),
		bufW: bufW,
		enc:  codec.NewEncoder(bufW, structs.MsgpackHandle),
	}
}

// ReadRequestHeader reads the next request's header. Only the reading
// loop calls it and ReadRequestBody.
func (c *ServerCodec) ReadRequestHeader(req *rpc.Request) error { return c.dec.Decode(req) }

// ReadRequestBody reads the request's body into out; nil discards it.
func (c *ServerCodec) ReadRequestBody(out interface{}) error {
	if out == nil {
		var discard interface{}
		return c.dec.Decode(&discard)
	}
	return c.dec.Decode(out)
}

// WriteResponse writes one response; safe for concurrent use. After a
// failed write the stream is out of step, so the connection is closed
// and later writes fail at once.
func (c *ServerCodec) WriteResponse(resp *rpc.Response, body interface{}) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.broken {
		return io.ErrClosedPipe
	}
	err := c.enc.Encode(resp)
	if err == nil {
		err = c.enc.Encode(body)
	}
	if err == nil {
		err = c.bufW.Flush()
	}
	if err != nil {
		c.broken = true
		_ = c.conn.Close()
		return fmt.Errorf("writing response to %s: %w", resp.ServiceMethod, err)
	}
	return nil
}

// Close closes the connection.
func (c *ServerCodec) Close() error { return c.conn.Close() }
