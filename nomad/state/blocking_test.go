package state

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// nodeQuery is a blocking "read one node" query as an HTTP handler
// would write it, reporting each run on runs.
func nodeQuery(id string, out **structs.Node, runs chan<- struct{}) QueryFunc {
	return func(ws memdb.WatchSet, s *StateStore) (uint64, error) {
		n, err := s.NodeByID(ws, id)
		if err != nil {
			return 0, err
		}
		*out = n
		if runs != nil {
			runs <- struct{}{}
		}
		if n != nil {
			return n.ModifyIndex, nil
		}
		return s.Index(TableNodes)
	}
}

func TestBlockingQuery_NoMinIndexRunsOnce(t *testing.T) {
	s := testStore(t)
	var n *structs.Node
	idx, err := BlockingQuery(context.Background(), func() *StateStore { return s }, 0, nodeQuery("x", &n, nil))
	must.NoError(t, err)
	must.Eq(t, 0, idx) // the empty table's index, as Nomad answers
	must.Nil(t, n)
}

func TestBlockingQuery_WakesOnWrite(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(5, node))

	var out *structs.Node
	runs := make(chan struct{}, 10)
	type result struct {
		idx uint64
		err error
	}
	done := make(chan result, 1)
	go func() {
		idx, err := BlockingQuery(context.Background(), func() *StateStore { return s }, 5, nodeQuery(node.ID, &out, runs))
		done <- result{idx, err}
	}()
	<-runs // first run saw index 5 and is now waiting

	// A write elsewhere does not wake a query on this node.
	must.NoError(t, s.UpsertNode(6, mockNode()))
	// This one does.
	must.NoError(t, s.UpdateNodeStatus(7, node.ID, structs.NodeStatusDown, 1, nil))
	r := <-done
	must.NoError(t, r.err)
	must.Eq(t, 7, r.idx)
	must.Eq(t, structs.NodeStatusDown, out.Status)
	must.Eq(t, 1, len(runs), must.Sprint("exactly one re-run after the first"))
}

func TestBlockingQuery_TimeoutReturnsLastResult(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(5, node))
	ctx, cancel := context.WithCancel(context.Background())
	var out *structs.Node
	runs := make(chan struct{}, 10)
	done := make(chan uint64, 1)
	go func() {
		// Errors surface as index 0.
		idx, _ := BlockingQuery(ctx, func() *StateStore { return s }, 5, nodeQuery(node.ID, &out, runs))
		done <- idx
	}()
	<-runs
	cancel()
	must.Eq(t, 5, <-done)
	must.Eq(t, node.ID, out.ID)
}

func TestBlockingQuery_SurvivesRestore(t *testing.T) {
	old := testStore(t)
	node := mockNode()
	must.NoError(t, old.UpsertNode(5, node))

	// The server's "current store" pointer, swapped by a restore.
	var current atomic.Pointer[StateStore]
	current.Store(old)

	var out *structs.Node
	runs := make(chan struct{}, 10)
	done := make(chan uint64, 1)
	go func() {
		// Errors surface as index 0.
		idx, _ := BlockingQuery(context.Background(), current.Load, 5, nodeQuery(node.ID, &out, runs))
		done <- idx
	}()
	<-runs

	restored := testStore(t)
	moved := node.Copy()
	moved.Name = "restored"
	must.NoError(t, restored.UpsertNode(9, moved))
	current.Store(restored)
	old.Abandon()

	must.Eq(t, 9, <-done)
	must.Eq(t, "restored", out.Name)
}

func TestBlockingQuery_Error(t *testing.T) {
	s := testStore(t)
	_, err := BlockingQuery(context.Background(), func() *StateStore { return s }, 3,
		func(ws memdb.WatchSet, s *StateStore) (uint64, error) {
			_, err := s.db.Txn(false).Get("nope", "id")
			return 0, err
		})
	must.ErrorContains(t, err, "invalid table")
}
