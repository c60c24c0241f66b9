// Package membership finds a region's servers and keeps Raft's voter set
// in step with them. Every server runs one Membership: a serf gossip
// member named "<name>.<region>" whose tags say it is a Nomad server, its
// RPC address and its Raft ID. From the gossip events it keeps the set of
// known servers, which
//
//   - bootstraps Raft once, with every expected server, when
//     bootstrap_expect of them are alive and no cluster exists yet;
//   - on the leader, adds alive servers to Raft as voters and removes the
//     ones that left (on every event and every ReconcileInterval), and
//     removes servers that stayed failed longer than DeadServerGrace
//     without ever leaving fewer voters than a quorum;
//   - gives clients the list of servers to talk to.
//
// The package reaches Raft through the Raft interface (a *raft.Raft
// satisfies it) and other servers only through Config.PeerCount, so it
// can be tested with in-memory Raft.
package membership
