// Package state is the server's in-memory database: every job, node,
// evaluation, allocation and deployment the cluster knows, held in
// go-memdb tables. The FSM is its only writer (one Raft index per write
// transaction); the scheduler, the plan applier, RPC handlers and blocking
// HTTP queries read it through cheap immutable snapshots and watch sets.
//
// Objects in the store are immutable. Writers hand over fresh objects (the
// store takes ownership and stamps their indexes); readers get pointers
// shared with the store and must Copy before changing anything.
package state

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"

	"github.com/opennomad/nomad/structs"
)

// ErrStoreAbandoned is returned to waiters of a store replaced by a
// snapshot restore; they must re-run against the new store.
var ErrStoreAbandoned = errors.New("state store abandoned by a snapshot restore")

// EventPublisher receives the changes of every committed write.
//
// Publish is called by the goroutine that wrote (the FSM's apply goroutine),
// after the commit and outside any store lock, once per write transaction
// that produced events, in commit order. It must return quickly (buffer,
// don't block on subscribers). The events and their payloads are shared
// with the store and must not be modified.
type EventPublisher interface {
	Publish(events *structs.Events)
}

// Config configures a StateStore.
type Config struct {
	// Logger receives warnings about inconsistent input (for example an
	// allocation of a task group its job does not have). Nil discards.
	Logger hclog.Logger
	// Publisher, when set, receives the events of each committed write.
	Publisher EventPublisher
}

// StateStore is the server's state database. All methods are safe for
// concurrent use; writes are serialised by memdb's single writer lock.
type StateStore struct {
	db     *memdb.MemDB
	config Config
	logger hclog.Logger

	// mu guards the two notification channels, made on first use so a
	// snapshot (taken per evaluation) costs no channels.
	mu sync.Mutex
	// abandonCh is closed when a restore replaces this store, so that
	// blocking queries and index waiters holding it wake up.
	abandonCh chan struct{}
	abandoned bool
	// commitCh is closed and forgotten after every commit: a cheap
	// broadcast for SnapshotMinIndex waiters.
	commitCh chan struct{}

	// nodeList caches the last full node listing (see Nodes). It is
	// shared with snapshots: an entry names the tree version it lists.
	nodeList *atomic.Pointer[nodeList]

	// backlog holds the BacklogCounts; every snapshot has its own.
	backlog *backlogTotals

	// intern holds the strings the FSM's writes share (see intern.go);
	// nil in snapshots, whose writes intern nothing.
	intern *internTable
}

// NewStateStore returns an empty store.
func NewStateStore(config *Config) (*StateStore, error) {
	db, err := memdb.NewMemDB(stateSchema())
	if err != nil {
		return nil, fmt.Errorf("creating state database: %w", err)
	}
	var cfg Config
	if config != nil {
		cfg = *config
	}
	return newStore(db, cfg), nil
}

func newStore(db *memdb.MemDB, cfg Config) *StateStore {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &StateStore{
		db:       db,
		config:   cfg,
		logger:   logger.Named("state"),
		nodeList: new(atomic.Pointer[nodeList]),
		backlog:  &backlogTotals{},
		intern:   newInternTable(),
	}
}

// StateSnapshot is a point-in-time copy of the store. Later writes to the
// store are invisible to it. It has every read method of StateStore, and
// its write methods change only the snapshot (the plan applier uses that
// to stack not-yet-committed plans on top of committed state); writes to a
// snapshot publish no events.
type StateSnapshot struct {
	StateStore
}

// Snapshot returns a snapshot of the current state in O(1): memdb's radix
// trees are persistent, so nothing is copied until someone writes.
func (s *StateStore) Snapshot() *StateSnapshot {
	cfg := s.config
	cfg.Publisher = nil
	snap := &StateSnapshot{}
	s.backlog.mu.Lock()
	snap.db = s.db.Snapshot()
	snap.backlog = &backlogTotals{c: s.backlog.c}
	s.backlog.mu.Unlock()
	snap.config = cfg
	snap.logger = s.logger
	snap.nodeList = s.nodeList
	return snap
}

// SnapshotMinIndex waits until the store has applied index, then returns
// a snapshot. It wakes on commits rather than polling. It returns an error
// when ctx ends first or the store is abandoned by a restore (the caller
// then retries against the new store).
func (s *StateStore) SnapshotMinIndex(ctx context.Context, index uint64) (*StateSnapshot, error) {
	for {
		// Take the channel before reading the index, so a commit landing
		// between the two still wakes us.
		ch := s.commitNotify()
		latest, err := s.LatestIndex()
		if err != nil {
			return nil, err
		}
		if latest >= index {
			return s.Snapshot(), nil
		}
		select {
		case <-ch:
		case <-s.AbandonCh():
			return nil, fmt.Errorf("waiting for state index %d (at %d): %w", index, latest, ErrStoreAbandoned)
		case <-ctx.Done():
			return nil, fmt.Errorf("timed out waiting for state index %d (at %d): %w", index, latest, ctx.Err())
		}
	}
}

