package rpcnet

import (
	"encoding/binary"
	"net"
	"sync"
)

// The yamux frame header (its spec: version, type, flags, stream ID,
// length; 12 bytes, big endian). A data frame's length is the size of
// the body that follows the header.
const (
	yamuxHeaderSize = 12
	yamuxVersion    = 0
	yamuxTypeData   = 0

	// maxKeptJoin bounds the buffer a connection keeps between writes:
	// a server has a connection per client, and most messages are small.
	maxKeptJoin = 64 << 10
)

// frameConn joins each yamux data frame's header and body into one write
// on the connection.
//
// yamux's send loop writes a frame's 12-byte header and then its body
// with two Write calls, so every RPC message cost two system calls to
// send (on loopback, two passes through the TCP stack) and often two
// wake-ups of the reader; with TLS, two records. A data-frame header
// says how long its body is: such a header is held and written together
// with the next write when that write is exactly the body. Anything else
// is written at once, after any held header, so the bytes on the wire
// and their order are exactly what yamux wrote.
type frameConn struct {
	net.Conn

	mu sync.Mutex
	// held is a data-frame header waiting for its body of want bytes.
	held    [yamuxHeaderSize]byte
	holding bool
	want    int
	// joined is reused to send a header and its body in one write.
	joined []byte
}

// newFrameConn wraps the connection a yamux session runs on.
func newFrameConn(c net.Conn) *frameConn { return &frameConn{Conn: c} }

// Write sends p, or holds it when it is a data-frame header (see
// frameConn). It reports len(p) written for a held header.
func (c *frameConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holding {
		c.holding = false
		if len(p) == c.want {
			c.joined = append(append(c.joined[:0], c.held[:]...), p...)
			n, err := c.Conn.Write(c.joined)
			if cap(c.joined) > maxKeptJoin {
				c.joined = nil
			}
			return max(n-yamuxHeaderSize, 0), err
		}
		if _, err := c.Conn.Write(c.held[:]); err != nil {
			return 0, err
		}
	}
	if n, ok := dataFrameBody(p); ok {
		copy(c.held[:], p)
		c.holding, c.want = true, n
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// dataFrameBody reports whether p is exactly the header of a data frame
// with a body, and the body's length.
func dataFrameBody(p []byte) (int, bool) {
	if len(p) != yamuxHeaderSize || p[0] != yamuxVersion || p[1] != yamuxTypeData {
		return 0, false
	}
	n := binary.BigEndian.Uint32(p[8:12])
	return int(n), n > 0
}
