package fsm

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// healthBatchFixture applies, from index 10, the same entries to every
// FSM of fsms: a node and two jobs, each with a running deployment of
// one alloc. It returns the deployments and their allocs, in job order,
// and the stored jobs.
func healthBatchFixture(t *testing.T, fsms ...*FSM) ([]*structs.Deployment, []*structs.Allocation, []*structs.Job) {
	t.Helper()
	applyAll := func(index uint64, typ structs.MessageType, req interface{}) {
		t.Helper()
		for _, f := range fsms {
			mustApply(t, f, index, typ, req)
		}
	}
	node := mock.Node()
	applyAll(10, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	var ds []*structs.Deployment
	var allocs []*structs.Allocation
	var jobs []*structs.Job
	index := uint64(11)
	for i := range 2 {
		job := mock.Job(mock.JobID([]string{"web", "api"}[i]), mock.Count(1))
		applyAll(index, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
		stored, _ := fsms[0].State().JobByID(nil, job.Namespace, job.ID)
		d := structs.NewDeployment(stored, 50, testEpochTime)
		d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 1}
		a := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
		a.DeploymentID = d.ID
		applyAll(index+1, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
			AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{a}, Job: stored},
			Deployment:         d,
		})
		index += 2
		ds, allocs, jobs = append(ds, d), append(allocs, a), append(jobs, stored)
	}
	return ds, allocs, jobs
}

// healthReq is the verdict of one alloc of d, with eval.
func healthReq(d *structs.Deployment, allocID string, healthy bool, eval *structs.Evaluation) *structs.ApplyDeploymentAllocHealthRequest {
	req := &structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: d.ID},
		Timestamp:                    testEpochTime,
		Eval:                         eval,
	}
	if healthy {
		req.HealthyAllocationIDs = []string{allocID}
	} else {
		req.UnhealthyAllocationIDs = []string{allocID}
	}
	return req
}

// A DeploymentAllocHealthBatch entry (33) leaves the allocs, deployments
// and evals its requests' DeploymentAllocHealth entries (16) leave when
// applied one after the other (a later request sees what an earlier one
// wrote), and hands the evals to the broker in the same order.
func TestFSM_DeploymentAllocHealthBatchAppliesLikeItsRequests(t *testing.T) {
	batched, bfx := newTestFSM(t)
	single, sfx := newTestFSM(t)
	ds, allocs, jobs := healthBatchFixture(t, batched, single)
	bfx.enqueued, sfx.enqueued = nil, nil

	e1, e2, e3 := mock.Eval(mock.EvalForJob(jobs[0])), mock.Eval(mock.EvalForJob(jobs[1])), mock.Eval(mock.EvalForJob(jobs[0]))
	mustApply(t, batched, 20, structs.DeploymentAllocHealthBatchRequestType, &structs.DeploymentAllocHealthBatchRequest{
		Requests: []*structs.ApplyDeploymentAllocHealthRequest{
			healthReq(ds[0], allocs[0].ID, true, e1),
			healthReq(ds[1], allocs[1].ID, true, e2),
			healthReq(ds[0], allocs[0].ID, false, e3),
		},
	})
	mustApply(t, single, 20, structs.DeploymentAllocHealthRequestType, healthReq(ds[0], allocs[0].ID, true, e1))
	mustApply(t, single, 21, structs.DeploymentAllocHealthRequestType, healthReq(ds[1], allocs[1].ID, true, e2))
	mustApply(t, single, 22, structs.DeploymentAllocHealthRequestType, healthReq(ds[0], allocs[0].ID, false, e3))

	must.Eq(t, []string{e1.ID, e2.ID, e3.ID}, bfx.enqueued)
	must.Eq(t, sfx.enqueued, bfx.enqueued)
	for i := range ds {
		b, _ := batched.State().AllocByID(nil, allocs[i].ID)
		s, _ := single.State().AllocByID(nil, allocs[i].ID)
		must.Eq(t, *s.DeploymentStatus.Healthy, *b.DeploymentStatus.Healthy, must.Sprintf("alloc %d", i))
		must.Eq(t, 20, b.DeploymentStatus.ModifyIndex)
		bd, _ := batched.State().DeploymentByID(nil, ds[i].ID)
		sd, _ := single.State().DeploymentByID(nil, ds[i].ID)
		must.Eq(t, sd.TaskGroups["web"].HealthyAllocs, bd.TaskGroups["web"].HealthyAllocs, must.Sprintf("deployment %d", i))
		must.Eq(t, sd.TaskGroups["web"].UnhealthyAllocs, bd.TaskGroups["web"].UnhealthyAllocs, must.Sprintf("deployment %d", i))
		must.Eq(t, sd.Status, bd.Status)
	}
	first, _ := batched.State().AllocByID(nil, allocs[0].ID)
	must.True(t, first.DeploymentStatus.IsUnhealthy(), must.Sprint("the later request wins"))
	for _, e := range []*structs.Evaluation{e1, e2, e3} {
		got, _ := batched.State().EvalByID(nil, e.ID)
		must.NotNil(t, got)
		must.Eq(t, 20, got.CreateIndex)
	}
}

