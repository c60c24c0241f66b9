// Package planjudge decides what of a scheduler's plan may be committed,
// and writes the Raft entry that commits it. It is the pure half of the
// leader's plan applier: no goroutines of its own beyond a plan's parallel
// node checks, no clock, no I/O. The applier (package nomad) keeps the
// plan queue, the Raft pipeline and the answers to submitters, and calls
// Judge, BuildRequest and InFlight here; the scheduler's test harness calls
// the same functions, so scheduler tests commit plans by the rules the
// leader applies instead of a copy of them.
//
// It imports structs and the standard library only. State is read through
// the State interface, which the state store's snapshots satisfy
// (state.SchedulerView), so the package depends on neither the store nor
// the scheduler, and the scheduler's tests may import it without a cycle.
//
// # What the leader re-checks, and why
//
// Schedulers are optimistic. Each worker plans against a snapshot of its
// own state store, which may be behind the leader's, while other workers
// plan against theirs; two of them may pick the same free room, or place
// on a node that has gone down or started draining since. Only the plan
// applier, one plan at a time, sees every commit: it is the single judge,
// and what it commits never overcommits a node, whatever the number of
// workers. Judge checks each node the plan touches against the newest
// committed state plus the results already handed to Raft but not yet
// committed (InFlight):
//
//   - a node that only loses allocs always passes: stops and preemptions
//     free room, so they cannot make anything worse;
//   - a node placed on must exist and be ready; a down or disconnected
//     node passes only when all the plan does there is mark its allocs
//     lost or unknown;
//   - on a ready node, in-place updates of allocs already there pass even
//     if the node is ineligible or draining: they move no work onto it;
//   - anything else needs an eligible node that is not draining, where
//     the allocs that would remain (those committed and in flight, less
//     the plan's stops, preemptions and replaced versions) and the plan's
//     own fit together (structs.AllocsFit: cpu, cores, memory, disk,
//     ports), the same arithmetic the scheduler proposed with.
//
// A node that fails is left out of the result and named in RejectedNodes;
// the rest is committed (an AllAtOnce plan commits nothing then), and the
// scheduler is told the index to refresh to before it plans the remainder
// again. Capacity that an uncommitted result frees is never counted on:
// the commit may fail, and a plan accepted on its strength would then
// overcommit. A plan that needs such capacity is told what to wait for
// (Verdict.WaitFor) and judged again once that commit is known.
//
// Only what keeps committed state sound is re-checked: room and node
// status, and that every alloc the plan stops or preempts still exists
// (the state store would refuse the whole entry otherwise). The
// scheduler's choices (constraints, affinities, spread, which allocs to
// stop) are not: re-running them would be scheduling again, and a race
// on them costs placement quality, not safety; the change that made a
// choice stale triggers an evaluation of its own. Before judging, the
// applier also makes sure the plan's eval is still outstanding under the
// submitter's token, so a worker that lost its delivery commits nothing,
// and that its state has reached the index the plan was made at.
//
// Stops travel as decisions (structs.AllocStop), never as copies of
// allocs: the judge needs only their IDs, and the state store applies
// them to the allocs it holds when the entry is applied.
package planjudge
