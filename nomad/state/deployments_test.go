package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestDeployments_UpsertAndLookups(t *testing.T) {
	s := testStore(t)
	job := registered(t, s, 1, mockJob())
	d1 := mockDeployment(job)
	d1.ID = "aaaa0000-0000-4000-8000-000000000000"
	must.NoError(t, s.UpsertDeployment(2, d1))
	d2 := mockDeployment(job)
	d2.ID = "bbbb0000-0000-4000-8000-000000000000"
	must.NoError(t, s.UpsertDeployment(3, d2))

	out, err := s.DeploymentByID(nil, d1.ID)
	must.NoError(t, err)
	must.Eq(t, 2, out.CreateIndex)
	must.Eq(t, 3, mustIndex(t, s, TableDeployment))

	again := d1.Copy()
	again.StatusDescription = "changed"
	must.NoError(t, s.UpsertDeployment(4, again))
	out, _ = s.DeploymentByID(nil, d1.ID)
	must.Eq(t, 2, out.CreateIndex)
	must.Eq(t, 4, out.ModifyIndex)

	latest, err := s.LatestDeploymentByJobID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Eq(t, d2.ID, latest.ID)
	byJob, _ := s.DeploymentsByJobID(nil, job.Namespace, job.ID, false)
	must.Len(t, 2, byJob)
	list, _ := s.Deployments(nil, "*")
	must.Len(t, 2, list)
	list, _ = s.Deployments(nil, "default")
	must.Len(t, 2, list)
	pre, _ := s.DeploymentsByIDPrefix(nil, "*", "aaaa")
	must.Len(t, 1, pre)

	// After a purge and re-register only "all" sees the old deployments.
	must.NoError(t, s.DeleteJob(5, job.Namespace, job.ID))
	none, _ := s.DeploymentsByJobID(nil, job.Namespace, job.ID, false)
	must.Len(t, 0, none)
	registered(t, s, 6, job.Copy())
	none, _ = s.DeploymentsByJobID(nil, job.Namespace, job.ID, false)
	must.Len(t, 0, none)
	all, _ := s.DeploymentsByJobID(nil, job.Namespace, job.ID, true)
	must.Len(t, 2, all)

	must.NoError(t, s.DeleteDeployments(7, []string{d1.ID, "missing"}))
	gone, _ := s.DeploymentByID(nil, d1.ID)
	must.Nil(t, gone)
}

func TestDeployments_StatusUpdate(t *testing.T) {
	s := testStore(t)
	job := registered(t, s, 1, mockJob())
	ev := mockEval(job)
	ev.Status = structs.EvalStatusComplete
	must.NoError(t, s.UpsertEvals(2, []*structs.Evaluation{ev}))
	d := mockDeployment(job)
	must.NoError(t, s.UpsertDeployment(3, d))

	jobStatus := func() string {
		j, _ := s.JobByID(nil, job.Namespace, job.ID)
		return j.Status
	}
	must.Eq(t, structs.JobStatusRunning, jobStatus()) // active deployment

	must.NoError(t, s.UpdateDeploymentStatus(4, &structs.DeploymentStatusUpdate{
		DeploymentID: d.ID, Status: structs.DeploymentStatusSuccessful,
		StatusDescription: structs.DeploymentStatusDescriptionSuccessful,
	}))
	out, _ := s.DeploymentByID(nil, d.ID)
	must.Eq(t, structs.DeploymentStatusSuccessful, out.Status)
	must.Eq(t, 4, out.ModifyIndex)
	j, _ := s.JobByID(nil, job.Namespace, job.ID)
	must.True(t, j.Stable)
	must.Eq(t, structs.JobStatusDead, jobStatus())

	// An ended deployment stays ended: an update decided on an older
	// snapshot changes nothing.
	must.NoError(t, s.UpdateDeploymentStatus(5, &structs.DeploymentStatusUpdate{
		DeploymentID: d.ID, Status: structs.DeploymentStatusRunning,
		StatusDescription: structs.DeploymentStatusDescriptionRunningNeedsPromotion,
	}))
	out, _ = s.DeploymentByID(nil, d.ID)
	must.Eq(t, structs.DeploymentStatusSuccessful, out.Status)
	must.Eq(t, 4, out.ModifyIndex)

	err := s.UpdateDeploymentStatus(5, &structs.DeploymentStatusUpdate{DeploymentID: "missing"})
	must.ErrorContains(t, err, `deployment "missing"`)
	must.ErrorContains(t, s.UpsertDeployment(5, &structs.Deployment{ID: "x"}), "JobID and Namespace are required")
}
