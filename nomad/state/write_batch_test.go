package state

import (
	"errors"
	"reflect"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// batchInputs are the objects batchWrites writes.
type batchInputs struct {
	j1, j2 *structs.Job
	e1, e2 *structs.Evaluation
	node   *structs.Node
}

func newBatchInputs() *batchInputs {
	j1, j2 := mockJob(), mockJob()
	return &batchInputs{j1: j1, j2: j2, e1: mockEval(j1), e2: mockEval(j2), node: mockNode()}
}

// writes are four entries' writes: two jobs with an eval each, then the
// first eval completed, then a node; they touch overlapping tables. Each
// writes fresh copies of the inputs, so two stores can be given the
// same writes.
func (in *batchInputs) writes() []func(tx *Txn) error {
	return []func(tx *Txn) error{
		func(tx *Txn) error {
			if err := tx.UpsertJob(in.j1.Copy()); err != nil {
				return err
			}
			return tx.UpsertEvals([]*structs.Evaluation{in.e1.Copy()})
		},
		func(tx *Txn) error {
			if err := tx.UpsertJob(in.j2.Copy()); err != nil {
				return err
			}
			return tx.UpsertEvals([]*structs.Evaluation{in.e2.Copy()})
		},
		func(tx *Txn) error {
			// Reads what the entry before it in the batch wrote.
			stored, err := tx.EvalByID(in.e1.ID)
			if err != nil || stored == nil {
				return errors.Join(err, errors.New("eval of the first entry not visible"))
			}
			done := stored.Copy()
			done.Status = structs.EvalStatusComplete
			return tx.UpsertEvals([]*structs.Evaluation{done})
		},
		func(tx *Txn) error { return tx.UpsertNode(in.node.Copy()) },
	}
}

// Entries applied in one batch leave the tables, the index rows, the
// backlog counts and the published events (one Publish per entry, at its
// index) that committing them one by one leaves.
func TestWriteBatch_SameAsOneTransactionPerEntry(t *testing.T) {
	seqPub, batchPub := &recordingPublisher{}, &recordingPublisher{}
	seq, err := NewStateStore(&Config{Publisher: seqPub})
	must.NoError(t, err)
	batched, err := NewStateStore(&Config{Publisher: batchPub})
	must.NoError(t, err)

	writes := newBatchInputs().writes()
	for i, w := range writes {
		must.NoError(t, seq.WithWriteTxn(uint64(10+i), w))
	}
	b := batched.BeginWriteBatch()
	for i, w := range writes {
		must.NoError(t, b.Apply(uint64(10+i), w))
	}
	must.Eq(t, len(writes), b.Len())
	idx, _ := batched.LatestIndex()
	must.Eq(t, 0, idx, must.Sprint("nothing is visible before the commit"))
	must.SliceEmpty(t, batchPub.take())
	b.Commit()
	b.Abort() // a no-op after Commit

	want, err := seq.Dump()
	must.NoError(t, err)
	got, err := batched.Dump()
	must.NoError(t, err)
	must.True(t, reflect.DeepEqual(want, got), must.Sprintf("tables differ:\nwant %v\n got %v", want, got))
	wantCounts, _ := seq.BacklogCounts()
	gotCounts, _ := batched.BacklogCounts()
	must.Eq(t, wantCounts, gotCounts)
	must.Eq(t, seqPub.take(), batchPub.take())
}

// A failed entry ends the batch: later entries are refused, committing
// panics, and aborting leaves the store as it was.
func TestWriteBatch_FailedEntryAbortsAll(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertNode(5, mockNode()))
	writes := newBatchInputs().writes()
	b := s.BeginWriteBatch()
	must.NoError(t, b.Apply(10, writes[0]))
	boom := errors.New("boom")
	must.ErrorIs(t, b.Apply(11, func(tx *Txn) error {
		if err := writes[1](tx); err != nil {
			return err
		}
		return boom
	}), boom)
	must.Error(t, b.Apply(12, writes[3]))
	must.Panic(t, b.Commit)
	b.Abort()

	idx, _ := s.LatestIndex()
	must.Eq(t, 5, idx)
	jobs, _ := s.Jobs(nil, structs.AllNamespaces)
	must.SliceEmpty(t, jobs)
	// The writer lock is free again.
	must.NoError(t, s.UpsertNode(6, mockNode()))
}

// Indexes must increase within a batch, and be above zero.
func TestWriteBatch_IndexesIncrease(t *testing.T) {
	s := testStore(t)
	b := s.BeginWriteBatch()
	defer b.Abort()
	must.Error(t, b.Apply(0, func(*Txn) error { return nil }))

	b2 := testStore(t).BeginWriteBatch()
	defer b2.Abort()
	must.NoError(t, b2.Apply(7, func(*Txn) error { return nil }))
	must.Error(t, b2.Apply(7, func(*Txn) error { return nil }))
}
