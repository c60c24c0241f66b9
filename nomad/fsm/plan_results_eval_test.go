package fsm

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestFSM_PlanResultsWithEval: a plan result carrying its eval writes it
// and has the side effects an EvalUpdate of it has (a complete eval
// without failures untracks the job's blocked eval); one without (the
// entries written before structs.MinVersionPlanEval, and every plan
// committed in part) only moves the eval's ModifyIndex, as before.
func TestFSM_PlanResultsWithEval(t *testing.T) {
	cases := []struct {
		name          string
		carried       bool
		failed        bool
		wantStatus    string
		wantUntracked bool
	}{
		{name: "old form: the eval only touched", wantStatus: structs.EvalStatusPending},
		{name: "complete eval written, job untracked", carried: true, wantStatus: structs.EvalStatusComplete, wantUntracked: true},
		{name: "complete eval with failures keeps the blocked eval", carried: true, failed: true, wantStatus: structs.EvalStatusComplete},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, fx := newTestFSM(t)
			node, job := mock.Node(), mock.Job(mock.Count(1))
			mustApply(t, f, 10, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
			mustApply(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
			stored, err := f.State().JobByID(nil, job.Namespace, job.ID)
			must.NoError(t, err)
			e := mock.Eval(mock.EvalForJob(stored))
			mustApply(t, f, 12, structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{e}})
			fx.enqueued, fx.untracked = nil, nil

			a := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
			a.EvalID = e.ID
			req := &structs.ApplyPlanResultsRequest{
				AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{a}},
				EvalID:             e.ID,
			}
			if tc.carried {
				final := e.Copy()
				final.Status = structs.EvalStatusComplete
				final.QueuedAllocations = map[string]int{a.TaskGroup: 0}
				if tc.failed {
					final.FailedTGAllocs = map[string]*structs.AllocMetric{a.TaskGroup: {NodesEvaluated: 1}}
				}
				req.Eval = final
			}
			mustApply(t, f, 13, structs.ApplyPlanResultsRequestType, req)

			got, err := f.State().EvalByID(nil, e.ID)
			must.NoError(t, err)
			must.Eq(t, tc.wantStatus, got.Status)
			must.Eq(t, 13, got.ModifyIndex)
			must.Eq(t, 12, got.CreateIndex)
			placed, err := f.State().AllocByID(nil, a.ID)
			must.NoError(t, err)
			must.NotNil(t, placed)
			must.Eq(t, tc.wantUntracked, len(fx.untracked) == 1)
			must.SliceEmpty(t, fx.enqueued)
		})
	}
}

// TestFSM_PlanResultsWithAnotherEval: an entry whose eval is not its own
// is refused with nothing written.
func TestFSM_PlanResultsWithAnotherEval(t *testing.T) {
	f, fx := newTestFSM(t)
	node, job, other := mock.Node(), mock.Job(mock.Count(1)), mock.Job(mock.Count(1))
	mustApply(t, f, 10, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	mustApply(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	mustApply(t, f, 12, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: other})
	stored, _ := f.State().JobByID(nil, job.Namespace, job.ID)
	e, foreign := mock.Eval(mock.EvalForJob(stored)), mock.Eval(mock.EvalForJob(other))
	mustApply(t, f, 13, structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{e, foreign}})
	fx.untracked = nil

	final := foreign.Copy()
	final.Status = structs.EvalStatusComplete
	a := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
	mustFail(t, f, 14, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{a}},
		EvalID:             e.ID,
		Eval:               final,
	})
	must.SliceEmpty(t, fx.untracked)
	got, _ := f.State().EvalByID(nil, foreign.ID)
	must.Eq(t, structs.EvalStatusPending, got.Status)
}
