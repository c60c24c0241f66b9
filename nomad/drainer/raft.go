package drainer

import "github.com/opennomad/nomad/structs"

// Raft is how the drainer writes. The server implements it by applying
// Raft entries on the leader; StateRaft applies the same changes straight
// to a state store for tests.
//
// The drainer calls it from its own goroutine only, one call at a time,
// and only while enabled. A call returns once the entry is committed and
// applied to the leader's state store (so the next pass sees it), with
// the entry's Raft index; an error means nothing was written as far as
// the drainer knows, and the next pass decides again from state.
type Raft interface {
	// AllocUpdateDesiredTransition marks allocs for migration and writes
	// the evals that make the scheduler act on them, in one entry of
	// type structs.AllocUpdateDesiredTransitionRequestType
	// (AllocUpdateDesiredTransitionRequest{Allocs, Evals}); the FSM hands
	// the evals to the broker.
	AllocUpdateDesiredTransition(allocs map[string]*structs.DesiredTransition, evals []*structs.Evaluation) (uint64, error)

	// NodesDrainComplete finishes the drains of nodes, in one entry of
	// type structs.BatchNodeUpdateDrainRequestType: for each node a
	// DrainUpdate{DrainStrategy: nil, MarkEligible: false} and the event
	// in NodeEvents, with UpdatedAt = event.Timestamp.Unix() (the state
	// store then records LastDrain as complete).
	NodesDrainComplete(nodeIDs []string, event *structs.NodeEvent) (uint64, error)
}
