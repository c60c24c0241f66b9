package planapply_test

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/planapply/planapplytest"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
)

// TestPlanApplier_PlanEval: the eval a plan carries goes into its Raft
// entry, and the answer says it was written, only when the plan commits
// whole and every server writes such evals; otherwise the entry only
// touches the eval, as before, and the scheduler writes it itself. An
// eval that is not the plan's own is refused with nothing sent to Raft.
func TestPlanApplier_PlanEval(t *testing.T) {
	cases := []struct {
		name    string
		open    bool
		noEval  bool
		partial bool
		edit    func(plan *structs.Plan, other *structs.Evaluation)
		// wantInvalid: refused before Raft; else wantFolded says whether
		// the entry carries the eval.
		wantInvalid bool
		wantFolded  bool
	}{
		{name: "gate open, whole commit: written with the plan", open: true, wantFolded: true},
		{name: "gate closed: an older server would not write it", open: false},
		{name: "gate open, no eval in the plan", open: true, noEval: true},
		{name: "gate open, a node refused: the scheduler plans again", open: true, partial: true},
		{name: "another eval than the plan's", open: true, wantInvalid: true,
			edit: func(p *structs.Plan, other *structs.Evaluation) { p.Eval = other.Copy() }},
		{name: "the plan's eval ID on another job", open: true, wantInvalid: true,
			edit: func(p *structs.Plan, other *structs.Evaluation) { p.Eval.JobID = other.JobID }},
		{name: "another namespace", open: false, wantInvalid: true,
			edit: func(p *structs.Plan, _ *structs.Evaluation) { p.Eval.Namespace = "elsewhere" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := statetest.NewStore(t)
			raft := planapplytest.NewManualRaft(t, s)
			h := newApplierHarness(t, s, raft, 1, raft.FailQueued, func(cfg *planapply.Config) {
				cfg.PlanEvals = func() bool { return c.open }
			})
			good, full, j := s.Node(), s.Node(), s.Job()
			other := s.Eval(s.Job())
			b := h.newPlan(j).Place(statetest.SizedAlloc(j, good, 500))
			if c.partial {
				s.Alloc(j, full, 3500)
				b.Place(statetest.SizedAlloc(j, full, 500))
			}
			plan := b.Build()
			stored, err := s.StateStore().EvalByID(nil, plan.EvalID)
			must.NoError(t, err)
			if !c.noEval {
				plan.Eval = stored.Copy()
				plan.Eval.Status = structs.EvalStatusComplete
				plan.Eval.QueuedAllocations = map[string]int{"web": 0}
			}
			if c.edit != nil {
				c.edit(plan, other)
			}

			f := h.submit(plan)
			if c.wantInvalid {
				_, err := answer(t, f)
				must.True(t, errors.Is(err, structs.ErrInvalid), must.Sprintf("error %v", err))
				must.Zero(t, raft.Dispatched())
				return
			}
			raft.WaitDispatched(1)
			req := raft.Request(0)
			must.Eq(t, plan.EvalID, req.EvalID)
			if c.wantFolded {
				must.Eq(t, plan.Eval, req.Eval)
			} else {
				must.Nil(t, req.Eval)
			}
			raft.Commit()
			r, err := answer(t, f)
			must.NoError(t, err)
			must.Eq(t, c.wantFolded, r.EvalWritten)
			must.Eq(t, c.partial, r.RefreshIndex != 0)

			got, err := s.StateStore().EvalByID(nil, plan.EvalID)
			must.NoError(t, err)
			must.Eq(t, r.AllocIndex, got.ModifyIndex)
			want := stored.Status
			if c.wantFolded {
				want = structs.EvalStatusComplete
			}
			must.Eq(t, want, got.Status)
		})
	}
}
