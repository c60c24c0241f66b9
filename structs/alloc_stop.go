package structs

// AllocStop is the servers' decision to stop or evict one allocation, in
// the one form it has from the scheduler to the state store: the scheduler
// builds it (Plan.AppendStoppedAlloc, Plan.AppendPreemptedAlloc), the plan
// applier judges and commits it as it is, and the state store applies it
// to the alloc it holds when the Raft entry is applied. It names the alloc
// and carries what the decision changes, never a copy of the alloc: the
// stored alloc is the truth for everything else (resources, task states,
// the reschedule history), as of the entry, and a stale copy made by a
// scheduler cannot overwrite it.
//
// Whether the alloc is stopped or evicted is said by the list it is in:
// Plan.NodeUpdate and ApplyPlanResultsRequest.AllocsStopped stop it
// (desired status "stop"), Plan.NodePreemptions and AllocsPreempted evict
// it ("evict"). Its modify time is the entry's UpdatedAt.
//
// The field names are those of the Allocation fields they set, so Raft
// entries written when stops travelled as whole allocations (the former
// AllocationDiff) decode into it: the msgpack codec skips the other
// fields.
type AllocStop struct {
	// ID names the alloc.
	ID string
	// DesiredDescription says why, for operators.
	DesiredDescription string
	// ClientStatus, when set, is a client status the servers decide for a
	// client that cannot report: lost (its node is down) or unknown (its
	// node is disconnected). Empty keeps what the client reported.
	ClientStatus string
	// FollowupEvalID, when set, names the delayed eval that will replace
	// the alloc.
	FollowupEvalID string
	// PreemptedByAllocation names, on an eviction, the alloc it makes room
	// for.
	PreemptedByAllocation string
}
