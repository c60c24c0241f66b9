// Package auth resolves the token a request carries into what it may do:
// an *acl.ACL compiled from the token's policies (its own and its roles'),
// cached so that the check every RPC makes costs a map lookup.
//
// The cache is valid for one version of the ACL tables: any write to
// tokens, policies or roles (or a snapshot restore, which replaces the
// store) empties it, so a revoked token or a narrowed policy takes effect
// on the next request. Expiry is checked on every call, on the server's
// clock.
//
// The package imports acl, structs and go-memdb (the watch sets of the
// store it reads), never the server: the server hands it its state store
// through the Store interface.
package auth
