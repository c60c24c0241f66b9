package fsm

import (
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Evaluation entries: the schedulers' writes (status updates, blocked and
// follow-up evals), the leader's reapers (failed and canceled evals) and
// the garbage collector's deletions.

func (f *FSM) evalUpdateTxn(tx *state.Txn, body []byte) (func(), error) {
	var req structs.EvalUpdateRequest
	if err := decode(body, structs.EvalUpdateRequestType, &req); err != nil {
		return nil, err
	}
	if err := tx.UpsertEvals(req.Evals); err != nil {
		return nil, err
	}
	return f.afterEvals(req.Evals...), nil
}

func (f *FSM) applyEvalDelete(body []byte, index uint64) interface{} {
	var req structs.EvalDeleteRequest
	if err := decode(body, structs.EvalDeleteRequestType, &req); err != nil {
		return err
	}
	return f.State().DeleteEvals(index, req.Evals, req.Allocs)
}
