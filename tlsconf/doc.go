// Package tlsconf turns an agent's `tls` block into the crypto/tls
// configurations of its RPC port (RPC, streaming calls and Raft, both
// directions) and of its HTTP API, and re-reads the certificate files on
// a reload without dropping connections.
//
// It is a package of its own, not part of the agent, because its one
// idea — files and settings in, *tls.Config and peer checks out — is
// used on both sides of the RPC port (the server's listener and the
// client agent's pool) and of the HTTP API, and it is tested alone. It
// is called tlsconf rather than a "util" name because configuration is
// all it does: the wire (the 0x04 byte that opens a TLS connection) is
// rpcnet's, which takes the result as plain func values and never sees a
// file.
//
// Certificates follow Nomad's naming: a server proves
// server.<region>.nomad, a client agent client.<region>.nomad.
package tlsconf
