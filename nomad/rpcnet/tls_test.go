package rpcnet

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/tlsconf"
	"github.com/opennomad/nomad/tlsconf/tlsconftest"
)

const testRegion = "global"

// newAgentTLS loads an agent's TLS with tls.rpc and
// verify_server_hostname on; mod changes the block first.
func newAgentTLS(t *testing.T, ca *tlsconftest.CA, pair tlsconftest.Pair, mod func(*tlsconf.Config)) *tlsconf.TLS {
	t.Helper()
	cfg := tlsconf.Config{
		RPC: true, CAFile: ca.File, CertFile: pair.CertFile, KeyFile: pair.KeyFile,
		VerifyServerHostname: true,
	}
	if mod != nil {
		mod(&cfg)
	}
	tl, err := tlsconf.New(cfg, testRegion)
	must.NoError(t, err)
	return tl
}

// listenerTLS is what a server's listener gets from its TLS, as the
// agent wires it.
func listenerTLS(tl *tlsconf.TLS) *ListenerTLS {
	return &ListenerTLS{
		Config:         tl.RPCServerConfig(),
		Dial:           tl.WrapRPC,
		AllowPlaintext: tl.PlaintextRPCAllowed,
		Authorize: func(p Protocol, cs tls.ConnectionState) error {
			return tl.CheckRPCPeer(p == ProtoRaft, cs)
		},
	}
}

func echo(p *Pool, addr string) error {
	var reply EchoReply
	if err := p.RPC(addr, "Echo.Echo", &EchoArgs{Msg: "hi"}, &reply); err != nil {
		return err
	}
	if reply.Msg != "hi" {
		return errors.New("wrong answer " + reply.Msg)
	}
	return nil
}

// With tls.rpc on, RPC and streaming calls go through TLS, and a
// plaintext dialer is refused unless rpc_upgrade_mode is on.
func TestTLS_RPCAndUpgradeMode(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	for _, upgrade := range []bool{false, true} {
		srvTLS := newAgentTLS(t, ca, ca.Server(t, testRegion), func(c *tlsconf.Config) { c.RPCUpgradeMode = upgrade })
		srv := startTestServerTLS(t, "127.0.0.1:0", listenerTLS(srvTLS))
		addr := srv.Addr().String()

		cliTLS := newAgentTLS(t, ca, ca.Client(t, testRegion), nil)
		tp := newTestPool(t, PoolConfig{TLSWrap: cliTLS.WrapRPC})
		must.NoError(t, echo(tp, addr))
		// A streaming call reaches the listener through TLS: it answers
		// (this one serves no streams) rather than dropping it.
		sc, err := tp.Stream(addr, "Operator.SnapshotSave", &EchoArgs{})
		must.NoError(t, err)
		_, err = sc.ReadResponse()
		must.ErrorContains(t, err, "serves no streaming calls")
		sc.Close()

		plain := newTestPool(t, PoolConfig{})
		err = echo(plain, addr)
		if upgrade {
			must.NoError(t, err, must.Sprint("rpc_upgrade_mode accepts plaintext"))
		} else {
			must.ErrorIs(t, err, ErrConnection, must.Sprint("plaintext must be refused"))
		}
	}
}

// Certificates another CA signed are refused on either side.
func TestTLS_WrongCARefused(t *testing.T) {
	ca, other := tlsconftest.NewCA(t), tlsconftest.NewCA(t)
	srvTLS := newAgentTLS(t, ca, ca.Server(t, testRegion), nil)
	srv := startTestServerTLS(t, "127.0.0.1:0", listenerTLS(srvTLS))
	addr := srv.Addr().String()

	for name, cli := range map[string]*tlsconf.TLS{
		// The client trusts the other CA: the server's certificate fails.
		"server cert from an unknown CA": newAgentTLS(t, other, other.Client(t, testRegion), nil),
		// The client trusts the server's CA but presents the other's.
		"client cert from an unknown CA": newAgentTLS(t, ca, ca.Client(t, testRegion), func(c *tlsconf.Config) {
			p := other.Client(t, testRegion)
			c.CertFile, c.KeyFile = p.CertFile, p.KeyFile
		}),
	} {
		t.Run(name, func(t *testing.T) {
			p := newTestPool(t, PoolConfig{TLSWrap: cli.WrapRPC})
			must.ErrorIs(t, echo(p, addr), ErrConnection)
		})
	}
	must.NoError(t, echo(newTestPool(t, PoolConfig{TLSWrap: newAgentTLS(t, ca, ca.Client(t, testRegion), nil).WrapRPC}), addr))
}

