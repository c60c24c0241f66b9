package command

import (
	"errors"
	"fmt"

	"github.com/opennomad/nomad/command/nodesim"
	"github.com/opennomad/nomad/nomad/rpcnet"
)

// dialSimServers reaches the servers at addrs (their RPC "host:port")
// through one connection pool, which the caller closes when done.
func dialSimServers(addrs []string) ([]nodesim.Server, *rpcnet.Pool) {
	pool := rpcnet.NewPool(rpcnet.PoolConfig{})
	out := make([]nodesim.Server, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, nodesim.Server{Name: a, Conn: &pooledServer{pool: pool, addr: a}})
	}
	return out, pool
}

// pooledServer is one server reached through the pool.
type pooledServer struct {
	pool *rpcnet.Pool
	addr string
}

// RPC calls method on the server; a failed connection is reported as
// nodesim.ErrServerUnreachable so the simulator moves on to the next
// server.
func (p *pooledServer) RPC(method string, args, reply interface{}) error {
	err := p.pool.RPC(p.addr, method, args, reply)
	if errors.Is(err, rpcnet.ErrConnection) {
		return fmt.Errorf("%w: %w", nodesim.ErrServerUnreachable, err)
	}
	return err
}
