// Package rpcnet carries the servers' traffic over TCP: one listening port
// per server serves both the msgpack-RPC endpoints and Raft, the first
// byte of every connection saying which (see Protocol); a TLS byte wraps
// the connection in TLS and the byte inside says which. Clients and
// servers reach each other's endpoints through a Pool, which keeps one
// yamux-multiplexed connection per server and runs concurrent calls as
// streams on it.
//
// The package knows nothing about the server it serves: the listener hands
// RPC connections to a function and Raft connections to a raft.StreamLayer,
// and TLS comes in as a *tls.Config and func values (ListenerTLS,
// TLSWrapper) whose owner reads the certificate files.
// It imports structs only for the wire codec and the errors that must keep
// their identity across the network.
package rpcnet
