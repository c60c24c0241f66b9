// Package fsm holds the replicated state machine that Raft drives on
// every server (FSM): the only writer of the state store.
//
// # What lives here
//
// Raft hands the FSM each committed log entry, in order; Apply looks up
// the applier of the entry's message type and runs it. The appliers are
// grouped by the objects they write: jobs.go, evals.go, nodes.go,
// allocs.go (client updates and the plan applier's results),
// deployments.go and cluster.go (scheduler configuration, cluster
// metadata, summary repair). An entry that carries several changes
// applies in one state transaction. Snapshot and Restore (fsm.go) hand
// Raft an O(1) view of the state to persist and replace the whole store
// from one.
//
// Raft hands the FSM several committed entries at once when it has them
// (ApplyBatch, batch.go). A run of consecutive entries of the batchable
// types (the job path's: registrations, plan results, eval updates,
// client updates, deployment changes; the list says why each is safe)
// shares one state transaction, each entry still at its own index with
// its own events; any other type applies alone. A write transaction's
// fixed cost in go-memdb (path copies from each index root, the cache of
// written nodes, the table index rows) is then paid once per run. If an
// entry of a run fails, the run is aborted and applied again one entry
// at a time, which gives exactly the sequential outcome.
//
// After an entry commits, the FSM tells the leader's eval broker and
// blocked-evals tracker what changed, through the EvalBroker and
// BlockedEvals interfaces: new pending evals, newly blocked ones,
// capacity that appeared. It makes those calls on every server; only the
// leader's components are enabled, the others ignore them.
//
// # Guarantee
//
// Apply is a pure function of the log: given the same entries in the
// same order, every server reaches the same state. An entry that cannot
// be applied (a body that does not decode, an unsupported type, a write
// the state store refuses) is answered with an error and skipped, with
// the state left as it was and nothing enqueued; the outcome depends only
// on the entry and the state, so every server skips it alike, and the
// entries after it apply as usual.
//
// # Imports
//
// This package imports structs and nomad/state, and never package nomad:
// package nomad builds the FSM with New, hands it to Raft and wires the
// broker and the tracker in through Config. The tests record the side
// effects with an in-memory twin of both interfaces.
//
// Logger names (fsm) and metric names (nomad.fsm.apply, nomad.fsm.restore,
// nomad.fsm.persist) are Nomad's and must not change.
package fsm
