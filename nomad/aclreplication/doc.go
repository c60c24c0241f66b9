// Package aclreplication copies the ACL objects every region shares from
// the authoritative region into this one. The leader of a region that is
// not authoritative runs it: for each kind of object (policies, roles,
// auth methods, binding rules, global tokens) a loop follows the
// authoritative region's list with blocking queries, compares it with the
// local copy by hash, and writes the difference through this region's
// Raft with the same entries the ACL endpoints write. Objects are written
// in the authoritative region only (the endpoints forward them there), so
// the copy never has changes of its own to keep.
//
// It reaches the authoritative region through Config.RPC (the server's
// own RPC entry, which sends a request naming another region there) and
// the local state through Config.State and Config.Apply, so it can be
// tested with two in-process servers or with fakes.
package aclreplication
