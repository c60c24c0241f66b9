package state

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestSnapshot_Isolation(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := registered(t, s, 2, mockJob())
	a := mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{a}))

	snap := s.Snapshot()

	// Every kind of later write, to the store.
	must.NoError(t, s.UpdateNodeStatus(4, node.ID, structs.NodeStatusDown, 9, nil))
	must.NoError(t, s.UpsertNode(5, mockNode()))
	must.NoError(t, s.UpdateAllocsFromClient(6, []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusFailed}}))
	must.NoError(t, s.UpsertEvals(7, []*structs.Evaluation{mockEval(job)}))
	must.NoError(t, s.DeleteJob(8, job.Namespace, job.ID))

	n, _ := snap.NodeByID(nil, node.ID)
	must.Eq(t, structs.NodeStatusReady, n.Status)
	nodes, _ := snap.Nodes(nil)
	must.Len(t, 1, nodes)
	sa, _ := snap.AllocByID(nil, a.ID)
	must.Eq(t, structs.AllocClientStatusPending, sa.ClientStatus)
	sj, _ := snap.JobByID(nil, job.Namespace, job.ID)
	must.NotNil(t, sj)
	evals, _ := snap.EvalsByJob(nil, job.Namespace, job.ID)
	must.Len(t, 0, evals)
	idx, _ := snap.LatestIndex()
	must.Eq(t, 3, idx)

	// And the other way round: writes to the snapshot stay there.
	must.NoError(t, snap.UpsertNode(100, mockNode()))
	storeNodes, _ := s.Nodes(nil)
	must.Len(t, 2, storeNodes)
	latest, _ := s.LatestIndex()
	must.Eq(t, 8, latest)
}

// Objects read from the store are shared with it; a reader that copies
// and edits one changes nothing stored, and a writer's new object
// replaces the stored one instead of editing it.
func TestSnapshot_CopyOnWrite(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := registered(t, s, 2, mockJob())
	a := mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{a}))

	before, _ := s.AllocByID(nil, a.ID)
	edited := before.Copy()
	edited.ClientStatus = structs.AllocClientStatusFailed
	edited.TaskStates = map[string]*structs.TaskState{"x": {State: "dead"}}
	after, _ := s.AllocByID(nil, a.ID)
	must.Eq(t, structs.AllocClientStatusPending, after.ClientStatus)
	must.Nil(t, after.TaskStates)

	snap := s.Snapshot()
	held, _ := snap.AllocByID(nil, a.ID)
	must.NoError(t, s.UpdateAllocsFromClient(4, []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning}}))
	// The object the reader holds was not edited in place by the write.
	must.Eq(t, structs.AllocClientStatusPending, held.ClientStatus)
	must.Eq(t, 3, held.ModifyIndex)

	heldNode, _ := s.NodeByID(nil, node.ID)
	must.NoError(t, s.UpdateNodeStatus(5, node.ID, structs.NodeStatusDown, 1, structs.NewNodeEvent("x", "y", time.Unix(1, 0))))
	must.Eq(t, structs.NodeStatusReady, heldNode.Status)
	must.Len(t, 1, heldNode.Events)

	heldJob, _ := s.JobByID(nil, job.Namespace, job.ID)
	heldStatus := heldJob.Status
	must.NoError(t, s.UpsertEvals(6, []*structs.Evaluation{mockEval(job)}))
	must.Eq(t, heldStatus, heldJob.Status)
}

func TestSnapshotMinIndex(t *testing.T) {
	t.Run("already there", func(t *testing.T) {
		s := testStore(t)
		must.NoError(t, s.UpsertNode(5, mockNode()))
		snap, err := s.SnapshotMinIndex(context.Background(), 5)
		must.NoError(t, err)
		idx, _ := snap.LatestIndex()
		must.Eq(t, 5, idx)
	})

	t.Run("waits for the write", func(t *testing.T) {
		s := testStore(t)
		must.NoError(t, s.UpsertNode(1, mockNode()))
		type result struct {
			snap *StateSnapshot
			err  error
		}
		done := make(chan result, 1)
		go func() {
			snap, err := s.SnapshotMinIndex(context.Background(), 3)
			done <- result{snap, err}
		}()
		// An earlier index wakes the waiter, which must keep waiting.
		must.NoError(t, s.UpsertNode(2, mockNode()))
		select {
		case r := <-done:
			t.Fatalf("returned before index 3: %v", r.err)
		default:
		}
		must.NoError(t, s.UpsertNode(3, mockNode()))
		r := <-done
		must.NoError(t, r.err)
		nodes, _ := r.snap.Nodes(nil)
		must.Len(t, 3, nodes)
	})

	t.Run("cancelled", func(t *testing.T) {
		s := testStore(t)
		ctx, cancel := context.WithCancel(context.Background())
		errCh := make(chan error, 1)
		go func() {
			_, err := s.SnapshotMinIndex(ctx, 10)
			errCh <- err
		}()
		cancel()
		err := <-errCh
		must.True(t, errors.Is(err, context.Canceled))
		must.ErrorContains(t, err, "waiting for state index 10")
	})

	t.Run("abandoned", func(t *testing.T) {
		s := testStore(t)
		errCh := make(chan error, 1)
		go func() {
			_, err := s.SnapshotMinIndex(context.Background(), 10)
			errCh <- err
		}()
		s.Abandon()
		s.Abandon() // idempotent
		must.True(t, errors.Is(<-errCh, ErrStoreAbandoned))
	})
}
