package nomad

import (
	"bufio"
	"fmt"
	"io"
	"net/rpc"
	"sync"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/opennomad/nomad/structs"
)

// connCodec reads msgpack-RPC requests from one connection and writes the
// responses, byte for byte what net-rpc-msgpackrpc's codec does. It exists
// so that writes from many request goroutines and the reading loop share
// no unguarded state: a failed write closes the connection, which the
// reading loop then sees as a read error, and nothing else.
type connCodec struct {
	conn io.ReadWriteCloser
	dec  *codec.Decoder

	writeMu sync.Mutex
	bufW    *bufio.Writer
	enc     *codec.Encoder
	broken  bool // a write failed; guarded by writeMu
}

func newConnCodec(conn io.ReadWriteCloser) *connCodec {
	bufW := bufio.NewWriter(conn)
	return &connCodec{
		conn: conn,
		dec:  codec.NewDecoder(bufio.NewReader(conn), structs.MsgpackHandle),
		bufW: bufW,
		enc:  codec.NewEncoder(bufW, structs.MsgpackHandle),
	}
}

// readHeader reads the next request's header. Only the reading loop calls
// it and readBody.
func (c *connCodec) readHeader(req *rpc.Request) error { return c.dec.Decode(req) }

// readBody reads the request's body into out; nil discards it.
func (c *connCodec) readBody(out interface{}) error {
	if out == nil {
		var discard interface{}
		return c.dec.Decode(&discard)
	}
	return c.dec.Decode(out)
}

// writeResponse writes one response; safe for concurrent use. After a
// failed write the stream is out of step, so the connection is closed
// and later writes fail at once.
func (c *connCodec) writeResponse(resp *rpc.Response, body interface{}) error {
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

// close closes the connection.
func (c *connCodec) close() error { return c.conn.Close() }
