package planjudge

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestBuildRequest: the Raft entry of a judged plan carries the plan's
// stops and preemptions as they were decided, copies of its allocs without
// the job (carried once), the applier's time, and one eval per job that
// still exists and loses allocs to preemption.
func TestBuildRequest(t *testing.T) {
	s := statetest.NewStore(t)
	x, y := s.Node(), s.Node()
	high, low, purged := s.Job(), s.Job(), s.Job()
	old := s.Alloc(high, x, 500)
	v1, v2, v3 := s.Alloc(low, y, 1000), s.Alloc(low, y, 1000), s.Alloc(purged, y, 1000)
	s.MustWrite(func(tx *state.Txn) error { return tx.DeleteJob(purged.Namespace, purged.ID) })
	p := newTestAlloc(high, y, 3000)
	q := newTestAlloc(high, x, 500)
	e := mock.Eval(mock.EvalForJob(high))
	s.MustWrite(func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) })
	plan := mock.BuildPlan(e.MakePlan(high)).Stop(old).Place(q).Preempt(p.ID, v1, v2, v3).Place(p).Build()
	plan.Deployment = structs.NewDeployment(high, 50, testEpoch)

	view := view(s)
	v, err := Judge(View{State: view}, plan, 1)
	must.NoError(t, err)
	req := BuildRequest(view, plan, v.Result, testEpoch)

	ts := testEpoch.UnixNano()
	must.Eq(t, plan.EvalID, req.EvalID)
	must.Eq(t, ts, req.UpdatedAt)
	must.Eq(t, high, req.Job)
	must.Eq(t, plan.Deployment, req.Deployment)
	must.Eq(t, plan.NodeUpdate[x.ID], req.AllocsStopped)
	must.Eq(t, plan.NodePreemptions[y.ID], req.AllocsPreempted)

	must.Len(t, 2, req.AllocsUpdated)
	for _, a := range req.AllocsUpdated {
		must.Nil(t, a.Job)
		must.Eq(t, ts, a.CreateTime)
		must.Eq(t, ts, a.ModifyTime)
	}
	// The submitter's allocs carry the committed times too, and keep their
	// job: the entry has copies.
	for _, a := range []*structs.Allocation{p, q} {
		must.Eq(t, ts, a.ModifyTime)
		must.Eq(t, high, a.Job)
	}

	must.Len(t, 1, req.PreemptionEvals, must.Sprint("one eval for low, none for the purged job"))
	pe := req.PreemptionEvals[0]
	lowNow, err := view.JobByID(low.Namespace, low.ID)
	must.NoError(t, err)
	must.Eq(t, low.ID, pe.JobID)
	must.Eq(t, lowNow.ModifyIndex, pe.JobModifyIndex)
	must.Eq(t, structs.EvalTriggerPreemption, pe.TriggeredBy)
	must.Eq(t, structs.EvalStatusPending, pe.Status)
	must.Eq(t, ts, pe.CreateTime)

	// The entry applies: stops and preemptions land on the stored allocs.
	s.MustWrite(func(tx *state.Txn) error { return tx.UpsertPlanResults(req) })
	for id, want := range map[string]string{old.ID: structs.AllocDesiredStatusStop, v1.ID: structs.AllocDesiredStatusEvict} {
		got, err := s.StateStore().AllocByID(nil, id)
		must.NoError(t, err)
		must.Eq(t, want, got.DesiredStatus)
		must.Eq(t, ts, got.ModifyTime)
	}
}

// TestBuildRequest_JobOnlyForNewAllocs: the entry carries the plan's job
// only for allocs that need it; a plan that stops allocs or moves its
// deployment along leaves it out of the log, and the entry still applies.
func TestBuildRequest_JobOnlyForNewAllocs(t *testing.T) {
	s := statetest.NewStore(t)
	x := s.Node()
	job := s.Job()
	old := s.Alloc(job, x, 500)
	e := mock.Eval(mock.EvalForJob(job))
	d := structs.NewDeployment(job, 50, testEpoch)
	s.MustWrite(func(tx *state.Txn) error {
		if err := tx.UpsertEvals([]*structs.Evaluation{e}); err != nil {
			return err
		}
		return tx.UpsertDeployment(d)
	})

	cases := []struct {
		name string
		plan *structs.Plan
	}{
		{"stop only", mock.BuildPlan(e.MakePlan(job)).Stop(old).Build()},
		{"deployment update only", func() *structs.Plan {
			p := e.MakePlan(job)
			p.DeploymentUpdates = []*structs.DeploymentStatusUpdate{{DeploymentID: d.ID,
				Status: structs.DeploymentStatusSuccessful, StatusDescription: structs.DeploymentStatusDescriptionSuccessful}}
			return p
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			view := view(s)
			v, err := Judge(View{State: view}, tc.plan, 1)
			must.NoError(t, err)
			req := BuildRequest(view, tc.plan, v.Result, testEpoch)
			must.Nil(t, req.Job)
			must.Len(t, 0, req.AllocsUpdated)

			buf, err := structs.Encode(structs.ApplyPlanResultsRequestType, req)
			must.NoError(t, err)
			var decoded structs.ApplyPlanResultsRequest
			must.NoError(t, structs.Decode(buf[1:], &decoded))
			s.MustWrite(func(tx *state.Txn) error { return tx.UpsertPlanResults(&decoded) })
		})
	}
}

// TestBuildRequest_JobOfARemotePlan: a plan submitted by a worker on
// another server arrives with its job and each alloc's job decoded apart;
// the entry still carries the job once, not inside every alloc. An alloc
// of another version of the job keeps its own.
func TestBuildRequest_JobOfARemotePlan(t *testing.T) {
	s := statetest.NewStore(t)
	x := s.Node()
	job := s.Job()
	e := mock.Eval(mock.EvalForJob(job))
	s.MustWrite(func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) })
	local := mock.BuildPlan(e.MakePlan(job)).Place(newTestAlloc(job, x, 100), newTestAlloc(job, x, 100)).Build()

	// Through the codec, as Plan.Submit's RPC carries it.
	buf, err := structs.Encode(structs.ApplyPlanResultsRequestType, local)
	must.NoError(t, err)
	var plan structs.Plan
	must.NoError(t, structs.Decode(buf[1:], &plan))
	for _, a := range plan.NodeAllocation[x.ID] {
		must.True(t, a.Job != plan.Job, must.Sprint("decoded apart"))
	}
	other := *plan.Job
	other.Version, other.JobModifyIndex = plan.Job.Version+1, plan.Job.JobModifyIndex+1
	plan.NodeAllocation[x.ID][1].Job = &other

	view := view(s)
	v, err := Judge(View{State: view}, &plan, 1)
	must.NoError(t, err)
	req := BuildRequest(view, &plan, v.Result, testEpoch)
	must.Eq(t, plan.Job, req.Job)
	must.Len(t, 2, req.AllocsUpdated)
	jobs := map[*structs.Job]int{}
	for _, a := range req.AllocsUpdated {
		jobs[a.Job]++
	}
	must.Eq(t, map[*structs.Job]int{nil: 1, &other: 1}, jobs)
}
