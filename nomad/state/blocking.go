package state

import (
	"context"

	"github.com/hashicorp/go-memdb"
)

// QueryFunc is one run of a blocking query against store. It reads what
// it needs, registering in ws (through the read methods' WatchSet
// argument) everything whose change should re-run it, and returns the
// Raft index its result reflects: the object's ModifyIndex for a single
// object that exists, else the index of the table read (Index).
type QueryFunc func(ws memdb.WatchSet, store *StateStore) (uint64, error)

// BlockingQuery runs query until its result reflects an index greater
// than minIndex, and returns that index. It is what HTTP and RPC reads
// with ?index= use:
//
//   - minIndex 0 runs the query once;
//   - otherwise, while the index is <= minIndex, it waits for anything
//     in the watch set to change, for the store to be abandoned by a
//     restore (current then returns the new store), or for ctx to end,
//     and runs the query again;
//   - when ctx ends (the wait time passed) it returns the last run's
//     index and no error: a blocking query answers with what it has,
//     and the results query filled in on that run stand.
//
// current returns the store to read, and is called again on every run so
// that a query survives a snapshot restore. The index is returned as the
// query reports it, 0 for a table never written, as Nomad does (the api
// package's tests expect 0 from lists of empty tables). query
// runs on the calling goroutine, possibly several times; each run must
// overwrite (not append to) what the previous one filled in.
func BlockingQuery(ctx context.Context, current func() *StateStore, minIndex uint64, query QueryFunc) (uint64, error) {
	for {
		store := current()
		ws := memdb.NewWatchSet()
		ws.Add(store.AbandonCh())
		index, err := query(ws, store)
		if err != nil {
			return 0, err
		}
		if minIndex == 0 || index > minIndex {
			return index, nil
		}
		if err := ws.WatchCtx(ctx); err != nil {
			// ctx ended while waiting: answer with the last run.
			return index, nil
		}
	}
}
