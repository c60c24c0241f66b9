package planapply

import "github.com/opennomad/nomad/structs"

// Raft commits plan results. The server implements it with
// raft.Apply of an ApplyPlanResultsRequestType entry, applied by the FSM
// with StateStore.UpsertPlanResults (package nomad's serverPlanRaft);
// tests use the in-memory twins of package planapplytest.
//
// The plan applier is the only caller, from its one goroutine, so calls
// never overlap; entries must commit in call order.
type Raft interface {
	// ApplyPlanResults hands req to Raft as one entry and returns at once,
	// without waiting for the commit: the applier judges the next plan
	// while this one commits. The implementation must be done with req
	// when it returns (encode it before returning, as raft.Apply needs
	// bytes anyway): the applier hands req's allocs back to the submitter
	// and reads them while judging later plans, and nothing may change
	// them.
	ApplyPlanResults(req *structs.ApplyPlanResultsRequest) RaftFuture
}

// RaftFuture is one plan result on its way through Raft.
type RaftFuture interface {
	// Wait blocks until the entry is committed and applied to this
	// server's state store, or has failed, and returns its Raft index.
	// The applier calls it once, from its responder goroutine, in
	// dispatch order.
	//
	// A nil error promises that the state store the applier reads (its
	// State function) already holds the entry: hashicorp/raft completes
	// an ApplyFuture after FSM.Apply returned on the leader, which is
	// exactly that. A non-nil error promises that the entry did not
	// change that store: it was refused (not the leader, enqueue timeout,
	// shutdown) or the FSM rejected it; implementations return the
	// FSM's error (ApplyFuture.Response) here, not nil. An entry whose
	// fate is unknown (raft.ErrLeadershipLost) also returns an error; the
	// applier is stopped on leadership loss, and the next leader's applier
	// starts from a store that has every committed entry.
	Wait() (uint64, error)
}
