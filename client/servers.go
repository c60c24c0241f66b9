package client

import (
	"errors"
	"io"
	"net"
	"net/rpc"
	"sync"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/opennomad/nomad/structs"
)

// RPCer is one server as the client reaches it: the in-process server of
// a dev agent, or a connection to a remote one. RPC calls an endpoint
// method ("Node.Register") with a request and fills reply. The client
// calls it from several goroutines at once; it must be safe for that.
// The callee may modify args. Errors that mean "this server cannot serve
// you now" (no leader, a broken connection) should be, or wrap,
// structs.ErrNoLeader, ErrServerUnreachable or a net.Error: the client
// then tries the next server.
type RPCer interface {
	RPC(method string, args, reply interface{}) error
}

// ServerEndpoint is a server the client may call.
type ServerEndpoint struct {
	// Name identifies the server in logs and in Servers ("10.0.0.1:4647",
	// or "local" for the in-process server).
	Name string
	Conn RPCer
}

// ErrServerUnreachable is what transports wrap when a server cannot be
// reached; the client moves on to the next server.
var ErrServerUnreachable = errors.New("server unreachable")

// ErrNoServers is returned when the client has no server to call.
var ErrNoServers = errors.New("no servers known to the client")

// serverList holds the servers a client knows and the one it prefers.
// A call goes to the preferred server; when that server cannot serve it,
// the next one becomes preferred and the call is tried there, once per
// server. Errors about the request itself (validation, unknown node) are
// returned at once: another server would answer the same.
type serverList struct {
	logger hclog.Logger

	mu        sync.Mutex
	servers   []ServerEndpoint
	preferred int
}

func newServerList(servers []ServerEndpoint, logger hclog.Logger) *serverList {
	return &serverList{servers: append([]ServerEndpoint(nil), servers...), logger: logger}
}

// set replaces the servers; the first becomes preferred.
func (l *serverList) set(servers []ServerEndpoint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.servers = append([]ServerEndpoint(nil), servers...)
	l.preferred = 0
}

// names lists the servers, the preferred one first.
func (l *serverList) names() []string {
	r := l.rotation()
	out := make([]string, 0, len(r))
	for _, s := range r {
		out = append(out, s.Name)
	}
	return out
}

// rotation returns the servers in the order a call tries them.
func (l *serverList) rotation() []ServerEndpoint {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.servers)
	out := make([]ServerEndpoint, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, l.servers[(l.preferred+i)%n])
	}
	return out
}

// failed moves the preference past a server that could not serve a call,
// unless another caller already did.
func (l *serverList) failed(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.servers); n > 0 && l.servers[l.preferred%n].Name == name {
		l.preferred = (l.preferred + 1) % n
	}
}

// call makes an RPC, rotating through the servers as described on
// serverList. It returns the last server's error when none could serve.
func (l *serverList) call(method string, args, reply interface{}) error {
	servers := l.rotation()
	if len(servers) == 0 {
		return ErrNoServers
	}
	var err error
	for _, s := range servers {
		if err = s.Conn.RPC(method, args, reply); err == nil || !serverUnavailable(err) {
			return err
		}
		l.logger.Debug("server could not serve the request, trying the next", "server", s.Name, "method", method, "error", err)
		l.failed(s.Name)
	}
	return err
}

// serverUnavailable reports whether err means the server could not serve
// the request, rather than refusing the request itself, in process or
// across the network (structs.IsKind).
func serverUnavailable(err error) bool {
	var netErr net.Error
	switch {
	case errors.Is(err, ErrServerUnreachable),
		errors.As(err, &netErr), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, rpc.ErrShutdown), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return structs.IsKind(err, structs.ErrNoLeader)
}

// isUnknownNode reports whether the servers do not know the node, which a
// client answers by registering again.
func isUnknownNode(err error) bool {
	return structs.IsKind(err, structs.ErrUnknownNode)
}
