// Package planapply holds the leader's plan queue (Queue) and the single
// plan applier (Applier) that judges the plans the scheduling workers
// submit and commits what fits through Raft.
//
// # What lives here
//
// The Plan.Submit endpoint of package nomad enqueues a worker's plan
// (Queue.Enqueue) and waits on its Future. The Applier takes plans from
// the queue one at a time, highest eval priority first, then in arrival
// order (queue.go). For each it checks that the worker still holds the
// eval under the plan's token (OutstandingEvals, the broker), waits until
// the state store has reached the index the plan was made at, judges every
// node of the plan against the newest state plus the results still in
// Raft (package planjudge), builds the Raft entry and hands it to Raft
// (the Raft interface, raft.go) without waiting for the commit
// (applier.go). A responder goroutine waits for the commits and answers
// the plans (respond.go).
//
// A plan may carry its eval as the scheduler will write it once the plan
// is in (structs.Plan.Eval). When the plan commits whole and every server
// understands it, the entry writes that eval too and the answer says so
// (EvalWritten), sparing the worker an eval update of its own; otherwise
// the eval is left to the worker, as before (plan_eval.go).
//
// Both live on the leader only and keep nothing worth persisting: a plan
// not yet committed is lost with leadership, and its worker retries the
// eval through the broker.
//
// # Guarantees
//
//   - One judge: plans are judged one at a time by one goroutine, so two
//     plans never both take the same room on a node.
//   - Pipelining: judging plan N+1 overlaps the commit of plan N, and up
//     to Config.Pipeline (DefaultPipeline) results are in Raft at once.
//     A plan judged while earlier results are in flight sees their
//     allocs; a plan that needs the room a pending stop frees waits for
//     that stop's commit and is judged again.
//   - Answers in order: plans are answered in the order they were judged,
//     each once its commit (if any) is applied to the local store, so a
//     rejected plan's RefreshIndex covers every commit it may have lost
//     to.
//   - Every dequeued plan is answered exactly once: with its result, an
//     error, or ErrQueueFlushed when the applier stops. Disabling the
//     queue (leadership lost) answers the plans never dequeued with
//     ErrQueueFlushed; Enqueue on a disabled queue fails with
//     structs.ErrPlanQueueDisabled.
//   - Leadership: the server enables the queue when it gains leadership
//     and tells the Applier (it is one of package nomad's
//     LeadershipObservers): LeadershipGained starts Run for the term, and
//     LeadershipLost returns once Run has answered every plan it took;
//     the server disables the queue after that.
//
// # Time
//
// Dequeue timeouts, the snapshot wait (Config.SnapshotTimeout), the
// stamps on committed allocs and the metrics' durations run on the
// injected clock.Clock, so the tests drive them with clock.Fake.
//
// # Imports
//
// This package imports structs, nomad/state, nomad/planjudge,
// nomad/clock and nomad/priorityheap, and never package nomad: it commits
// only through the Raft interface, which package nomad implements with
// raft.Apply (serverPlanRaft), and asks the broker only through
// OutstandingEvals. Its tests commit through the in-memory Raft twins of
// package planapplytest to a statetest.Store.
//
// Logger names (plan_apply) and metric names (nomad.plan.*) are Nomad's
// and must not change.
package planapply
