// Package nodesim simulates many client nodes against real servers, for
// benchmarks at cluster scale: each simulated node registers with its
// own ID, attributes and resources, heartbeats on the TTL the servers
// return, watches its allocations with blocking queries as a real client
// does, and reports them running (and batch ones complete after a while)
// without starting anything.
//
// What costs what on the simulator's side, so that thousands of nodes fit
// on a small machine beside the servers:
//
//   - heartbeats: one timer heap and a few workers (heartbeat.go), not a
//     goroutine per node;
//   - alloc watches: one goroutine per node blocked in its long poll
//     (watch.go), because that is what a blocking query is; a parked
//     goroutine costs a few KB and no CPU;
//   - status reports: one loop sends every node's pending updates in a
//     few Node.UpdateAlloc calls per sync interval (report.go).
//
// The servers are reached through the RPCer interface: an in-process
// *nomad.Server in tests, connections to server processes in the
// `nomad nodesim` command.
package nodesim
