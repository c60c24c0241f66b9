package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// planEvalFixture is a store holding a job, its pending eval being
// scheduled and an older blocked eval of the job, plus the plan result
// that places one alloc and the eval's final form.
type planEvalFixture struct {
	s       *StateStore
	pub     *recordingPublisher
	job     *structs.Job
	eval    *structs.Evaluation
	blocked *structs.Evaluation
	alloc   *structs.Allocation
	final   *structs.Evaluation
}

func newPlanEvalFixture(t *testing.T) *planEvalFixture {
	pub := &recordingPublisher{}
	s, err := NewStateStore(&Config{Publisher: pub})
	must.NoError(t, err)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := registered(t, s, 2, mockJob())
	ev, blocked := mockEval(job), mockEval(job)
	blocked.Status = structs.EvalStatusBlocked
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{ev, blocked}))
	pub.take()

	a := mockAlloc(job, node)
	a.EvalID = ev.ID
	final := ev.Copy()
	final.Status = structs.EvalStatusComplete
	final.QueuedAllocations = map[string]int{"web": 0}
	final.ModifyTime = 1_700_000_100_000_000_000
	return &planEvalFixture{s: s, pub: pub, job: job, eval: ev, blocked: blocked, alloc: a, final: final}
}

func (f *planEvalFixture) request(withEval bool) *structs.ApplyPlanResultsRequest {
	a := *f.alloc
	req := &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{&a}},
		EvalID:             f.eval.ID,
		UpdatedAt:          1_700_000_100_000_000_000,
	}
	if withEval {
		req.Eval = f.final.Copy()
	}
	return req
}

// TestPlanResults_EvalWrittenAsEvalUpdate: a plan result carrying its
// eval leaves the store as the same result without it followed by an
// EvalUpdate of that eval does (eval, blocked eval of the job cancelled,
// job summary and status), with the same events in one batch. The old
// form only moves the eval's ModifyIndex.
func TestPlanResults_EvalWrittenAsEvalUpdate(t *testing.T) {
	old := newPlanEvalFixture(t)
	must.NoError(t, old.s.UpsertPlanResults(10, old.request(false)))
	touched, err := old.s.EvalByID(nil, old.eval.ID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusPending, touched.Status)
	must.Eq(t, 10, touched.ModifyIndex)
	must.NoError(t, old.s.UpsertEvals(11, []*structs.Evaluation{old.final.Copy()}))
	var oldKeys []eventKey
	for _, b := range old.pub.take() {
		oldKeys = append(oldKeys, keys(b)...)
	}

	folded := newPlanEvalFixture(t)
	folded.alloc.ID, folded.final.ID = old.alloc.ID, folded.eval.ID
	must.NoError(t, folded.s.UpsertPlanResults(10, folded.request(true)))
	batches := folded.pub.take()
	must.Len(t, 1, batches)
	must.Eq(t, oldKeys, renameKeys(keys(batches[0]), map[string]string{
		folded.eval.ID: old.eval.ID, folded.blocked.ID: old.blocked.ID, folded.job.ID: old.job.ID,
	}))

	for _, f := range []*planEvalFixture{old, folded} {
		got, err := f.s.EvalByID(nil, f.eval.ID)
		must.NoError(t, err)
		must.Eq(t, structs.EvalStatusComplete, got.Status)
		must.Eq(t, f.final.ModifyTime, got.ModifyTime)
		must.Eq(t, 3, got.CreateIndex)
		b, err := f.s.EvalByID(nil, f.blocked.ID)
		must.NoError(t, err)
		must.Eq(t, structs.EvalStatusCanceled, b.Status)
	}
	gotEval, _ := folded.s.EvalByID(nil, folded.eval.ID)
	must.Eq(t, 10, gotEval.ModifyIndex)
	oldSum, _ := old.s.JobSummaryByID(nil, old.job.Namespace, old.job.ID)
	newSum, _ := folded.s.JobSummaryByID(nil, folded.job.Namespace, folded.job.ID)
	must.Eq(t, oldSum.Summary, newSum.Summary)
	oldJob, _ := old.s.JobByID(nil, old.job.Namespace, old.job.ID)
	newJob, _ := folded.s.JobByID(nil, folded.job.Namespace, folded.job.ID)
	must.Eq(t, oldJob.Status, newJob.Status)
}

// renameKeys maps the object keys of one fixture's events to another's.
func renameKeys(in []eventKey, rename map[string]string) []eventKey {
	out := make([]eventKey, len(in))
	for i, k := range in {
		if to, ok := rename[k.Key]; ok {
			k.Key = to
		}
		out[i] = k
	}
	return out
}

// TestPlanResults_EvalNotItsOwn: a plan result whose eval is not the
// plan's own stored eval is refused whole, nothing written.
func TestPlanResults_EvalNotItsOwn(t *testing.T) {
	cases := []struct {
		name string
		edit func(f *planEvalFixture, req *structs.ApplyPlanResultsRequest)
	}{
		{name: "another eval than EvalID", edit: func(f *planEvalFixture, req *structs.ApplyPlanResultsRequest) {
			req.Eval.ID = f.blocked.ID
		}},
		{name: "another job", edit: func(f *planEvalFixture, req *structs.ApplyPlanResultsRequest) {
			req.Eval.JobID = "other"
		}},
		{name: "another namespace", edit: func(f *planEvalFixture, req *structs.ApplyPlanResultsRequest) {
			req.Eval.Namespace = "other"
		}},
		{name: "an unknown eval", edit: func(f *planEvalFixture, req *structs.ApplyPlanResultsRequest) {
			id := structs.GenerateUUID()
			req.EvalID, req.Eval.ID = id, id
		}},
		{name: "an invalid status", edit: func(f *planEvalFixture, req *structs.ApplyPlanResultsRequest) {
			req.Eval.Status = "done-ish"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newPlanEvalFixture(t)
			req := f.request(true)
			c.edit(f, req)
			must.Error(t, f.s.UpsertPlanResults(10, req))
			a, err := f.s.AllocByID(nil, f.alloc.ID)
			must.NoError(t, err)
			must.Nil(t, a)
			e, _ := f.s.EvalByID(nil, f.eval.ID)
			must.Eq(t, structs.EvalStatusPending, e.Status)
			must.Eq(t, 3, e.ModifyIndex)
		})
	}
}
