// Package nomad is the server: Raft and the FSM, the RPC registry the
// endpoints are served through, the scheduling workers, and the leader's
// duties.
//
// A Server (server.go) runs Raft over the replicated FSM (package
// nomad/fsm), which is the only writer of the state store. Every write an
// endpoint accepts is validated, encoded as one Raft entry and applied by
// the FSM on every server; after each entry the FSM hands new pending and
// blocked evaluations to the leader's broker and blocked-evals tracker
// (ignored elsewhere). The RPC endpoints live in package nomad/endpoints
// and reach the server only through its endpoints.Server interface, which
// endpointServer (endpoints_server.go) implements; the registry (rpc.go)
// serves endpoints.All in process through Server.RPC and over
// connections through Server.ServeRPCConn. Each endpoint first asks
// forward (rpc_forward.go) where the request must be served; client
// alloc updates are written in batches (alloc_update_batcher.go). While a
// server leads (leader.go) it also keeps the nodes' heartbeat timers
// (heartbeat.go), reaps failed and superseded evaluations, and schedules
// the garbage collector (core_sched.go).
//
// The leader-side scheduling pipeline is built from in-memory parts that
// hold no state of their own worth persisting; every leader rebuilds them
// from the state store when it takes office:
//
//   - broker.Broker (package nomad/broker) queues pending evaluations per
//     scheduler type and hands them to workers with at-least-once
//     delivery, one eval per job at a time.
//   - broker.BlockedEvals holds evaluations waiting for capacity and
//     releases them into the broker when the cluster changes in a way that
//     can help.
//   - planapply.Queue (package nomad/planapply) orders the plans workers
//     submit for the single plan applier.
//   - planapply.Applier judges each plan node by node against the newest
//     state plus the results still in Raft, commits what fits through
//     planapply.Raft with several commits in flight, and answers in
//     order. The judging and the building of the Raft entry are the pure
//     package planjudge, which the scheduler's test harness uses too.
//
// The applier commits through planapply.Raft, which the server implements
// with raft.Apply (serverPlanRaft); the FSM applies the entry, hands the
// preemption evals to the broker and releases blocked evals on the nodes
// where allocs stopped.
//
// Every server runs a worker.Pool (package nomad/worker) from NewServer
// to Shutdown. Each worker takes evaluations from the leader through
// worker.Endpoints (on a server, rpcWorkerEndpoints: the Eval.* and
// Plan.Submit RPCs; Dequeue calls endpoints.Dequeue with the worker's
// context), waits until its own state store has caught up, runs
// the scheduler on a snapshot (the garbage collector, package nomad/coresched, for
// "_core" evals) and acts as its Planner. A leader pauses
// LeaderPausedFraction of its own workers.
//
// The leader's duties (leader_duties.go) are the node drainer, the
// deployment watcher and the periodic dispatcher of the sub-packages.
// Each decides from the state store alone and writes through dutyRaft;
// they are enabled after the broker when leadership is established and
// disabled before it when leadership is lost. The Deployment and
// Periodic endpoints act through them.
//
// Endpoint errors are of a structs error kind (structs/error_kinds.go:
// no leader, unknown node, invalid, conflict, permission denied, ...);
// endpoints and the FSM return the kind, and the RPC layer gives those
// that are the caller's fault their HTTP status (structs.ClassifyError,
// from structs.HTTPStatus) before the error crosses the network as text.
//
// Every timer in these parts runs on an injected clock.Clock, so their
// tests drive time by hand and never sleep.
package nomad
