package nomad

import (
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/structs"
)

// serverPlanRaft is the server's planapply.Raft: raft.Apply of an
// ApplyPlanResultsRequestType entry, which the FSM applies with
// StateStore.UpsertPlanResults (applyPlanResults).
type serverPlanRaft struct {
	s *Server
}

var _ planapply.Raft = (*serverPlanRaft)(nil)

// ApplyPlanResults encodes req at once and hands it to Raft without
// waiting for the commit.
func (r *serverPlanRaft) ApplyPlanResults(req *structs.ApplyPlanResultsRequest) planapply.RaftFuture {
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
