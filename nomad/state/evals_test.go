package state

import (
	"errors"
	"slices"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestEvals_UpsertAndIndexes(t *testing.T) {
	s := testStore(t)
	job := registered(t, s, 1, mockJob())
	ev := mockEval(job)
	must.NoError(t, s.UpsertEvals(2, []*structs.Evaluation{ev}))

	out, err := s.EvalByID(nil, ev.ID)
	must.NoError(t, err)
	must.Eq(t, 2, out.CreateIndex)
	must.Eq(t, 2, out.ModifyIndex)
	must.Eq(t, 2, mustIndex(t, s, TableEvals))

	upd := ev.Copy()
	upd.Status = structs.EvalStatusComplete
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{upd}))
	out, _ = s.EvalByID(nil, ev.ID)
	must.Eq(t, 2, out.CreateIndex)
	must.Eq(t, 3, out.ModifyIndex)
	must.Eq(t, structs.EvalStatusComplete, out.Status)

	// An empty batch touches nothing.
	must.NoError(t, s.UpsertEvals(4, nil))
	must.Eq(t, 3, mustIndex(t, s, TableEvals))
}

func TestEvals_UpsertInvalid(t *testing.T) {
	s := testStore(t)
	job := mockJob()
	good := mockEval(job)
	bad := mockEval(job)
	bad.Status = "cancelled" // the deployment spelling
	noJob := mockEval(job)
	noJob.JobID = ""
	cases := []struct {
		name  string
		evals []*structs.Evaluation
		want  string
	}{
		{"bad status", []*structs.Evaluation{good, bad}, `invalid status "cancelled"`},
		{"nil", []*structs.Evaluation{nil}, "eval is nil"},
		{"no id", []*structs.Evaluation{{Namespace: "default", JobID: "x", Status: "pending"}}, "ID is required"},
		{"no job", []*structs.Evaluation{noJob}, "JobID is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.ErrorContains(t, s.UpsertEvals(5, tc.evals), tc.want)
			// Nothing of the batch was written.
			out, _ := s.EvalByID(nil, good.ID)
			must.Nil(t, out)
			must.Eq(t, 0, mustIndex(t, s, TableEvals))
		})
	}
}

func TestEvals_Lookups(t *testing.T) {
	s := testStore(t)
	web := mockJob()
	web.ID = "web"
	web2 := mockJob()
	web2.ID = "web-2"
	prod := mockJob()
	prod.ID = "web"
	prod.Namespace = "prod"

	e1, e2, e3 := mockEval(web), mockEval(web), mockEval(web2)
	e1.ID = "aaaa1111-0000-4000-8000-000000000000"
	e2.ID = "aaaa2222-0000-4000-8000-000000000000"
	e2.Status = structs.EvalStatusBlocked
	e3.ID = "bbbb0000-0000-4000-8000-000000000000"
	e4 := mockEval(prod)
	e4.ID = "aaaa3333-0000-4000-8000-000000000000"
	must.NoError(t, s.UpsertEvals(1, []*structs.Evaluation{e1, e2, e3, e4}))

	ids := func(evals []*structs.Evaluation, err error) []string {
		t.Helper()
		must.NoError(t, err)
		var out []string
		for _, e := range evals {
			out = append(out, e.ID[:8])
		}
		slices.Sort(out)
		return out
	}
	must.Eq(t, []string{"aaaa1111", "aaaa2222"}, ids(s.EvalsByJob(nil, "default", "web")))
	must.Eq(t, []string{"bbbb0000"}, ids(s.EvalsByJob(nil, "default", "web-2")))
	must.Eq(t, []string{"aaaa3333"}, ids(s.EvalsByJob(nil, "prod", "web")))
	must.Eq(t, []string{"aaaa1111", "aaaa2222", "bbbb0000"}, ids(s.Evals(nil, "default")))
	must.Eq(t, []string{"aaaa1111", "aaaa2222", "aaaa3333", "bbbb0000"}, ids(s.Evals(nil, "*")))
	must.Eq(t, []string{"aaaa1111", "aaaa2222"}, ids(s.EvalsByIDPrefix(nil, "default", "aaaa")))
	must.Eq(t, []string{"aaaa1111", "aaaa2222", "aaaa3333"}, ids(s.EvalsByIDPrefix(nil, "*", "aaaa")))
	must.Eq(t, []string{"aaaa2222"}, ids(s.EvalsByStatus(nil, structs.EvalStatusBlocked)))
	must.Eq(t, []string{"aaaa1111", "aaaa3333", "bbbb0000"}, ids(s.EvalsByStatus(nil, structs.EvalStatusPending)))

	// Only waiting evals are indexed by status: one that finishes leaves
	// the index, and finished ones cannot be listed by it.
	done := e1.Copy()
	done.Status = structs.EvalStatusComplete
	must.NoError(t, s.UpsertEvals(2, []*structs.Evaluation{done}))
	must.Eq(t, []string{"aaaa3333", "bbbb0000"}, ids(s.EvalsByStatus(nil, structs.EvalStatusPending)))
	_, err := s.EvalsByStatus(nil, structs.EvalStatusComplete)
	must.ErrorIs(t, err, structs.ErrInvalid)
}

func TestEvals_CompleteCancelsBlocked(t *testing.T) {
	cases := []struct {
		name       string
		status     string
		failed     bool
		wantStatus string
	}{
		{"complete without failures", structs.EvalStatusComplete, false, structs.EvalStatusCanceled},
		{"complete with failed placements", structs.EvalStatusComplete, true, structs.EvalStatusBlocked},
		{"failed", structs.EvalStatusFailed, false, structs.EvalStatusBlocked},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			job := registered(t, s, 1, mockJob())
			blocked := mockEval(job)
			blocked.Status = structs.EvalStatusBlocked
			must.NoError(t, s.UpsertEvals(2, []*structs.Evaluation{blocked}))

			done := mockEval(job)
			done.Status = tc.status
			done.ModifyTime = 99
			if tc.failed {
				done.FailedTGAllocs = map[string]*structs.AllocMetric{"web": {}}
			}
			must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{done}))
			out, _ := s.EvalByID(nil, blocked.ID)
			must.Eq(t, tc.wantStatus, out.Status)
			if tc.wantStatus == structs.EvalStatusCanceled {
				must.Eq(t, 3, out.ModifyIndex)
				must.Eq(t, 99, out.ModifyTime)
				must.StrContains(t, out.StatusDescription, done.ID)
			}
		})
	}
}

func TestEvals_Delete(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := registered(t, s, 2, mockJob())
	e1, e2 := mockEval(job), mockEval(job)
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{e1, e2}))
	a := mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{a}))

	must.NoError(t, s.DeleteEvals(5, []string{e1.ID, "missing"}, []string{a.ID, "missing"}))
	gone, _ := s.EvalByID(nil, e1.ID)
	must.Nil(t, gone)
	kept, _ := s.EvalByID(nil, e2.ID)
	must.NotNil(t, kept)
	ga, _ := s.AllocByID(nil, a.ID)
	must.Nil(t, ga)
	must.Eq(t, 5, mustIndex(t, s, TableEvals))
	must.Eq(t, 5, mustIndex(t, s, TableAllocs))
}

func TestEvals_PlanTouchRequiresEval(t *testing.T) {
	s := testStore(t)
	err := s.UpsertPlanResults(1, &structs.ApplyPlanResultsRequest{EvalID: "missing"})
	must.True(t, errors.Is(err, structs.ErrUnknownEval))
}
