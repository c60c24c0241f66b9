package state

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// mustLiveRowsMatchIndex checks the derived rows against the allocs
// table: for every node with allocs, the row holds exactly what the node
// index walk returns (the same objects, in the same order), and no row
// exists without live allocs.
func mustLiveRowsMatchIndex(t *testing.T, s *StateStore, step string) {
	t.Helper()
	txn := s.db.Txn(false)
	all, err := get(txn, nil, TableAllocs, indexID)
	must.NoError(t, err)
	nodes := map[string]bool{}
	for _, a := range collect[structs.Allocation](all, nil) {
		nodes[a.NodeID] = true
	}
	for nodeID := range nodes {
		want, err := allocsByNodeTerminal(txn, nil, nodeID, false)
		must.NoError(t, err)
		got, err := s.AllocsByNodeTerminal(nil, nodeID, false)
		must.NoError(t, err)
		if !slices.Equal(want, got) {
			t.Fatalf("%s: node %s: derived live allocs %v, index walk %v", step, nodeID, allocIDs(got), allocIDs(want))
		}
		must.Eq(t, len(got), cap(got), must.Sprintf("%s: node %s: a stored list must have no spare capacity", step, nodeID))

		every, err := allocsByNode(txn, nil, nodeID)
		must.NoError(t, err)
		wantIndexes, wantNewest := map[string]uint64{}, uint64(0)
		for _, a := range every {
			wantIndexes[a.ID] = a.AllocModifyIndex
			wantNewest = max(wantNewest, a.AllocModifyIndex)
		}
		gotIndexes, gotNewest, err := s.ClientAllocIndexes(nodeID)
		must.NoError(t, err)
		must.Eq(t, wantIndexes, gotIndexes, must.Sprintf("%s: node %s: client alloc indexes", step, nodeID))
		must.Eq(t, wantNewest, gotNewest, must.Sprintf("%s: node %s: newest alloc index", step, nodeID))
	}
	rows, err := get(txn, nil, TableNodeLiveAllocs, indexID)
	must.NoError(t, err)
	for _, r := range collect[nodeLiveAllocs](rows, nil) {
		must.True(t, len(r.Allocs) > 0, must.Sprintf("%s: node %s has an empty row", step, r.NodeID))
		must.True(t, nodes[r.NodeID], must.Sprintf("%s: row of node %s without allocs", step, r.NodeID))
	}
}

func allocIDs(allocs []*structs.Allocation) []string {
	out := make([]string, len(allocs))
	for i, a := range allocs {
		out[i] = a.ID
	}
	return out
}

