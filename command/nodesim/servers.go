package nodesim

import (
	"errors"
	"io"
	"net"
	"net/rpc"
	"sync/atomic"

	"github.com/opennomad/nomad/structs"
)

// RPCer is one server as the simulator reaches it. RPC calls an endpoint
// method ("Node.Register") with a request and fills reply; the simulator
// calls it from many goroutines at once, so it must be safe for that. The
// callee may modify args. Errors meaning "this server cannot serve you
// now" (no leader, a broken connection) should be, or wrap,
// ErrServerUnreachable, structs.ErrNoLeader or a net.Error: the call then
// moves on to the next server.
type RPCer interface {
	RPC(method string, args, reply interface{}) error
}

// Server is one server the simulator may call.
type Server struct {
	// Name identifies the server in logs ("127.0.0.1:4647").
	Name string
	Conn RPCer
}

// ErrServerUnreachable is what transports wrap when a server cannot be
// reached.
var ErrServerUnreachable = errors.New("server unreachable")

// serverSet calls the servers. Reads start at the node's own server;
// writes start at the server that last answered one, since any server
// forwards writes to the leader.
type serverSet struct {
	servers []Server
	writer  atomic.Int64
}

// call tries the servers in turn from start until one serves the request
// (or refuses it for a reason another server would share).
func (s *serverSet) call(start int, method string, args, reply interface{}) error {
	var err error
	for i := range s.servers {
		srv := s.servers[(start+i)%len(s.servers)]
		if err = srv.Conn.RPC(method, args, reply); err == nil || !unavailable(err) {
			return err
		}
	}
	return err
}

// read calls from the node's own server.
func (s *serverSet) read(n *simNode, method string, args, reply interface{}) error {
	return s.call(n.server, method, args, reply)
}

// write calls from the server that served the last write, and remembers
// which one answered.
func (s *serverSet) write(method string, args, reply interface{}) error {
	start := int(s.writer.Load())
	var err error
	for i := range s.servers {
		idx := (start + i) % len(s.servers)
		if err = s.servers[idx].Conn.RPC(method, args, reply); err == nil || !unavailable(err) {
			if i > 0 {
				s.writer.Store(int64(idx))
			}
			return err
		}
	}
	return err
}

// unavailable reports whether err means the server could not serve the
// request rather than refusing it, in process or across the network
// (structs.IsKind).
func unavailable(err error) bool {
	var netErr net.Error
	switch {
	case errors.Is(err, ErrServerUnreachable),
		errors.As(err, &netErr), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, rpc.ErrShutdown):
		return true
	}
	return structs.IsKind(err, structs.ErrNoLeader)
}

// unknownNode reports whether the servers do not know the node, which the
// node answers by registering again.
func unknownNode(err error) bool {
	return structs.IsKind(err, structs.ErrUnknownNode)
}
