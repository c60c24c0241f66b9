package nomad

import (
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/structs"
)

// PlanRaft commits plan results. The server implements it with
// raft.Apply of an ApplyPlanResultsRequestType entry, applied by the FSM
// with StateStore.UpsertPlanResults; tests use an in-memory twin.
//
// The plan applier is the only caller, from its one goroutine, so calls
// never overlap; entries must commit in call order.
type PlanRaft interface {
	// ApplyPlanResults hands req to Raft as one entry and returns at once,
	// without waiting for the commit: the applier judges the next plan
	// while this one commits. The implementation must be done with req
	// when it returns (encode it before returning, as raft.Apply needs
	// bytes anyway): the applier hands req's allocs back to the submitter
	// and reads them while judging later plans, and nothing may change
	// them.
	ApplyPlanResults(req *structs.ApplyPlanResultsRequest) PlanApplyFuture
}

// PlanApplyFuture is one plan result on its way through Raft.
type PlanApplyFuture interface {
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

// serverPlanRaft is the server's PlanRaft: raft.Apply of an
// ApplyPlanResultsRequestType entry, which the FSM applies with
// StateStore.UpsertPlanResults (applyPlanResults).
type serverPlanRaft struct {
	s *Server
}

var _ PlanRaft = (*serverPlanRaft)(nil)

// ApplyPlanResults encodes req at once and hands it to Raft without
// waiting for the commit.
func (r *serverPlanRaft) ApplyPlanResults(req *structs.ApplyPlanResultsRequest) PlanApplyFuture {
	buf, err := structs.Encode(structs.ApplyPlanResultsRequestType, req)
	if err != nil {
		return failedPlanApply{err: err}
	}
	return &raftPlanApply{future: r.s.raft.Apply(buf, raftEnqueueLimit), start: time.Now()}
}

// raftPlanApply is one plan result in Raft.
type raftPlanApply struct {
	future raft.ApplyFuture
	start  time.Time
}

// Wait returns the entry's index once this server's FSM applied it; an
// error when Raft refused or lost it (structs.ErrNoLeader when leadership
// went) or when the FSM rejected it.
func (f *raftPlanApply) Wait() (uint64, error) {
	if err := f.future.Error(); err != nil {
		return 0, raftApplyError(structs.ApplyPlanResultsRequestType, err)
	}
	metrics.MeasureSinceWithLabels([]string{"nomad", "raft", "apply"}, f.start,
		[]metrics.Label{{Name: "type", Value: structs.ApplyPlanResultsRequestType.String()}})
	if err, ok := f.future.Response().(error); ok {
		return 0, err
	}
	return f.future.Index(), nil
}

// failedPlanApply is a result that never reached Raft.
type failedPlanApply struct{ err error }

func (f failedPlanApply) Wait() (uint64, error) { return 0, f.err }
