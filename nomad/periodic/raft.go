package periodic

import "github.com/opennomad/nomad/structs"

// Raft is how the dispatcher writes. The server implements it by applying
// Raft entries on the leader; StateRaft applies the same change straight
// to a state store for tests.
//
// The dispatcher calls it from its own goroutine, and from the RPC
// handler that forces a launch (ForceRun); implementations must be safe
// for concurrent use. A call returns once the entry is committed and
// applied to the leader's state store, with the entry's Raft index; an
// error means nothing was written.
type Raft interface {
	// RegisterChild registers a launched child job with its eval, in one
	// entry of type structs.JobRegisterRequestType
	// (JobRegisterRequest{Job: child, Eval: eval}). The state store
	// records the launch for the child's parent in the same transaction;
	// the FSM hands the eval to the broker.
	RegisterChild(child *structs.Job, eval *structs.Evaluation) (uint64, error)
}
