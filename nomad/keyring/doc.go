// Package keyring makes, seals and opens the cluster's root keys and
// decides how the keyring changes; it does no I/O and keeps no state.
//
// A root key (structs.RootKey) is a 32-byte AES-256-GCM data key, for
// what the cluster seals at rest, and an RSA-2048 signing key, whose
// public half is published at /.well-known/jwks.json for anyone to
// verify what the cluster signed. New makes one with its material sealed
// under a fresh key-encryption key; Open unseals it. Only what New
// returns ever travels through Raft, so no Raft entry, snapshot or API
// answer holds key material in plain text.
//
// The leader drives the keyring with two pure decisions:
//
//   - Rotate: the keys to write when an operator asks for a new key (the
//     new key active and the old one inactive in one write, or the new
//     one prepublished, or every older key marked for rekeying).
//   - Tick: what is due now, asked when the leader takes office and
//     every minute after: the first key of a new cluster, a prepublished
//     key whose time has come, rekeying that is done, or a rotation
//     because the active key is older than the rotation threshold.
//
// The package imports structs and the Go standard library's crypto, and
// go-jose for the JWKS document; never the server.
package keyring
