package nomad

import (
	"fmt"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// A plan's stops and preemptions travel from worker to leader as stubs:
// the leader has the full allocs in its state store, so only what the
// scheduler decided about them is sent. The worker normalizes, the
// applier denormalizes before judging the plan.

// normalizePlan returns a shallow copy of plan whose stops and
// preemptions are stubs. The scheduler's plan is left as it was: it may
// read it again after the submission.
func normalizePlan(plan *structs.Plan) *structs.Plan {
	if len(plan.NodeUpdate) == 0 && len(plan.NodePreemptions) == 0 {
		return plan
	}
	n := *plan
	n.NodeUpdate = stubAllocs(plan.NodeUpdate, func(a *structs.Allocation) *structs.Allocation {
		return &structs.Allocation{
			ID:                 a.ID,
			DesiredDescription: a.DesiredDescription,
			ClientStatus:       a.ClientStatus,
			FollowupEvalID:     a.FollowupEvalID,
			RescheduleTracker:  a.RescheduleTracker,
		}
	})
	n.NodePreemptions = stubAllocs(plan.NodePreemptions, func(a *structs.Allocation) *structs.Allocation {
		return &structs.Allocation{
			ID:                    a.ID,
			DesiredDescription:    a.DesiredDescription,
			PreemptedByAllocation: a.PreemptedByAllocation,
		}
	})
	return &n
}

func stubAllocs(m map[string][]*structs.Allocation, stub func(*structs.Allocation) *structs.Allocation) map[string][]*structs.Allocation {
	if m == nil {
		return nil
	}
	out := make(map[string][]*structs.Allocation, len(m))
	for node, allocs := range m {
		stubs := make([]*structs.Allocation, len(allocs))
		for i, a := range allocs {
			stubs[i] = stub(a)
		}
		out[node] = stubs
	}
	return out
}

// isAllocStub reports whether a stop or preemption came as a stub; full
// allocs (from an in-process submitter) are taken as they are.
func isAllocStub(a *structs.Allocation) bool { return a.NodeID == "" }

// denormalizePlan replaces, in place, every stub among the plan's stops
// and preemptions by the stored alloc with the scheduler's decision
// applied. The applier owns the plan while it handles it. An alloc that
// no longer exists fails the plan: its Raft entry could not be applied.
func denormalizePlan(snap *state.StateSnapshot, plan *structs.Plan) error {
	for _, allocs := range plan.NodeUpdate {
		for i, stub := range allocs {
			if !isAllocStub(stub) {
				continue
			}
			stored, err := storedAlloc(snap, plan, stub.ID, "stop")
			if err != nil {
				return err
			}
			a := stored.CopySkipJob()
			a.DesiredStatus = structs.AllocDesiredStatusStop
			a.DesiredDescription = stub.DesiredDescription
			if stub.ClientStatus != "" {
				a.ClientStatus = stub.ClientStatus
			}
			if stub.FollowupEvalID != "" {
				a.FollowupEvalID = stub.FollowupEvalID
			}
			if stub.RescheduleTracker != nil {
				a.RescheduleTracker = stub.RescheduleTracker
			}
			allocs[i] = a
		}
	}
	for _, allocs := range plan.NodePreemptions {
		for i, stub := range allocs {
			if !isAllocStub(stub) {
				continue
			}
			stored, err := storedAlloc(snap, plan, stub.ID, "preempt")
			if err != nil {
				return err
			}
			a := stored.CopySkipJob()
			a.DesiredStatus = structs.AllocDesiredStatusEvict
			a.DesiredDescription = stub.DesiredDescription
			a.PreemptedByAllocation = stub.PreemptedByAllocation
			allocs[i] = a
		}
	}
	return nil
}

func storedAlloc(snap *state.StateSnapshot, plan *structs.Plan, id, verb string) (*structs.Allocation, error) {
	a, err := snap.AllocByID(nil, id)
	if err != nil {
		return nil, fmt.Errorf("plan for eval %q: alloc %q to %s: %w", plan.EvalID, id, verb, err)
	}
	if a == nil {
		return nil, fmt.Errorf("plan for eval %q: alloc %q to %s: %w", plan.EvalID, id, verb, structs.ErrUnknownAlloc)
	}
	return a, nil
}