// When the state store refuses one request of a batch entry (a deployment
// cancelled, one unknown, an alloc not of the deployment, an empty
// entry), the FSM refuses the entry: nothing is written, not even the
// valid requests before it, and nothing goes to the broker.
func TestFSM_DeploymentAllocHealthBatchOneBadRequestRefusesAll(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reqs    func(ds []*structs.Deployment, allocs []*structs.Allocation) []*structs.ApplyDeploymentAllocHealthRequest
		cancel  bool
		wantErr string
	}{
		{name: "cancelled deployment", cancel: true, wantErr: "request 2 of 2: deployment",
			reqs: func(ds []*structs.Deployment, allocs []*structs.Allocation) []*structs.ApplyDeploymentAllocHealthRequest {
				return []*structs.ApplyDeploymentAllocHealthRequest{healthReq(ds[0], allocs[0].ID, true, nil), healthReq(ds[1], allocs[1].ID, true, nil)}
			}},
		{name: "unknown deployment", wantErr: "deployment not found",
			reqs: func(ds []*structs.Deployment, allocs []*structs.Allocation) []*structs.ApplyDeploymentAllocHealthRequest {
				return []*structs.ApplyDeploymentAllocHealthRequest{healthReq(ds[0], allocs[0].ID, true, nil),
					healthReq(&structs.Deployment{ID: structs.GenerateUUID()}, allocs[1].ID, true, nil)}
			}},
		{name: "alloc of another deployment", wantErr: "is not part of the deployment",
			reqs: func(ds []*structs.Deployment, allocs []*structs.Allocation) []*structs.ApplyDeploymentAllocHealthRequest {
				return []*structs.ApplyDeploymentAllocHealthRequest{healthReq(ds[0], allocs[0].ID, true, nil), healthReq(ds[1], allocs[0].ID, true, nil)}
			}},
		{name: "a nil request", wantErr: "request is nil",
			reqs: func(ds []*structs.Deployment, allocs []*structs.Allocation) []*structs.ApplyDeploymentAllocHealthRequest {
				return []*structs.ApplyDeploymentAllocHealthRequest{healthReq(ds[0], allocs[0].ID, true, nil), nil}
			}},
		{name: "no requests", wantErr: "no requests",
			reqs: func([]*structs.Deployment, []*structs.Allocation) []*structs.ApplyDeploymentAllocHealthRequest {
				return nil
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, fx := newTestFSM(t)
			ds, allocs, jobs := healthBatchFixture(t, f)
			index := uint64(20)
			if tc.cancel {
				mustApply(t, f, index, structs.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
					DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: ds[1].ID, Status: structs.DeploymentStatusCancelled}})
				index++
			}
			fx.enqueued = nil
			reqs := tc.reqs(ds, allocs)
			eval := mock.Eval(mock.EvalForJob(jobs[0]))
			if len(reqs) > 0 {
				reqs[0].Eval = eval
			}
			err := mustFail(t, f, index, structs.DeploymentAllocHealthBatchRequestType, &structs.DeploymentAllocHealthBatchRequest{Requests: reqs})
			must.ErrorContains(t, err, tc.wantErr)
			must.SliceEmpty(t, fx.enqueued)
			for _, a := range allocs {
				got, _ := f.State().AllocByID(nil, a.ID)
				must.True(t, got.DeploymentStatus == nil || got.DeploymentStatus.Healthy == nil)
			}
			got, _ := f.State().EvalByID(nil, eval.ID)
			must.Nil(t, got)
		})
	}
}
