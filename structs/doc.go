// Package structs is the data model shared by every part of the scheduler:
// jobs, nodes, allocations, evaluations, plans and the Raft messages that
// carry them. It also holds the pure helpers the scheduler and the plan
// applier must agree on exactly (does this set of allocations fit on this
// node, how is a fit scored, what is a node's computed class), so that the
// optimistic scheduler and the authoritative applier can never disagree
// about the arithmetic.
//
// Field names follow HashiCorp Nomad's, because the HTTP API serialises these
// types directly and existing Nomad clients must decode them unchanged.
//
// Objects handed to or read from the state store are immutable: callers Copy,
// modify and upsert, they never mutate in place.
package structs