func (s *StateStore) commitNotify() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.commitCh == nil {
		s.commitCh = make(chan struct{})
	}
	return s.commitCh
}

func (s *StateStore) notifyCommit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.commitCh != nil {
		close(s.commitCh)
		s.commitCh = nil
	}
}

// Abandon marks the store as replaced by a restore: AbandonCh closes and
// blocked readers wake. Calling it more than once is harmless.
func (s *StateStore) Abandon() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.abandoned {
		return
	}
	s.abandoned = true
	if s.abandonCh == nil {
		s.abandonCh = make(chan struct{})
	}
	close(s.abandonCh)
}

// AbandonCh is closed when the store is abandoned.
func (s *StateStore) AbandonCh() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.abandonCh == nil {
		s.abandonCh = make(chan struct{})
	}
	return s.abandonCh
}

// LatestIndex returns the highest Raft index applied to any table.
func (s *StateStore) LatestIndex() (uint64, error) {
	return latestIndex(s.db.Txn(false))
}

func latestIndex(txn *memdb.Txn) (uint64, error) {
	it, err := txn.Get(TableIndex, indexID)
	if err != nil {
		return 0, fmt.Errorf("reading index table: %w", err)
	}
	var max uint64
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if v := raw.(*IndexEntry).Value; v > max {
			max = v
		}
	}
	return max, nil
}

// Index returns the Raft index of the last write to table, 0 if never
// written. List queries report it as the index they reflect.
func (s *StateStore) Index(table string) (uint64, error) {
	return tableIndex(s.db.Txn(false), table)
}

func tableIndex(txn *memdb.Txn, table string) (uint64, error) {
	raw, err := txn.First(TableIndex, indexID, table)
	if err != nil {
		return 0, fmt.Errorf("reading index of table %q: %w", table, err)
	}
	if raw == nil {
		return 0, nil
	}
	return raw.(*IndexEntry).Value, nil
}

// Indexes returns every row of the index table, sorted by table name.
func (s *StateStore) Indexes() ([]*IndexEntry, error) {
	it, err := s.db.Txn(false).Get(TableIndex, indexID)
	if err != nil {
		return nil, fmt.Errorf("reading index table: %w", err)
	}
	var out []*IndexEntry
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*IndexEntry))
	}
	return out, nil
}

// WithWriteTxn runs fn in one write transaction at the Raft index: every
// write fn makes commits together, or none does when fn returns an error.
// This is how one Raft entry that carries several changes (a job and its
// evaluation, a plan's allocations, evaluations and deployment) applies
// atomically. After the commit, waiters of SnapshotMinIndex and blocking
// queries wake, and the publisher, if any, receives the events.
//
// fn must not keep tx after returning, and must not call other write
// methods of the store (memdb has one writer lock; that would deadlock).
// A WriteBatch runs several entries' functions, each as it would run
// here, in one memdb transaction.
func (s *StateStore) WithWriteTxn(index uint64, fn func(tx *Txn) error) error {
	if index == 0 {
		return errors.New("state write: raft index must be > 0")
	}
	mtx := s.db.Txn(true)
	defer mtx.Abort() // a no-op after Commit; releases the lock on error or panic
	tx, err := s.runEntry(mtx, index, fn)
	if err != nil {
		return err
	}
	s.commit(mtx, tx.backlog)
	if s.config.Publisher != nil && len(tx.events) > 0 {
		s.config.Publisher.Publish(&structs.Events{Index: index, Events: tx.events})
	}
	return nil
}

// runEntry runs fn as the write transaction of the entry at index on
// mtx, then writes the index rows of what it touched.
func (s *StateStore) runEntry(mtx *memdb.Txn, index uint64, fn func(tx *Txn) error) (*Txn, error) {
	tx := &Txn{txn: mtx, index: index, logger: s.logger, intern: s.intern}
	if err := fn(tx); err != nil {
		return nil, err
	}
	if err := tx.writeTableIndexes(); err != nil {
		return nil, err
	}
	return tx, nil
}

// commit commits mtx with the backlog counts it changed, so that a
// snapshot sees both or neither, and wakes SnapshotMinIndex waiters.
func (s *StateStore) commit(mtx *memdb.Txn, backlog BacklogCounts) {
	s.backlog.mu.Lock()
	s.backlog.c.add(backlog, +1)
	mtx.Commit()
	s.backlog.mu.Unlock()
	s.notifyCommit()
}
