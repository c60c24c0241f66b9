package state

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestTxn_CompoundIsAtomic(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))

	job := mockJob()
	eval := mockEval(job)
	boom := errors.New("boom")
	ops := []struct {
		name string
		last func(tx *Txn) error
	}{
		{"explicit error", func(*Txn) error { return boom }},
		{"invalid eval", func(tx *Txn) error {
			bad := mockEval(job)
			bad.Status = "nope"
			return tx.UpsertEvals([]*structs.Evaluation{bad})
		}},
		{"unknown node", func(tx *Txn) error {
			return tx.UpdateNodeStatus("missing", structs.NodeStatusDown, 0, nil)
		}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			err := s.WithWriteTxn(2, func(tx *Txn) error {
				must.Eq(t, 2, tx.Index())
				if err := tx.UpsertJob(job.Copy()); err != nil {
					return err
				}
				if err := tx.UpsertEvals([]*structs.Evaluation{eval.Copy()}); err != nil {
					return err
				}
				if err := tx.UpdateNodeStatus(node.ID, structs.NodeStatusDown, 5, nil); err != nil {
					return err
				}
				// Reads in the transaction see its own writes.
				j, err := tx.JobByID(job.Namespace, job.ID)
				must.NoError(t, err)
				must.NotNil(t, j)
				return op.last(tx)
			})
			must.Error(t, err)
			j, _ := s.JobByID(nil, job.Namespace, job.ID)
			must.Nil(t, j)
			e, _ := s.EvalByID(nil, eval.ID)
			must.Nil(t, e)
			n, _ := s.NodeByID(nil, node.ID)
			must.Eq(t, structs.NodeStatusReady, n.Status)
			latest, _ := s.LatestIndex()
			must.Eq(t, 1, latest)
		})
	}

	// The same transaction without the failing op commits everything.
	must.NoError(t, s.WithWriteTxn(2, func(tx *Txn) error {
		if err := tx.UpsertJob(job.Copy()); err != nil {
			return err
		}
		return tx.UpsertEvals([]*structs.Evaluation{eval.Copy()})
	}))
	j, _ := s.JobByID(nil, job.Namespace, job.ID)
	must.NotNil(t, j)
	e, _ := s.EvalByID(nil, eval.ID)
	must.NotNil(t, e)
}

func TestTxn_PanicReleasesWriteLock(t *testing.T) {
	s := testStore(t)
	func() {
		defer func() { _ = recover() }()
		_ = s.WithWriteTxn(1, func(tx *Txn) error { panic("bug") })
	}()
	// A later write still gets the lock.
	must.NoError(t, s.UpsertNode(2, mockNode()))
}

func TestTxn_IndexBookkeeping(t *testing.T) {
	s := testStore(t)
	must.ErrorContains(t, s.UpsertNode(0, mockNode()), "raft index must be > 0")

	node := mockNode()
	must.NoError(t, s.UpsertNode(3, node))
	job := registered(t, s, 5, mockJob())
	must.NoError(t, s.UpsertAllocs(7, []*structs.Allocation{mockAlloc(job, node)}))

	entries, err := s.Indexes()
	must.NoError(t, err)
	got := map[string]uint64{}
	for _, e := range entries {
		got[e.Key] = e.Value
	}
	// The alloc write also moved the job's status (pending -> running)
	// and its summary (Starting); the node's registration created its
	// pool.
	must.Eq(t, map[string]uint64{
		TableNodes: 3, TableNodePools: 3, TableJobVersion: 5,
		TableJobs: 7, TableJobSummary: 7, TableAllocs: 7,
	}, got)
	latest, _ := s.LatestIndex()
	must.Eq(t, 7, latest)
	must.Eq(t, 0, mustIndex(t, s, TableEvals))
}
