// Package coresched is the garbage collector: the scheduler of the "_core"
// evals the leader enqueues every few minutes (and System.GarbageCollect
// on demand). Like every scheduler it decides on an immutable state
// snapshot, here what is terminal and old enough to delete; unlike the
// others it acts by calling the server's deletion endpoints (Eval.Reap,
// Job.BatchDeregister, Node.BatchDeregister, Deployment.Reap), which go
// through the leader and Raft, in entries of bounded size.
//
// The package imports structs, scheduler (the Scheduler interface it
// implements) and nomad/state (the snapshot), never the server: the
// server hands it an RPC function, the time and the thresholds (Config).
// Its tests against a whole server live in package nomad
// (core_sched_test.go).
package coresched
