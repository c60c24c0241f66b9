package client

import (
	"errors"
	"fmt"
	"slices"

	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/structs"
)

// RemoteServer is the endpoint of the server at addr ("host:port" of its
// RPC port), reached over the network through pool, which the caller
// owns and may share between servers. Errors of the connection (the
// server is down, restarting or unreachable) wrap ErrServerUnreachable
// so the client moves on to the next server; the server's own errors
// keep their identity (see rpcnet.DecodeError).
func RemoteServer(pool *rpcnet.Pool, addr string) ServerEndpoint {
	return ServerEndpoint{Name: addr, Conn: &remoteServer{pool: pool, addr: addr}}
}

type remoteServer struct {
	pool *rpcnet.Pool
	addr string
}

// RPC calls method on the server.
func (r *remoteServer) RPC(method string, args, reply interface{}) error {
	err := r.pool.RPC(r.addr, method, args, reply)
	if errors.Is(err, rpcnet.ErrConnection) {
		return fmt.Errorf("%w: %w", ErrServerUnreachable, err)
	}
	return err
}

// learnServers adopts the servers a registration or heartbeat answer
// lists, when the client dials servers itself (Config.DialServer): the
// servers know which of them are alive, so a client configured with one
// address learns the others, and forgets servers that left. The server
// in use stays first. An empty list changes nothing.
func (c *Client) learnServers(servers []*structs.NodeServerInfo) {
	if c.cfg.DialServer == nil || len(servers) == 0 {
		return
	}
	current := c.servers.names()
	var addrs []string
	for _, s := range servers {
		if s != nil && s.RPCAdvertiseAddr != "" && !slices.Contains(addrs, s.RPCAdvertiseAddr) {
			addrs = append(addrs, s.RPCAdvertiseAddr)
		}
	}
	if len(addrs) == 0 || sameSet(current, addrs) {
		return
	}
	if len(current) > 0 {
		if i := slices.Index(addrs, current[0]); i > 0 {
			addrs[0], addrs[i] = addrs[i], addrs[0]
		}
	}
	endpoints := make([]ServerEndpoint, 0, len(addrs))
	for _, a := range addrs {
		endpoints = append(endpoints, c.cfg.DialServer(a))
	}
	c.logger.Info("server list updated", "servers", addrs)
	c.servers.set(endpoints)
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}
