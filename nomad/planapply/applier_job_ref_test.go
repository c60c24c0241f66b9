package planapply_test

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/planapply/planapplytest"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
)

// TestPlanApplier_JobRefs: while the version gate is closed a result
// carries its job; once every server understands references it names
// the stored version instead, and commits the same allocs. A plan whose
// job version is gone by the time it is judged is refused, not
// committed.
func TestPlanApplier_JobRefs(t *testing.T) {
	cases := []struct {
		name   string
		open   bool
		purge  bool
		wantOK bool
	}{
		{name: "gate closed: the job carried", open: false, wantOK: true},
		{name: "gate open: the job named", open: true, wantOK: true},
		{name: "gate open, the job purged before the plan is judged", open: true, purge: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := statetest.NewStore(t)
			raft := planapplytest.NewManualRaft(t, s)
			asked := 0
			h := newApplierHarness(t, s, raft, 1, raft.FailQueued, func(cfg *planapply.Config) {
				cfg.JobRefs = func() bool { asked++; return c.open }
			})
			n, j := s.Node(), s.Job()
			plan := h.newPlan(j).Place(statetest.SizedAlloc(j, n, 500)).Build()
			if c.purge {
				s.MustWrite(func(tx *state.Txn) error { return tx.DeleteJob(j.Namespace, j.ID) })
			}

			f := h.submit(plan)
			if !c.wantOK {
				_, err := answer(t, f)
				must.True(t, errors.Is(err, structs.ErrNotFound), must.Sprintf("error %v", err))
				must.Eq(t, 0, raft.Dispatched(), must.Sprint("nothing sent to Raft"))
				return
			}
			raft.WaitDispatched(1)
			req := raft.Request(0)
			if c.open {
				must.Nil(t, req.Job)
				must.Eq(t, j.VersionRef(), req.JobRef)
			} else {
				must.Eq(t, j.ID, req.Job.ID)
				must.Nil(t, req.JobRef)
			}
			raft.Commit()
			_, err := answer(t, f)
			must.NoError(t, err)
			live, err := s.StateStore().AllocsByNodeTerminal(nil, n.ID, false)
			must.NoError(t, err)
			must.Len(t, 1, live)
			must.Eq(t, j.JobModifyIndex, live[0].Job.JobModifyIndex)
			must.Eq(t, 1, asked)
		})
	}
}
