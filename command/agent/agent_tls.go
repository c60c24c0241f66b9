package agent

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/opennomad/nomad/nomad/rpcnet"
	"github.com/opennomad/nomad/tlsconf"
)

// setupTLS loads the tls block's files when it turns TLS on anywhere.
func (a *Agent) setupTLS() error {
	if !a.config.TLS.Enabled() {
		return nil
	}
	t, err := tlsconf.New(a.config.TLS, a.config.Region)
	if err != nil {
		return fmt.Errorf("loading TLS: %w", err)
	}
	a.tls = t
	return nil
}

// rpcTLS is the TLS of the RPC port, nil unless tls.rpc is on.
func (a *Agent) rpcTLS() *tlsconf.TLS {
	if a.tls == nil || !a.config.TLS.RPC {
		return nil
	}
	return a.tls
}

// rpcDialer makes the agent's outgoing RPC connections TLS when tls.rpc
// is on; nil keeps them plaintext.
func (a *Agent) rpcDialer() rpcnet.TLSWrapper {
	if t := a.rpcTLS(); t != nil {
		return t.WrapRPC
	}
	return nil
}

// regionDialer makes the server's connections to another region's
// servers TLS when tls.rpc is on, checking that region's server name
// under verify_server_hostname; nil keeps them as rpcDialer makes them.
func (a *Agent) regionDialer() func(region string) rpcnet.TLSWrapper {
	t := a.rpcTLS()
	if t == nil {
		return nil
	}
	return func(region string) rpcnet.TLSWrapper { return t.WrapRPCRegion(region) }
}

// rpcListenerTLS is how the server's RPC port serves TLS: mutual TLS
// with the current certificates, plaintext only in rpc_upgrade_mode,
// and, with verify_server_hostname, Raft only from the region's servers.
func (a *Agent) rpcListenerTLS() *rpcnet.ListenerTLS {
	t := a.rpcTLS()
	if t == nil {
		return nil
	}
	return &rpcnet.ListenerTLS{
		Config:         t.RPCServerConfig(),
		Dial:           t.WrapRPC,
		AllowPlaintext: t.PlaintextRPCAllowed,
		Authorize: func(p rpcnet.Protocol, cs tls.ConnectionState) error {
			return t.CheckRPCPeer(p == rpcnet.ProtoRaft, cs)
		},
	}
}

// httpListener applies the limits block to ln, and serves HTTPS on it
// when tls.http is on.
func (a *Agent) httpListener(ln net.Listener) net.Listener {
	var tlsConfig *tls.Config
	if a.tls != nil && a.config.TLS.HTTP {
		tlsConfig = a.tls.HTTPServerConfig()
	}
	return limitHTTPListener(ln, a.config.Limits, tlsConfig)
}

// reloadTLS re-reads the certificate files and the per-connection
// settings of the new tls block; new connections use them, open ones
// keep theirs. Turning TLS on or off for HTTP or RPC needs a restart
// (restartOnlyChanges reports it).
func (a *Agent) reloadTLS(next tlsconf.Config) error {
	if a.tls == nil {
		return nil
	}
	next.HTTP, next.RPC = a.config.TLS.HTTP, a.config.TLS.RPC
	if err := a.tls.Reload(next); err != nil {
		return fmt.Errorf("reloading TLS: %w", err)
	}
	a.logger.Info("TLS certificates reloaded")
	return nil
}
