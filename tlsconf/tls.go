package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
)

// ServerName is the name a server's certificate proves.
func ServerName(region string) string { return "server." + region + ".nomad" }

// ClientName is the name a client agent's certificate proves.
func ClientName(region string) string { return "client." + region + ".nomad" }

// TLS is an agent's loaded TLS material and the configurations built
// from it. Every handshake reads the current material, so Reload takes
// effect on the next connection while open ones keep theirs. Safe for
// concurrent use.
type TLS struct {
	region string
	cur    atomic.Pointer[loaded]
}

// loaded is one generation of material: immutable once built.
type loaded struct {
	cfg        Config
	rpcServer  *tls.Config
	rpcClient  *tls.Config
	httpServer *tls.Config
	httpClient *tls.Config
}

// New loads the files cfg names for an agent of region.
func New(cfg Config, region string) (*TLS, error) {
	t := &TLS{region: region}
	if err := t.Reload(cfg); err != nil {
		return nil, err
	}
	return t, nil
}

// Reload re-reads the files of cfg (the same paths with new contents, or
// new paths) and the settings that apply per connection. On error the
// current material stays in use.
func (t *TLS) Reload(cfg Config) error {
	if probs := cfg.Problems(); len(probs) > 0 {
		msgs := make([]string, 0, len(probs))
		for _, p := range probs {
			msgs = append(msgs, "tls."+p.Key+": "+p.Problem)
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	l, err := build(cfg, t.region)
	if err != nil {
		return err
	}
	t.cur.Store(l)
	return nil
}

// Config is the block in effect.
func (t *TLS) Config() Config { return t.cur.Load().cfg }

func build(cfg Config, region string) (*loaded, error) {
	var pool *x509.CertPool
	if cfg.CAFile != "" {
		var err error
		if pool, err = loadCA(cfg.CAFile); err != nil {
			return nil, err
		}
	}
	var certs []tls.Certificate
	if cfg.CertFile != "" && cfg.KeyFile != "" {
		cert, err := loadKeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, err
		}
		certs = []tls.Certificate{*cert}
	}
	minVersion, err := cfg.minVersion()
	if err != nil {
		return nil, err
	}
	suites, err := cfg.cipherSuites()
	if err != nil {
		return nil, err
	}
	base := func() *tls.Config {
		return &tls.Config{Certificates: certs, MinVersion: minVersion, CipherSuites: suites}
	}

	// Every RPC peer proves itself: servers to servers and clients,
	// clients to servers.
	rpcServer := base()
	rpcServer.ClientCAs = pool
	rpcServer.ClientAuth = tls.RequireAndVerifyClientCert

	rpcClient := base()
	rpcClient.RootCAs = pool
	if cfg.VerifyServerHostname {
		rpcClient.ServerName = ServerName(region)
	} else {
		// Any server the CA signed will do, whatever name it proves:
		// check the chain, skip the name.
		rpcClient.InsecureSkipVerify = true
		rpcClient.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(pool, cs) }
	}

	httpServer := base()
	// The API speaks HTTP/1.1: its streams (events, logs, exec) are
	// written for it.
	httpServer.NextProtos = []string{"http/1.1"}
	if cfg.VerifyHTTPSClient {
		httpServer.ClientCAs = pool
		httpServer.ClientAuth = tls.RequireAndVerifyClientCert
	}
	// An agent forwarding a request to another agent's HTTPS API (a
	// client request for an allocation that runs elsewhere) trusts any
	// agent the CA signed: client agents' certificates name the client
	// role, dev agents' the server role, and addresses vary.
	httpClient := base()
	httpClient.RootCAs = pool
	httpClient.InsecureSkipVerify = true
	httpClient.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(pool, cs) }
	return &loaded{cfg: cfg, rpcServer: rpcServer, rpcClient: rpcClient, httpServer: httpServer, httpClient: httpClient}, nil
}

