// Package deploymentwatcher is the leader's deployment watcher: it judges
// the health of the allocations of every active deployment, and moves the
// deployment on: an evaluation after every verdict so the scheduler places
// the next batch of a rolling update (or the deployment's success, when a
// dry run of the scheduler finds the roll-out over), canary promotion when
// the update asks for it, failure (and auto-revert) on unhealthy
// allocations or a missed progress deadline, cancellation when its job is
// stopped or replaced.
//
// Like the other leader duties it keeps nothing in memory between passes:
// each pass reads every running or paused deployment, its job and its
// allocations from the state store and decides from them alone, so a new
// leader carries on from state. A pass runs when any of those change and
// when an allocation may turn healthy or a progress deadline passes.
//
// # Health
//
// The servers judge health; clients only report task states. An alloc of
// a deployment whose group's update block says health_check "task_states"
// or "checks" (there are no service checks here, so both judge task
// states) is judged by structs.TaskStatesHealth: healthy once every task
// meant to keep running has run for min_healthy_time without a restart,
// unhealthy when a task fails or exits, or when healthy_deadline passes
// first (counted from the later of the alloc's creation and the
// deployment's start). Verdicts are written once, through Raft, with an
// eval of the job in the same request. A verdict reported by a client
// (DeploymentStatus.Healthy) is taken as it is, and an eval is written if
// none saw it; such evals of one pass, every deployment's, share Raft
// entries (up to 256 evals each) at the end of the pass. So do the
// verdicts of one pass that need no other write (no failure, revert or
// promotion): up to 256 deployments' requests (and 4,096 alloc verdicts)
// to a DeploymentAllocHealthBatch entry, applied in one transaction, once
// every server understands that entry (structs.MinVersionAllocHealthBatch;
// until then, one DeploymentAllocHealth entry each). The state store
// refuses the whole entry when it refuses one request (a deployment
// cancelled since the pass read it, say); the pass then writes that
// entry's requests one entry each. "manual" groups are judged by
// operators (SetAllocHealth).
//
// # Progress
//
//   - A group without a progress deadline fails the deployment at its first
//     unhealthy alloc.
//   - A group with one leaves unhealthy allocs to the scheduler's
//     rescheduling, and fails the deployment when it is not done by
//     RequireProgressBy (which the state store pushes forward as allocs
//     turn healthy). A group is done when its healthy allocs reach
//     DesiredTotal, or, while its canaries wait for promotion, when they
//     are all healthy.
//   - A failed deployment whose failing groups auto-revert registers the
//     job's latest stable version older than the deployment's, in the same
//     Raft entry, unless that version has the same specification.
//   - When every unpromoted canary group has all its canaries healthy, the
//     deployment is promoted if every one of them auto-promotes; otherwise
//     its description says it needs manual promotion.
//   - Success is the scheduler's call: when nothing is left to do, its
//     reconciler marks the deployment successful, and the state store
//     marks the job version stable in the same write. When the verdicts of
//     a pass complete every group (no canary waiting, no unhealthy alloc
//     live), they are written without an eval; the next pass runs the
//     job's scheduler on its snapshot as a dry run, and if the one plan it
//     would submit only marks the deployment successful, the watcher
//     writes that success itself (with other deployments' verdicts, in the
//     same batch entries) instead of an eval: the roll-out of a small job
//     then costs no second eval, scheduler pass and plan. If the scheduler
//     would do anything else, the eval is written as before. Without
//     schedulers (Config.Schedulers) every verdict brings its eval.
//   - A deployment of a job that was stopped, purged or registered again
//     is cancelled.
//
// Paused deployments get health verdicts but no evals, promotions or
// failures until resumed.
package deploymentwatcher
