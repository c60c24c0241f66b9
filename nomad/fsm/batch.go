package fsm

import (
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/hashicorp/raft"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Raft hands the FSM the entries it commits together (up to
// MaxAppendEntries under load) through ApplyBatch. Consecutive entries of
// the types below apply in one go-memdb write transaction
// (state.WriteBatch): each write transaction pays for copying the radix
// path of every index it touches, a cache of the nodes it wrote and the
// rows of the index table, and a batch pays that once.
var _ raft.BatchingFSM = (*FSM)(nil)

// txnApplyFunc is the form of an applier that can share a transaction: it
// decodes body and applies it through tx alone, and returns the side
// effects (broker, blocked evals) to run once the entry is committed, or
// nil for none. Applied alone, or in a batch, the same function runs.
type txnApplyFunc func(f *FSM, tx *state.Txn, body []byte) (after func(), err error)

// batchable lists the entry types that may join a batch. An entry may
// join only if everything it reads and writes goes through its Txn (so
// it sees the entries before it in the batch, as it would after their
// commits), it does no I/O, and its side effects depend only on the entry
// and what tx reads. A state.Txn holds no reference to the store, so the
// functions below cannot reach committed state by construction; each was
// also checked for the reads it makes:
//
//   - JobRegister, JobDeregister: the stored job (EnforceIndex, the stop
//     copy, the eval's JobModifyIndex) and deployments, through tx.
//   - EvalUpdate: the stored evals, through tx.UpsertEvals.
//   - ApplyPlanResults: allocs, job versions, deployments, nodes, evals
//     through tx.UpsertPlanResults; the nodes to unblock through tx after
//     the writes (nodesOfAllocs).
//   - AllocClientUpdate: the stored allocs and deployments through
//     tx.UpdateAllocsFromClient, the freed nodes as above.
//   - AllocUpdateDesiredTransition, DeploymentStatusUpdate,
//     DeploymentPromotion, DeploymentAllocHealth: their tx methods read
//     only through tx.
//   - DeploymentAllocHealthBatch: tx.UpdateDeploymentAllocHealth for each
//     request, through the same tx, and the requests' evals.
//
// The others apply alone: their appliers call the store's own write
// methods and may read committed state before they write (node entries
// compare the node before and after), or they are rare.
var batchable = map[structs.MessageType]txnApplyFunc{
	structs.JobRegisterRequestType:                  (*FSM).jobRegisterTxn,
	structs.JobDeregisterRequestType:                (*FSM).jobDeregisterTxn,
	structs.EvalUpdateRequestType:                   (*FSM).evalUpdateTxn,
	structs.ApplyPlanResultsRequestType:             (*FSM).planResultsTxn,
	structs.AllocClientUpdateRequestType:            (*FSM).allocClientUpdateTxn,
	structs.AllocUpdateDesiredTransitionRequestType: (*FSM).allocDesiredTransitionTxn,
	structs.DeploymentStatusUpdateRequestType:       (*FSM).deploymentStatusUpdateTxn,
	structs.DeploymentPromoteRequestType:            (*FSM).deploymentPromotionTxn,
	structs.DeploymentAllocHealthRequestType:        (*FSM).deploymentAllocHealthTxn,
	structs.DeploymentAllocHealthBatchRequestType:   (*FSM).deploymentAllocHealthBatchTxn,
}

// The batchable types apply alone through the same functions, so the
// list above is the one place they are named.
func init() {
	for t, fn := range batchable {
		appliers[t] = alone(fn)
	}
}

// alone applies a txnApplyFunc as one entry in its own transaction.
func alone(fn txnApplyFunc) applyFunc {
	return func(f *FSM, body []byte, index uint64) interface{} {
		var after func()
		err := f.State().WithWriteTxn(index, func(tx *state.Txn) error {
			var err error
			after, err = fn(f, tx, body)
			return err
		})
		if err != nil {
			return err
		}
		if after != nil {
			after()
		}
		return nil
	}
}

// batchFunc returns the txnApplyFunc of a log entry that may join a
// batch, or nil.
func batchFunc(l *raft.Log) txnApplyFunc {
	if l.Type != raft.LogCommand || len(l.Data) == 0 {
		return nil
	}
	return batchable[structs.MessageType(l.Data[0])&^structs.IgnoreUnknownTypeFlag]
}

// ApplyBatch applies entries Raft committed together and returns one
// response per entry, each what Apply would have returned. Runs of
// consecutive batchable entries share one state transaction; every other
// entry applies alone, in order. The state, the events and the side
// effects are those of applying the entries one by one: see applyRun.
func (f *FSM) ApplyBatch(logs []*raft.Log) []interface{} {
	metrics.AddSample([]string{"nomad", "fsm", "apply_batch_size"}, float32(len(logs)))
	resps := make([]interface{}, len(logs))
	for i := 0; i < len(logs); {
		j := i
		for j < len(logs) && batchFunc(logs[j]) != nil {
			j++
		}
		if j-i > 1 {
			f.applyRun(logs[i:j], resps[i:j])
			i = j
			continue
		}
		resps[i] = f.Apply(logs[i])
		i++
	}
	return resps
}

// applyRun applies a run of batchable entries in one transaction. Each
// entry has its own state.Txn at its own index, so it writes, stamps and
// publishes as it would alone; the commit makes them visible together;
// then each entry's side effects run, in entry order (the broker and the
// blocked-evals tracker receive the calls, in the order, that sequential
// application makes).
//
// An entry that fails cannot be undone inside the shared transaction, so
// the whole run is aborted and applied again one entry at a time. An
// entry's outcome depends only on the entry and the state before it,
// which is the same, so this gives exactly the sequential result,
// failure included. Failed entries are rare (writers check before they
// propose), so the second pass costs nothing in practice.
func (f *FSM) applyRun(logs []*raft.Log, resps []interface{}) {
	start := time.Now()
	b := f.State().BeginWriteBatch()
	defer b.Abort() // a no-op after Commit; releases the lock on panic
	after := make([]func(), 0, len(logs))
	for _, l := range logs {
		msgType := structs.MessageType(l.Data[0])
		fn := batchFunc(l)
		entryStart := time.Now()
		var effects func()
		err := b.Apply(l.Index, func(tx *state.Txn) error {
			var err error
			effects, err = fn(f, tx, l.Data[1:])
			return err
		})
		if err != nil {
			b.Abort()
			f.logger.Debug("entry of a batch not applied; applying the batch one entry at a time",
				"type", msgType, "index", l.Index, "batch", len(logs), "error", err)
			for i, l := range logs {
				resps[i] = f.Apply(l)
			}
			return
		}
		// The entry's own share: its decode and writes, not the commit
		// it shares (nomad.fsm.apply_batch covers the whole run).
		metrics.MeasureSinceWithLabels([]string{"nomad", "fsm", "apply"}, entryStart,
			[]metrics.Label{{Name: "type", Value: msgType.String()}})
		after = append(after, effects)
	}
	b.Commit()
	for _, fn := range after {
		if fn != nil {
			fn()
		}
	}
	metrics.MeasureSince([]string{"nomad", "fsm", "apply_batch"}, start)
	metrics.AddSample([]string{"nomad", "fsm", "apply_batch_entries"}, float32(len(logs)))
}
