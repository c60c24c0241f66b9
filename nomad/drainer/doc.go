// Package drainer is the leader's node drainer: it moves the allocations
// off draining nodes, at the pace each task group allows, and finishes
// drains.
//
// The drainer holds no state of its own. Every pass reads the state store
// and decides from it alone, so a new leader simply starts passing where
// the old one stopped, and whatever a CLI shows about a drain's progress
// comes from state too (structs.NodeDrainProgress). A pass runs whenever
// something it read changes (the node list, the allocs of draining nodes,
// the allocs of the jobs it is migrating), when a drain's deadline passes,
// and when an alloc it waits on may have become healthy.
//
// # Rules of one pass, per draining node
//
//   - The drain is complete when no alloc holds it any more (see
//     structs.AllocHoldsDrain: an alloc holds it until its client reports
//     it stopped). The drainer then clears the node's drain strategy in
//     one Raft entry, records LastDrain as complete with the node event
//     "Node drain complete", and leaves the node ineligible: only an
//     operator makes it eligible again.
//   - At the deadline (at once for a forced drain, Deadline < 0; never for
//     Deadline == 0) every remaining alloc is marked for migration,
//     whatever its group allows, system allocs included unless the drain
//     ignores system jobs.
//   - Before it, service allocs are marked as their group's
//     migrate.max_parallel allows (below). Batch allocs are left to finish
//     until the deadline: a replacement would start their work over.
//   - System and sysbatch allocs are marked only once every other alloc of
//     the node has stopped, so node-local services (log shippers, proxies)
//     outlive what depends on them. A drain that ignores system jobs
//     leaves them running and completes without them.
//
// Marking an alloc sets its DesiredTransition.Migrate; the same Raft entry
// carries one "node-drain" evaluation per job concerned, and the
// scheduler stops each marked alloc and places its replacement.
//
// # The migration budget of a service group
//
// A group of count C and migrate.max_parallel P may have at most P of its
// C instances not served by a healthy alloc. An alloc counts as healthy
// when it is not terminal, not marked for migration, and either reported
// healthy (DeploymentStatus) or found healthy from its task states under
// the group's migrate block (structs.TaskStatesHealth). So
//
//	in flight = max(0, C - healthy)
//	budget    = P - in flight
//
// and the pass marks up to budget allocs of the group, across every
// draining node: nodes in ID order, instances in index order. An alloc stops counting as healthy
// the moment it is marked, and its replacement counts once it is healthy:
// a migration is done exactly when its replacement is healthy (or, when
// the group shrank meanwhile, when nothing needs to replace it). Allocs
// of a job that is stopped or gone, or of a group the job no longer has,
// are marked without a budget: the scheduler stops them anyway.
package drainer
