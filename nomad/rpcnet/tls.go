package rpcnet

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// TLSWrapper does the client side of a TLS handshake on a connection the
// dialer opened (and wrote ProtoTLS on), returning the connection to
// speak through. It decides what to present and what to check; the
// deadline set on conn bounds it.
type TLSWrapper func(conn net.Conn) (net.Conn, error)

// ListenerTLS is how a Listener serves connections that open with
// ProtoTLS. Its functions are called on every connection, so their owner
// may change their answers at any time (a configuration reload).
type ListenerTLS struct {
	// Config is the server side of every handshake; GetConfigForClient
	// lets its owner swap certificates. Required.
	Config *tls.Config
	// Dial wraps the Raft layer's connections to other servers. Required:
	// a server that takes TLS speaks it too.
	Dial TLSWrapper
	// AllowPlaintext reports whether connections that do not open with
	// ProtoTLS are still served (while a cluster moves to TLS); nil
	// refuses them.
	AllowPlaintext func() bool
	// Authorize checks the verified peer of a TLS connection once its
	// inner protocol is known (Raft may be reserved to servers); nil
	// accepts every peer the handshake accepted.
	Authorize func(p Protocol, state tls.ConnectionState) error
}

// dialProto connects to addr and writes p; with wrap, the connection
// first turns TLS (ProtoTLS, the handshake) and p travels inside it.
// timeout bounds all of it.
func dialProto(addr string, timeout time.Duration, p Protocol, wrap TLSWrapper) (net.Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if tcp, ok := nc.(*net.TCPConn); ok {
		_ = tcp.SetNoDelay(true)
	}
	_ = nc.SetDeadline(time.Now().Add(timeout))
	conn := nc
	if wrap != nil {
		if _, err := nc.Write([]byte{byte(ProtoTLS)}); err != nil {
			nc.Close()
			return nil, fmt.Errorf("writing protocol byte: %w", err)
		}
		if conn, err = wrap(nc); err != nil {
			nc.Close()
			return nil, err
		}
	}
	if _, err := conn.Write([]byte{byte(p)}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("writing protocol byte: %w", err)
	}
	_ = nc.SetDeadline(time.Time{})
	return conn, nil
}
