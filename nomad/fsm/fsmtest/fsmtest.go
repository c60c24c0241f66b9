// Package fsmtest holds test helpers for the FSM that the tests of several
// packages share: an FSM whose side effects and published events are
// recorded, and the check that applying Raft entries in batches
// (FSM.ApplyBatch) leaves exactly what applying them one by one leaves.
package fsmtest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/fsm"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
)

// Recorder records, in order, every call the FSM makes into the leader's
// broker and blocked-evals tracker, and every batch of events its store
// publishes.
type Recorder struct {
	mu     sync.Mutex
	Calls  []string
	Events []*structs.Events
}

func (r *Recorder) call(format string, args ...interface{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Calls = append(r.Calls, fmt.Sprintf(format, args...))
}

func (r *Recorder) Enqueue(e *structs.Evaluation) { r.call("Enqueue %s", e.ID) }
func (r *Recorder) Block(e *structs.Evaluation)   { r.call("Block %s", e.ID) }
func (r *Recorder) Untrack(jobID, namespace string) {
	r.call("Untrack %s/%s", namespace, jobID)
}
func (r *Recorder) Unblock(class string, index uint64) { r.call("Unblock %s@%d", class, index) }
func (r *Recorder) UnblockClassAndQuota(class, quota string, index uint64) {
	r.call("UnblockClassAndQuota %s/%s@%d", class, quota, index)
}
func (r *Recorder) UnblockNode(nodeID string, index uint64) {
	r.call("UnblockNode %s@%d", nodeID, index)
}

// Publish records a batch of events.
func (r *Recorder) Publish(events *structs.Events) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Events = append(r.Events, events)
}

// NewFSM returns an FSM whose side effects and events r records.
func NewFSM(t testing.TB, r *Recorder) *fsm.FSM {
	t.Helper()
	f, err := fsm.New(fsm.Config{EvalBroker: r, BlockedEvals: r, StateConfig: state.Config{Publisher: r}})
	must.NoError(t, err)
	return f
}

// Entry encodes req as the Raft log entry of type typ at index.
func Entry(t testing.TB, index uint64, typ structs.MessageType, req interface{}) *raft.Log {
	t.Helper()
	buf, err := structs.Encode(typ, req)
	must.NoError(t, err)
	return &raft.Log{Index: index, Type: raft.LogCommand, Data: buf}
}

// SameAsSequential applies setup one entry at a time to two FSMs, then
// logs one entry at a time (FSM.Apply) to the first and in ApplyBatch
// calls of random sizes from 1 to maxBatch (drawn from seed) to the
// second. It fails unless both give the same response to every entry
// (errors compared by text), hold the same rows in every table, published
// the same events and made the same side-effect calls, in the same
// order. It returns the sequential responses.
func SameAsSequential(t testing.TB, setup, logs []*raft.Log, seed uint64, maxBatch int) []interface{} {
	t.Helper()
	var seqRec, batchRec Recorder
	seq, batched := NewFSM(t, &seqRec), NewFSM(t, &batchRec)
	for _, l := range setup {
		must.Eq(t, response(seq.Apply(l)), response(batched.Apply(l)), must.Sprintf("setup entry %d", l.Index))
	}

	want := make([]interface{}, len(logs))
	for i, l := range logs {
		want[i] = seq.Apply(l)
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	var got []interface{}
	for rest := logs; len(rest) > 0; {
		n := min(1+rng.IntN(maxBatch), len(rest))
		resps := batched.ApplyBatch(rest[:n])
		must.Len(t, n, resps, must.Sprint("one response per entry"))
		got = append(got, resps...)
		rest = rest[n:]
	}
	for i, l := range logs {
		must.Eq(t, response(want[i]), response(got[i]), must.Sprintf("response to entry %d", l.Index))
	}

	statetest.SameTables(t, seq.State(), batched.State())
	must.Eq(t, seqRec.Calls, batchRec.Calls, must.Sprint("side-effect calls"))
	must.Eq(t, len(seqRec.Events), len(batchRec.Events), must.Sprint("published event batches"))
	for i := range seqRec.Events {
		w, g := seqRec.Events[i], batchRec.Events[i]
		if w.Index != g.Index || !reflect.DeepEqual(w.Events, g.Events) {
			t.Fatalf("published events %d differ:\nwant %d %#v\n got %d %#v", i, w.Index, w.Events, g.Index, g.Events)
		}
	}
	return want
}

// response is a comparable form of an Apply response.
func response(r interface{}) interface{} {
	if err, ok := r.(error); ok {
		return "error: " + err.Error()
	}
	return r
}
