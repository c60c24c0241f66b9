// Package worker holds the scheduling workers of a server (Worker) and
// the pool that runs them (Pool).
//
// # What lives here
//
// Every server, leader or follower, runs a Pool from start to shutdown.
// A Worker is one goroutine: it asks the leader for an evaluation of the
// types it is enabled for, waits until its own server's state store has
// caught up with that eval, runs the eval's scheduler on a snapshot and
// acts as the scheduler's Planner (planner.go), handing plans and eval
// writes to the leader under the delivery's token. The Pool sizes the set
// of workers at run time (/v1/agent/schedulers/config), pauses and
// resumes them for an operator, and pauses LeaderPausedFraction of them
// while its server leads (LeadershipGained / LeadershipLost). Status and
// WorkloadStatus (status.go) are what /v1/agent/schedulers reports.
//
// A scheduler's last plan carries its eval as it will be written after a
// whole commit (structs.Plan.Eval); when the leader wrote it with the plan
// result (PlanResult.EvalWritten: the plan committed whole and every
// server understands the form), the scheduler's own eval write is
// skipped, which spares each eval a Raft round trip. Otherwise the eval
// is written through Eval.Update as before.
//
// # Guarantees
//
//   - One eval at a time: a worker holds at most one delivery and runs
//     its scheduler to the end before it dequeues again.
//   - A snapshot at least as new as the eval: the scheduler runs on a
//     snapshot of the local store at or past the index the leader gave
//     with the delivery (and, after a partial commit, past the plan
//     result's RefreshIndex). A store that does not get there within
//     5 s fails the eval (nack), and the worker waits longer for it before
//     taking more work.
//   - Every delivery is acked or nacked: Ack when the scheduler returns
//     nil, Nack when it fails, panics, or the store did not catch up. Only
//     the end of the server's context abandons an eval in hand, and the
//     broker redelivers it after its nack timeout.
//   - Pause, Resume and Stop return at once and take effect at the
//     worker's next step: the eval in hand is always finished first. A
//     paused worker takes no eval; an idle wait (Dequeue, a backoff) is
//     interrupted at once.
//   - Backoff: dequeue errors back off from 20 ms doubling to 10 s (30 s
//     on a scheduler version mismatch), logged at debug level for the
//     first 10 s of failures (a leader election) and while the broker is
//     paused; plan submissions and eval writes that fail for want of a
//     leader or with the plan queue disabled are retried from 500 ms
//     doubling to 10 s until the worker stops.
//
// # Imports
//
// This package imports structs, scheduler, nomad/state and nomad/clock,
// and never package nomad: it reaches the leader only through the
// Endpoints interface, which package nomad implements with the Eval.* and
// Plan.Submit RPCs (forwarded to the leader). The tests use
// workertest.Leader, an in-memory twin of Endpoints over a local broker,
// blocked-evals tracker and a serial plan applier built on planjudge,
// writing a statetest.Store. Time runs on the injected
// clock.Clock, so the tests drive backoffs with clock.Fake.
//
// Logger names (worker) and metric names (nomad.worker.*) are Nomad's and
// must not change.
package worker
