package state

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// WriteBatch applies consecutive Raft entries in one memdb write
// transaction. Each entry still gets its own Txn, at its own index, with
// its own touched tables, alloc nodes, summaries and events, exactly as
// WithWriteTxn would give it; only the memdb transaction underneath is
// shared. That makes the batch's commit leave the state that committing
// the entries one by one would have left:
//
//   - an entry reads what the entries before it wrote (they are in the
//     same memdb transaction), as it would after their commits;
//   - the table index rows (and node_alloc_index rows) of each entry are
//     written when the entry ends, so a later entry of the batch
//     overwrites them as its later commit would have;
//   - the events of each entry are published after the commit, one
//     Publish per entry with the entry's index, in entry order.
//
// What a batch saves is the per-transaction cost of memdb and its radix
// trees: each write transaction copies the path from every touched index
// root and builds a cache of the nodes it wrote, which a batch does once
// for all its entries.
//
// A batch cannot undo one entry. When an entry's function fails, Apply
// returns its error and the batch is done: the caller must Abort it (no
// entry of it commits) and, to get the sequential outcome, apply the
// entries again one by one. A WriteBatch holds memdb's writer lock from
// BeginWriteBatch to Commit or Abort and is used by one goroutine.
type WriteBatch struct {
	s      *StateStore
	txn    *memdb.Txn
	last   uint64
	n      int
	failed bool
	done   bool
	// events holds each applied entry's events, in entry order.
	events  []*structs.Events
	backlog BacklogCounts
}

// BeginWriteBatch opens a batch; it takes memdb's writer lock.
func (s *StateStore) BeginWriteBatch() *WriteBatch {
	return &WriteBatch{s: s, txn: s.db.Txn(true)}
}

// errBatchFailed refuses entries after one failed.
var errBatchFailed = errors.New("state write batch: an earlier entry failed; abort the batch")

// Apply runs fn as the write transaction of the entry at index, inside the
// batch. index must be above the previous entry's. On error nothing of the
// batch may commit: the caller aborts it.
func (b *WriteBatch) Apply(index uint64, fn func(tx *Txn) error) error {
	switch {
	case b.done:
		return errors.New("state write batch: already committed or aborted")
	case b.failed:
		return errBatchFailed
	case index == 0:
		b.failed = true
		return errors.New("state write: raft index must be > 0")
	case index <= b.last:
		b.failed = true
		return fmt.Errorf("state write batch: index %d after %d", index, b.last)
	}
	tx, err := b.s.runEntry(b.txn, index, fn)
	if err != nil {
		b.failed = true
		return err
	}
	b.last = index
	b.n++
	b.backlog.add(tx.backlog, +1)
	if len(tx.events) > 0 {
		b.events = append(b.events, &structs.Events{Index: index, Events: tx.events})
	}
	return nil
}

// Len is the number of entries applied so far.
func (b *WriteBatch) Len() int { return b.n }

// Commit makes every entry applied visible at once, wakes waiters, and
// publishes each entry's events in order. It must not follow a failed
// Apply (it panics: committing part of an entry would diverge).
func (b *WriteBatch) Commit() {
	if b.failed {
		panic("state write batch: commit after a failed entry")
	}
	if b.done {
		return
	}
	b.done = true
	b.s.commit(b.txn, b.backlog)
	if p := b.s.config.Publisher; p != nil {
		for _, e := range b.events {
			p.Publish(e)
		}
	}
}

// Abort discards every entry of the batch and releases the writer lock.
// It is a no-op after Commit, so it can be deferred.
func (b *WriteBatch) Abort() {
	if b.done {
		return
	}
	b.done = true
	b.txn.Abort()
}
