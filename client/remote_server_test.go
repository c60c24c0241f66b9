package client

import (
	"errors"
	"io"
	"net"
	"net/rpc"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/structs"
)

// leaderlessNode answers every registration with the error a follower
// without a leader gives.
type leaderlessNode struct{}

func (leaderlessNode) Register(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	return errors.New("Node.Register: No cluster leader")
}

// A remote server's errors keep their meaning for the server rotation:
// a leaderless server and an unreachable one both send the client on to
// the next server.
func TestRemoteServer_Errors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	rs := rpc.NewServer()
	must.NoError(t, rs.RegisterName("Node", leaderlessNode{}))
	l, err := rpcnet.NewListener(ln, rpcnet.ListenerConfig{ServeRPC: func(conn io.ReadWriteCloser) {
		rs.ServeCodec(rpcnet.NewServerCodec(conn))
	}})
	must.NoError(t, err)
	go l.Serve()
	defer l.Close()

	pool := rpcnet.NewPool(rpcnet.PoolConfig{})
	defer pool.Close()

	up := RemoteServer(pool, ln.Addr().String())
	must.Eq(t, ln.Addr().String(), up.Name)
	err = up.Conn.RPC("Node.Register", &structs.NodeRegisterRequest{}, &structs.NodeUpdateResponse{})
	must.ErrorIs(t, err, structs.ErrNoLeader)
	must.True(t, serverUnavailable(err))

	dead, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	deadAddr := dead.Addr().String()
	dead.Close()
	err = RemoteServer(pool, deadAddr).Conn.RPC("Node.Register", &structs.NodeRegisterRequest{}, &structs.NodeUpdateResponse{})
	must.ErrorIs(t, err, ErrServerUnreachable)
	must.True(t, serverUnavailable(err))
}

// The client adopts the servers' list of servers, keeping the one in use
// first, and ignores empty lists.
func TestLearnServers(t *testing.T) {
	pool := rpcnet.NewPool(rpcnet.PoolConfig{})
	defer pool.Close()
	dial := func(addr string) ServerEndpoint { return RemoteServer(pool, addr) }
	c := &Client{cfg: Config{DialServer: dial}, logger: hclog.NewNullLogger()}
	c.servers = newServerList([]ServerEndpoint{dial("10.0.0.2:4647")}, c.logger)

	info := func(addrs ...string) []*structs.NodeServerInfo {
		var out []*structs.NodeServerInfo
		for _, a := range addrs {
			out = append(out, &structs.NodeServerInfo{RPCAdvertiseAddr: a, Datacenter: "dc1"})
		}
		return out
	}
	c.learnServers(info("10.0.0.1:4647", "10.0.0.2:4647", "10.0.0.3:4647"))
	must.Eq(t, []string{"10.0.0.2:4647", "10.0.0.1:4647", "10.0.0.3:4647"}, c.Servers())

	c.learnServers(nil)
	must.Eq(t, []string{"10.0.0.2:4647", "10.0.0.1:4647", "10.0.0.3:4647"}, c.Servers())

	// A server that left drops out.
	c.learnServers(info("10.0.0.1:4647", "10.0.0.2:4647"))
	must.Eq(t, []string{"10.0.0.2:4647", "10.0.0.1:4647"}, c.Servers())

	// Without DialServer the configured servers stay.
	c.cfg.DialServer = nil
	c.learnServers(info("10.0.0.9:4647"))
	must.Eq(t, []string{"10.0.0.2:4647", "10.0.0.1:4647"}, c.Servers())
}
