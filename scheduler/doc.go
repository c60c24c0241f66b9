/*
Package scheduler turns an evaluation into a plan. It is pure logic: it
reads an immutable snapshot of cluster state through State, and talks to
the outside world only through Planner. It does no network or disk I/O
and reads no clock except the one in Config, so every decision can be
replayed in a test.

# How a pass works

A Scheduler's Process runs passes until a plan is fully committed, each
on one snapshot (State), retrying with a fresh snapshot when the plan
applier rejects part of a plan, up to a per-type limit (service 5,
batch 2, system 5, sysbatch 2).

A service or batch pass (generic_sched.go):

 1. reconcile (reconcile.go) compares the job with its allocs and the
    nodes they sit on, group by group, and decides — as a pure function —
    what to stop, ignore, update in place, replace destructively (at most
    max_parallel unproven allocs at a time), migrate (any alloc marked
    so, by the drainer or an operator's stop), replace when lost,
    reschedule now or later (reconcile_reschedule.go: failed allocs, and
    allocs their deployment judged unhealthy), and which names to place
    (<job>.<group>[<index>]). It never writes into what it read: a
    deployment it changes is a copy that the plan carries
    (reconcile_deployment.go).
 2. The stops and in-place updates go into the plan through the pass's
    evalContext (context.go), which keeps per-node usage equal to "state
    plus plan": what the plan applier will check.
 3. The candidate set (candidates.go) is the ready nodes of the job's
    pool and datacenters, in a seeded shuffle.
 4. Each placement asks its group's selector (select.go). A selector is
    built once per group and pass: static feasibility (feasible.go,
    feasible_constraint.go) is answered once per computed node class and
    once per node only for constraints on unique.* values; the feasible
    nodes are put in a visiting order (order.go) — spread buckets
    (rank_spread.go), affinity order, rotation — and a placement scores
    the first `limit` nodes that fit (rank.go) and takes the best. Nodes
    found full, or excluded by distinct_hosts/distinct_property, leave the
    order until a stop frees them, so a placement costs O(limit), not
    O(nodes), and failures are explained from running tallies without
    revisiting the cluster.
 5. A placement that finds no node fills the group's AllocMetric; later
    placements of the group are coalesced into it. With preemption
    enabled, lower-priority allocs may be evicted instead (preemption.go).
 6. Failures create one blocked eval carrying the class eligibility, and
    the eval is written back with its failed and queued allocs.

A system or sysbatch pass (system_sched.go) diffs each group against
every candidate node instead and places on each node with selectOn;
nodes that fail a constraint are simply not the group's nodes, nodes
short of room are failures with a blocked eval per node.

# Memory

What a pass builds per candidate node (the candidate list, class ids,
usage slots, each selector's status, order and counts) is taken from a
Scratch (scratch.go) that a worker keeps across its evals, so a small
job's eval on a large cluster allocates about what its placements need.
Only memory is reused: every array is cleared or written before it is
read, and a usage slot counts as loaded only in the pass that loaded it,
so the outcome is the one fresh memory would give.
*/
package scheduler