// verifyChain checks that the peer's certificate chains to pool as a
// server certificate, without looking at its names.
func verifyChain(pool *x509.CertPool, cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("tls: the server presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots:         pool,
		Intermediates: inter,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	return err
}

// RPCServerConfig is the server side of the RPC port's handshakes; it
// hands each handshake the current material.
func (t *TLS) RPCServerConfig() *tls.Config {
	return &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return t.cur.Load().rpcServer, nil
	}}
}

// HTTPServerConfig is the server side of the HTTPS API's handshakes; it
// hands each handshake the current material.
func (t *TLS) HTTPServerConfig() *tls.Config {
	return &tls.Config{
		NextProtos: []string{"http/1.1"},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return t.cur.Load().httpServer, nil
		},
	}
}

// HTTPClientConfig is the client side of a request this agent forwards to
// another agent's HTTPS API: it presents this agent's certificate and
// accepts a peer whose certificate chains to the CA, whatever its name.
// It holds the material current when called.
func (t *TLS) HTTPClientConfig() *tls.Config { return t.cur.Load().httpClient.Clone() }

// WrapRPC does the client side of a TLS handshake on a connection to a
// server's RPC port, after the dialer wrote the TLS byte; the deadline
// the dialer set on conn bounds it.
func (t *TLS) WrapRPC(conn net.Conn) (net.Conn, error) {
	tc := tls.Client(conn, t.cur.Load().rpcClient)
	if err := tc.Handshake(); err != nil {
		return nil, fmt.Errorf("tls handshake: %w", err)
	}
	return tc, nil
}

// WrapRPCRegion is WrapRPC for connections to the servers of region: with
// verify_server_hostname they must prove server.<region>.nomad, the name
// of their region rather than this agent's (a request forwarded to
// another region).
func (t *TLS) WrapRPCRegion(region string) func(conn net.Conn) (net.Conn, error) {
	return func(conn net.Conn) (net.Conn, error) {
		cfg := t.cur.Load().rpcClient
		if cfg.ServerName != "" && region != t.region {
			cfg = cfg.Clone()
			cfg.ServerName = ServerName(region)
		}
		tc := tls.Client(conn, cfg)
		if err := tc.Handshake(); err != nil {
			return nil, fmt.Errorf("tls handshake: %w", err)
		}
		return tc, nil
	}
}

// PlaintextRPCAllowed reports whether the RPC port still accepts
// connections without TLS (rpc_upgrade_mode).
func (t *TLS) PlaintextRPCAllowed() bool { return t.cur.Load().cfg.RPCUpgradeMode }

// ErrWrongRole is a peer whose certificate does not prove the role its
// connection needs.
var ErrWrongRole = errors.New("peer certificate does not prove the required role")

// CheckRPCPeer checks, with verify_server_hostname on, that the peer of
// an incoming RPC-port connection proves a role allowed to speak it:
// Raft only server.<region>.nomad; RPC also a server of another region
// or client.<region>.nomad. The chain itself was verified by the
// handshake.
func (t *TLS) CheckRPCPeer(raft bool, cs tls.ConnectionState) error {
	if !t.cur.Load().cfg.VerifyServerHostname {
		return nil
	}
	if len(cs.PeerCertificates) == 0 {
		return fmt.Errorf("%w: no certificate", ErrWrongRole)
	}
	leaf := cs.PeerCertificates[0]
	if leaf.VerifyHostname(ServerName(t.region)) == nil {
		return nil
	}
	if raft {
		return fmt.Errorf("%w: raft needs %s", ErrWrongRole, ServerName(t.region))
	}
	if leaf.VerifyHostname(ClientName(t.region)) == nil {
		return nil
	}
	for _, name := range leaf.DNSNames {
		if region, ok := strings.CutPrefix(name, "server."); ok {
			if region, ok = strings.CutSuffix(region, ".nomad"); ok && region != "" && !strings.Contains(region, ".") {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: rpc needs a server certificate or %s", ErrWrongRole, ClientName(t.region))
}
