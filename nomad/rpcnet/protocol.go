package rpcnet

import "fmt"

// Protocol is the first byte a dialer writes on a new connection to the
// RPC port; the listener routes the connection by it. The values are
// Nomad's, so tooling that speaks them keeps working.
type Protocol byte

const (
	// ProtoRPC is one msgpack-RPC conversation on the bare connection.
	ProtoRPC Protocol = 0x01
	// ProtoRaft hands the connection to Raft's network transport.
	ProtoRaft Protocol = 0x02
	// ProtoMultiplex starts a yamux session whose every stream is a
	// msgpack-RPC conversation. The pool always dials this.
	ProtoMultiplex Protocol = 0x03
	// ProtoTLS starts a TLS handshake on the bare connection; inside TLS
	// the dialer then writes one of the other bytes, which routes the
	// connection as it would a plaintext one.
	ProtoTLS Protocol = 0x04
	// ProtoStream starts a streaming call: a connection of its own that
	// carries a StreamHeader naming the method, the call's arguments, and
	// then whatever bytes the method exchanges (a Raft snapshot, say).
	ProtoStream Protocol = 0x05
)

// String names the protocol in logs.
func (p Protocol) String() string {
	switch p {
	case ProtoRPC:
		return "rpc"
	case ProtoRaft:
		return "raft"
	case ProtoMultiplex:
		return "multiplex"
	case ProtoStream:
		return "stream"
	case ProtoTLS:
		return "tls"
	}
	return fmt.Sprintf("unknown(0x%02x)", byte(p))
}
