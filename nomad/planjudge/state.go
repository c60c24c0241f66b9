package planjudge

import "github.com/opennomad/nomad/structs"

// State is the committed state a plan is judged against: one immutable
// snapshot of a state store, read without watches (state.SchedulerView
// implements it). It must not change while a plan is judged and its
// request built, so that every check sees the same state, and it must be
// safe for concurrent reads: Judge checks the nodes of a large plan on
// several goroutines. Objects returned are shared with every other reader
// of the snapshot; the judge never modifies them.
type State interface {
	// NodeByID returns the node, or nil when it does not exist.
	NodeByID(id string) (*structs.Node, error)
	// AllocByID returns the alloc, or nil when it does not exist.
	AllocByID(id string) (*structs.Allocation, error)
	// AllocsByNodeTerminal returns the node's allocs whose TerminalStatus
	// equals terminal, sorted by ID. With false the slice is shared with
	// other readers, like the objects: it is never reordered nor written.
	AllocsByNodeTerminal(nodeID string, terminal bool) ([]*structs.Allocation, error)
	// JobByID returns the job, or nil when it does not exist (purged).
	JobByID(namespace, id string) (*structs.Job, error)
	// JobByIDAndVersion returns one stored version of the job, or nil.
	JobByIDAndVersion(namespace, id string, version uint64) (*structs.Job, error)

	// PlacementIndex is the index of the newest write to nodes or allocs,
	// zero when neither was ever written: a scheduler that has seen it has
	// seen everything a node's verdict rested on.
	PlacementIndex() (uint64, error)
	// LatestIndex is the index of the newest write of any kind.
	LatestIndex() (uint64, error)
}
