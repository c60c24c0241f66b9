package state

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// BacklogCounts are the totals the leader's backlog measurement needs,
// kept by every write transaction as it changes summaries and evals, so
// that reading them costs nothing instead of a scan of every job and
// every pending evaluation. They are derived state: not in Raft
// snapshots, recounted by Restore.
type BacklogCounts struct {
	// Queued is the sum of every job summary's Queued.
	Queued int
	// Starting is the sum of every job summary's Starting.
	Starting int
	// Pending counts the pending evaluations that are not the core
	// scheduler's and have no WaitUntil (those are listed by
	// DelayedEvals, as only the time of reading tells whether they
	// still wait).
	Pending int
}

func (c *BacklogCounts) add(d BacklogCounts, sign int) {
	c.Queued += sign * d.Queued
	c.Starting += sign * d.Starting
	c.Pending += sign * d.Pending
}

// summaryCounts is what a summary adds to the counts.
func summaryCounts(s *structs.JobSummary) BacklogCounts {
	var c BacklogCounts
	if s == nil {
		return c
	}
	for _, tg := range s.Summary {
		c.Queued += tg.Queued
		c.Starting += tg.Starting
	}
	return c
}

// evalCounts is what an eval adds to the counts.
func evalCounts(e *structs.Evaluation) BacklogCounts {
	if e != nil && evalClass(e) == evalClassNow && e.Status == structs.EvalStatusPending {
		return BacklogCounts{Pending: 1}
	}
	return BacklogCounts{}
}

// Classes of waiting (pending or blocked) evals in the evals' status
// index, so that the backlog reads the oldest of each without a scan.
const (
	evalClassNow   = "now"   // to be scheduled as soon as a worker is free
	evalClassDelay = "delay" // pending with a WaitUntil
	evalClassCore  = "core"  // the core scheduler's (garbage collection)
)

func evalClass(e *structs.Evaluation) string {
	switch {
	case e.Type == structs.JobTypeCore:
		return evalClassCore
	case !e.WaitUntil.IsZero():
		return evalClassDelay
	}
	return evalClassNow
}

// createdAt is an eval's CreateTime as an index key. Unknown times (0 or
// less) sort last: an eval of unknown age has waited for no known time,
// so it must not hide the oldest known one.
func createdAt(e *structs.Evaluation) uint64 {
	if e.CreateTime <= 0 {
		return math.MaxUint64
	}
	return uint64(e.CreateTime)
}

// countSummary records the change of one summary from old to new (either
// may be nil) in the transaction's counts.
func (tx *Txn) countSummary(old, new *structs.JobSummary) {
	tx.backlog.add(summaryCounts(new), +1)
	tx.backlog.add(summaryCounts(old), -1)
}

// countEval records the change of one eval from old to new (either may
// be nil) in the transaction's counts.
func (tx *Txn) countEval(old, new *structs.Evaluation) {
	tx.backlog.add(evalCounts(new), +1)
	tx.backlog.add(evalCounts(old), -1)
}

// backlogTotals holds a store's BacklogCounts. A writer adds its
// transaction's change and commits under mu, and Snapshot copies the
// totals and the database under mu, so a snapshot's totals are those of
// its data. Kept beside the database rather than as a row in it: a row
// would cost a tree write in nearly every transaction.
type backlogTotals struct {
	mu sync.Mutex
	c  BacklogCounts
}

func (b *backlogTotals) get() BacklogCounts {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.c
}

// recountBacklog counts from every summary and pending eval, for a store
// restored from a snapshot.
func recountBacklog(txn *memdb.Txn) (BacklogCounts, error) {
	var c BacklogCounts
	it, err := txn.Get(TableJobSummary, indexID)
	if err != nil {
		return c, fmt.Errorf("reading job summaries: %w", err)
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		c.add(summaryCounts(raw.(*structs.JobSummary)), +1)
	}
	it, err = txn.Get(TableEvals, indexStatus, structs.EvalStatusPending, evalClassNow)
	if err != nil {
		return c, fmt.Errorf("reading pending evals: %w", err)
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		c.add(evalCounts(raw.(*structs.Evaluation)), +1)
	}
	return c, nil
}

// BacklogCounts returns the store's backlog totals.
func (s *StateStore) BacklogCounts() (BacklogCounts, error) {
	return s.backlog.get(), nil
}

// OldestPendingEval returns the pending eval of class "now" created
// first, nil when there is none.
func (s *StateStore) OldestPendingEval() (*structs.Evaluation, error) {
	raw, err := first(s.db.Txn(false), nil, TableEvals, indexStatus, structs.EvalStatusPending, evalClassNow)
	if err != nil || raw == nil {
		return nil, err
	}
	return raw.(*structs.Evaluation), nil
}

// DelayedEvals returns the pending evals with a WaitUntil (the core
// scheduler's excepted), oldest first.
func (s *StateStore) DelayedEvals() ([]*structs.Evaluation, error) {
	it, err := get(s.db.Txn(false), nil, TableEvals, indexStatus, structs.EvalStatusPending, evalClassDelay)
	if err != nil {
		return nil, err
	}
	return collect[structs.Evaluation](it, nil), nil
}

// waitingEvalIndex is the evals' status index: a pending or blocked eval
// under (Status, class, CreateTime), built as one key in one allocation
// (a memdb.CompoundIndex of three fields makes four on every write of a
// waiting eval). Lookups give the status, or the status and the class;
// memdb scans every key they prefix, in CreateTime order.
type waitingEvalIndex struct{}

// FromObject implements memdb.SingleIndexer.
func (waitingEvalIndex) FromObject(obj interface{}) (bool, []byte, error) {
	e, ok := obj.(*structs.Evaluation)
	if !ok {
		return false, nil, fmt.Errorf("eval status index got %T", obj)
	}
	status := waitingEvalStatus(e)
	if status == "" {
		return false, nil, nil
	}
	class := evalClass(e)
	key := make([]byte, 0, len(status)+len(class)+10)
	key = append(append(key, status...), 0)
	key = append(append(key, class...), 0)
	return true, binary.BigEndian.AppendUint64(key, createdAt(e)), nil
}

// FromArgs implements memdb.Indexer: a status, and optionally a class.
func (waitingEvalIndex) FromArgs(args ...interface{}) ([]byte, error) {
	if len(args) < 1 || len(args) > 2 {
		return nil, fmt.Errorf("eval status index takes a status and a class, got %d arguments", len(args))
	}
	var key []byte
	for _, a := range args {
		v, ok := a.(string)
		if !ok {
			return nil, fmt.Errorf("eval status index argument must be a string, got %T", a)
		}
		key = append(append(key, v...), 0)
	}
	return key, nil
}