// TestNodeLiveAllocs_MatchIndexAfterRandomWrites drives a store through
// random placements, server-side stops, client updates (to terminal and
// not), desired transitions, node changes, moves of an alloc between
// nodes, garbage collection and batches of entries in one transaction,
// and checks the derived rows after every step and after a snapshot and
// restore.
func TestNodeLiveAllocs_MatchIndexAfterRandomWrites(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			s := testStore(t)
			nodes := make([]*structs.Node, 6)
			for i := range nodes {
				nodes[i] = mockNode()
				must.NoError(t, s.UpsertNode(1, nodes[i]))
			}
			job := registered(t, s, 2, mockJob())
			index := uint64(3)
			var ids []string
			pick := func() *structs.Allocation {
				for len(ids) > 0 {
					i := rng.IntN(len(ids))
					a, err := s.AllocByID(nil, ids[i])
					must.NoError(t, err)
					if a != nil {
						return a
					}
					ids = slices.Delete(ids, i, i+1)
				}
				return nil
			}
			migrate := true
			clientStatuses := []string{
				structs.AllocClientStatusPending, structs.AllocClientStatusRunning,
				structs.AllocClientStatusComplete, structs.AllocClientStatusFailed,
			}
			// step applies one random change as the entry at index.
			step := func(tx *Txn) (string, error) {
				switch op := rng.IntN(9); {
				case op <= 2:
					var placed []*structs.Allocation
					for range 1 + rng.IntN(5) {
						a := mockAlloc(job, nodes[rng.IntN(len(nodes))])
						ids = append(ids, a.ID)
						placed = append(placed, a)
					}
					return "place", tx.UpsertAllocs(placed)
				case op == 3:
					a := pick()
					if a == nil {
						return "none", nil
					}
					c := a.Copy()
					c.DesiredStatus = structs.AllocDesiredStatusStop
					return "stop", tx.UpsertAllocs([]*structs.Allocation{c})
				case op == 4:
					var updates []*structs.Allocation
					for range 1 + rng.IntN(3) {
						if a := pick(); a != nil {
							updates = append(updates, &structs.Allocation{ID: a.ID,
								ClientStatus: clientStatuses[rng.IntN(len(clientStatuses))]})
						}
					}
					return "client update", tx.UpdateAllocsFromClient(updates)
				case op == 5:
					a := pick()
					if a == nil {
						return "none", nil
					}
					return "transition", tx.UpdateAllocsDesiredTransitions(
						map[string]*structs.DesiredTransition{a.ID: {Migrate: &migrate}}, nil)
				case op == 6:
					a := pick()
					if a == nil {
						return "none", nil
					}
					c := a.Copy()
					c.NodeID = nodes[rng.IntN(len(nodes))].ID
					return "move", tx.UpsertAllocs([]*structs.Allocation{c})
				case op == 7:
					n := nodes[rng.IntN(len(nodes))]
					status := structs.NodeStatusReady
					if rng.IntN(2) == 0 {
						status = structs.NodeStatusDown
					}
					return "node status", tx.UpdateNodeStatus(n.ID, status, int64(index), nil)
				default:
					var gc []string
					for range 1 + rng.IntN(3) {
						if a := pick(); a != nil {
							gc = append(gc, a.ID)
						}
					}
					return "gc", tx.DeleteEvals(nil, gc)
				}
			}
			for range 300 {
				if rng.IntN(4) == 0 {
					b := s.BeginWriteBatch()
					var ops []string
					for range 1 + rng.IntN(4) {
						var op string
						must.NoError(t, b.Apply(index, func(tx *Txn) (err error) {
							op, err = step(tx)
							return err
						}))
						ops = append(ops, op)
						index++
					}
					b.Commit()
					mustLiveRowsMatchIndex(t, s, fmt.Sprintf("batch %v at %d", ops, index-1))
					continue
				}
				var op string
				must.NoError(t, s.WithWriteTxn(index, func(tx *Txn) (err error) {
					op, err = step(tx)
					return err
				}))
				mustLiveRowsMatchIndex(t, s, fmt.Sprintf("%s at %d", op, index))
				index++
			}

			var buf bytes.Buffer
			must.NoError(t, s.Snapshot().Persist(&buf))
			restored, err := Restore(&buf, nil)
			must.NoError(t, err)
			mustLiveRowsMatchIndex(t, restored, "restore")
			for _, n := range nodes {
				want, err := s.AllocsByNodeTerminal(nil, n.ID, false)
				must.NoError(t, err)
				got, err := restored.AllocsByNodeTerminal(nil, n.ID, false)
				must.NoError(t, err)
				must.Eq(t, allocIDs(want), allocIDs(got))
			}
		})
	}
}

// TestNodeLiveAllocs_NotPersisted checks that the derived rows add
// nothing to a snapshot: dropping them leaves it the same size (the
// encoding of maps varies in order, not in length), and no snapshot
// record type names their table.
func TestNodeLiveAllocs_NotPersisted(t *testing.T) {
	for _, p := range persistOrder {
		must.NotEq(t, TableNodeLiveAllocs, p.table)
	}
	s := populatedStore(t, 50)
	var with bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&with))
	rows, err := s.db.Txn(false).First(TableNodeLiveAllocs, indexID+"_prefix", "")
	must.NoError(t, err)
	must.NotNil(t, rows)
	must.NoError(t, s.WithWriteTxn(1_000_000, func(tx *Txn) error {
		_, err := tx.txn.DeleteAll(TableNodeLiveAllocs, indexID+"_prefix", "")
		return err
	}))
	rows, err = s.db.Txn(false).First(TableNodeLiveAllocs, indexID+"_prefix", "")
	must.NoError(t, err)
	must.Nil(t, rows)
	var without bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&without))
	must.Eq(t, with.Len(), without.Len())
}

// TestNodeLiveAllocs_WatchWakesOnNodeChange checks that a blocking read
// of a node's live allocs wakes when an alloc on that node changes, and
// not when one on another node does.
func TestNodeLiveAllocs_WatchWakesOnNodeChange(t *testing.T) {
	s := testStore(t)
	node, other := mockNode(), mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	must.NoError(t, s.UpsertNode(2, other))
	job := registered(t, s, 3, mockJob())
	a := mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{a, mockAlloc(job, other)}))

	ws := memdb.NewWatchSet()
	live, err := s.AllocsByNodeTerminal(ws, node.ID, false)
	must.NoError(t, err)
	must.SliceLen(t, 1, live)

	must.NoError(t, s.UpsertAllocs(5, []*structs.Allocation{mockAlloc(job, other)}))
	must.False(t, fired(ws), must.Sprint("a placement on another node woke the watch"))

	must.NoError(t, s.UpdateAllocsFromClient(6, []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete}}))
	must.True(t, fired(ws), must.Sprint("the alloc turning terminal did not wake the watch"))
	live, err = s.AllocsByNodeTerminal(nil, node.ID, false)
	must.NoError(t, err)
	must.SliceEmpty(t, live)
}
