package rpcnet

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// ErrRaftLayerClosed is returned by Accept once the layer closed.
var ErrRaftLayerClosed = errors.New("raft layer is closed")

// RaftLayer is a raft.StreamLayer sharing the RPC port: the Listener
// hands it connections that began with ProtoRaft, and Dial opens
// connections to other servers' RPC ports beginning with that byte.
type RaftLayer struct {
	addr   net.Addr
	wrap   TLSWrapper
	connCh chan net.Conn

	closeOnce sync.Once
	closed    chan struct{}
}

func newRaftLayer(addr net.Addr, wrap TLSWrapper) *RaftLayer {
	return &RaftLayer{addr: addr, wrap: wrap, connCh: make(chan net.Conn), closed: make(chan struct{})}
}

// handoff passes an accepted Raft connection to Accept, or closes it if
// the layer closed.
func (r *RaftLayer) handoff(conn net.Conn) {
	select {
	case r.connCh <- conn:
	case <-r.closed:
		conn.Close()
	}
}

// Accept waits for the next Raft connection.
func (r *RaftLayer) Accept() (net.Conn, error) {
	select {
	case conn := <-r.connCh:
		return conn, nil
	case <-r.closed:
		return nil, ErrRaftLayerClosed
	}
}

// Close stops Accept. The Listener, which owns the port, stays open.
func (r *RaftLayer) Close() error {
	r.closeOnce.Do(func() { close(r.closed) })
	return nil
}

// Addr is this server's advertised Raft address; Raft names the server
// by it in its configuration.
func (r *RaftLayer) Addr() net.Addr { return r.addr }

// Dial connects to the server at address for Raft, over TLS when the
// listener serves TLS.
func (r *RaftLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return dialProto(string(address), timeout, ProtoRaft, r.wrap)
}

// NewRaftTransport returns Raft's network transport over layer. timeout
// bounds each Raft RPC's I/O (snapshots get proportionally longer);
// pipelining keeps the library's default depth, which batches better
// than deeper queues.
func NewRaftTransport(layer *RaftLayer, timeout time.Duration, logger hclog.Logger) *raft.NetworkTransport {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  layer,
		MaxPool: 3,
		Timeout: timeout,
		Logger:  logger.Named("raft-net"),
	})
}
