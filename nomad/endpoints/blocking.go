package endpoints

import (
	"context"
	"math/rand/v2"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// blockingQuery runs a read endpoint's query as a blocking query: at once
// when opts.MinQueryIndex is 0, otherwise until the result's index passes
// it or the wait (opts.MaxQueryTime, default structs.DefaultBlockingWait,
// capped at structs.MaxBlockingWait, plus up to 1/16 of it as jitter so
// that many waiters do not return together) runs out on the server's
// clock. It fills meta. query must overwrite the reply on every run.
func blockingQuery(srv Server, opts *structs.QueryOptions, meta *structs.QueryMeta, query state.QueryFunc) error {
	ctx := srv.ShutdownContext()
	if opts.MinQueryIndex > 0 {
		wait := opts.MaxQueryTime
		if wait <= 0 {
			wait = structs.DefaultBlockingWait
		}
		if wait > structs.MaxBlockingWait {
			wait = structs.MaxBlockingWait
		}
		wait += rand.N(wait/16 + 1)
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		t := srv.Clock().AfterFunc(wait, cancel)
		defer t.Stop()
	}
	index, err := state.BlockingQuery(ctx, srv.State, opts.MinQueryIndex, query)
	if err != nil {
		return err
	}
	meta.Index = index
	srv.SetQueryMeta(meta)
	return nil
}

// maxTableIndex returns the highest index among tables, for queries that
// read several.
func maxTableIndex(store *state.StateStore, tables ...string) (uint64, error) {
	var max uint64
	for _, t := range tables {
		idx, err := store.Index(t)
		if err != nil {
			return 0, err
		}
		if idx > max {
			max = idx
		}
	}
	return max, nil
}

// flooredBlockingQuery is blockingQuery for the ACL reads, whose index is
// never below 1, as Nomad floors it there (an empty policy list answers
// index 1), while other reads of an empty table answer 0.
func flooredBlockingQuery(srv Server, opts *structs.QueryOptions, meta *structs.QueryMeta, query state.QueryFunc) error {
	if err := blockingQuery(srv, opts, meta, query); err != nil {
		return err
	}
	meta.Index = max(meta.Index, 1)
	return nil
}