// verify_server_hostname: the dialer needs server.<region>.nomad from
// the server; without it any certificate of the CA will do.
func TestTLS_VerifyServerHostname(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	// A server that wrongly holds a client certificate.
	srvTLS := newAgentTLS(t, ca, ca.Client(t, testRegion), nil)
	srv := startTestServerTLS(t, "127.0.0.1:0", listenerTLS(srvTLS))
	addr := srv.Addr().String()

	strict := newAgentTLS(t, ca, ca.Server(t, testRegion), nil)
	err := echo(newTestPool(t, PoolConfig{TLSWrap: strict.WrapRPC}), addr)
	must.ErrorIs(t, err, ErrConnection)
	must.ErrorContains(t, err, "server.global.nomad")

	lax := newAgentTLS(t, ca, ca.Server(t, testRegion), func(c *tlsconf.Config) { c.VerifyServerHostname = false })
	must.NoError(t, echo(newTestPool(t, PoolConfig{TLSWrap: lax.WrapRPC}), addr))
}

// With verify_server_hostname, Raft is served to servers of the region
// only; RPC also to their clients and to servers of other regions.
func TestTLS_PeerRoles(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	srv := startTestServerTLS(t, "127.0.0.1:0", listenerTLS(newAgentTLS(t, ca, ca.Server(t, testRegion), nil)))
	addr := srv.Addr().String()
	cases := []struct {
		name      string
		pair      tlsconftest.Pair
		rpc, raft bool
	}{
		{"server of the region", ca.Server(t, testRegion), true, true},
		{"client of the region", ca.Client(t, testRegion), true, false},
		{"server of another region", ca.Server(t, "east"), true, false},
		{"client of another region", ca.Client(t, "east"), false, false},
		{"cli certificate", ca.Issue(t, "cli.global.nomad"), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The dialer checks the server's name, not its own.
			peer := newAgentTLS(t, ca, tc.pair, nil)
			err := echo(newTestPool(t, PoolConfig{TLSWrap: peer.WrapRPC}), addr)
			if tc.rpc {
				must.NoError(t, err)
			} else {
				must.ErrorIs(t, err, ErrConnection)
			}
			must.Eq(t, tc.raft, raftServed(t, srv, peer))
		})
	}
}

// raftServed reports whether srv hands a Raft connection from peer to
// Raft.
func raftServed(t *testing.T, srv *testServer, peer *tlsconf.TLS) bool {
	t.Helper()
	conn, err := dialProto(srv.Addr().String(), 5*time.Second, ProtoRaft, peer.WrapRPC)
	must.NoError(t, err)
	defer conn.Close()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := srv.RaftLayer().Accept()
		if err == nil {
			got <- c
		}
	}()
	refused := make(chan error, 1)
	go func() {
		// Nothing is ever written back: a read ends only when the server
		// closes the connection.
		_, err := conn.Read(make([]byte, 1))
		refused <- err
	}()
	select {
	case c := <-got:
		c.Close()
		return true
	case err := <-refused:
		must.Error(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the Raft connection was neither served nor refused")
	}
	// Unblock the Accept above with a connection that is served.
	ok, err := dialProto(srv.Addr().String(), 5*time.Second, ProtoRaft, srv.cfg.TLS.Dial)
	must.NoError(t, err)
	ok.Close()
	(<-got).Close()
	return false
}

// A reload swaps the certificate for new connections; connections open
// before it keep working.
func TestTLS_ReloadSwapsCertificates(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	pair := ca.Server(t, testRegion)
	srvTLS := newAgentTLS(t, ca, pair, nil)
	srv := startTestServerTLS(t, "127.0.0.1:0", listenerTLS(srvTLS))
	addr := srv.Addr().String()
	cli := newAgentTLS(t, ca, ca.Client(t, testRegion), nil)
	p := newTestPool(t, PoolConfig{TLSWrap: cli.WrapRPC})
	must.NoError(t, echo(p, addr))
	must.Eq(t, pair.Cert.SerialNumber, presentedCert(t, addr, cli).SerialNumber)

	fresh := ca.Server(t, testRegion)
	fresh.CopyTo(t, pair)
	must.NoError(t, srvTLS.Reload(srvTLS.Config()))

	must.Eq(t, fresh.Cert.SerialNumber, presentedCert(t, addr, cli).SerialNumber)
	accepted := srv.counting.accepted.Load()
	must.NoError(t, echo(p, addr))
	must.Eq(t, accepted, srv.counting.accepted.Load(), must.Sprint("the pooled connection survives the reload"))

	// A reload that fails keeps the material in use.
	bad := srvTLS.Config()
	bad.CertFile = pair.CertFile + ".missing"
	must.Error(t, srvTLS.Reload(bad))
	must.Eq(t, fresh.Cert.SerialNumber, presentedCert(t, addr, cli).SerialNumber)
}

// presentedCert is the certificate the server at addr presents to a new
// connection.
func presentedCert(t *testing.T, addr string, cli *tlsconf.TLS) *x509.Certificate {
	t.Helper()
	conn, err := dialProto(addr, 5*time.Second, ProtoRPC, cli.WrapRPC)
	must.NoError(t, err)
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0]
}

// Three Raft servers over TLS elect a leader and replicate, while the
// same ports answer RPC over TLS.
func TestTLS_RaftCluster(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	servers := make([]*testServer, 3)
	for i := range servers {
		servers[i] = startTestServerTLS(t, "127.0.0.1:0", listenerTLS(newAgentTLS(t, ca, ca.Server(t, testRegion), nil)))
	}
	runRaftCluster(t, servers)
	cli := newAgentTLS(t, ca, ca.Client(t, testRegion), nil)
	p := newTestPool(t, PoolConfig{TLSWrap: cli.WrapRPC})
	for _, srv := range servers {
		must.NoError(t, echo(p, srv.Addr().String()))
	}
}

// A request forwarded to another region's server: with
// verify_server_hostname, the dialer for that region wants its name, and
// the dialer of this region's servers refuses it.
func TestTLS_VerifyOtherRegionServer(t *testing.T) {
	ca := tlsconftest.NewCA(t)
	srvTLS := newAgentTLS(t, ca, ca.Server(t, "europe"), nil)
	srv := startTestServerTLS(t, "127.0.0.1:0", listenerTLS(srvTLS))
	addr := srv.Addr().String()

	local := newAgentTLS(t, ca, ca.Server(t, testRegion), nil)
	err := echo(newTestPool(t, PoolConfig{TLSWrap: local.WrapRPC}), addr)
	must.ErrorContains(t, err, "server.global.nomad")
	must.NoError(t, echo(newTestPool(t, PoolConfig{TLSWrap: local.WrapRPCRegion("europe")}), addr))
	err = echo(newTestPool(t, PoolConfig{TLSWrap: local.WrapRPCRegion("asia")}), addr)
	must.ErrorContains(t, err, "server.asia.nomad")
	// This region's own name keeps the usual check.
	err = echo(newTestPool(t, PoolConfig{TLSWrap: local.WrapRPCRegion(testRegion)}), addr)
	must.ErrorContains(t, err, "server.global.nomad")
}
