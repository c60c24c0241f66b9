package state

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// deploymentWithAllocs registers a job, a running deployment of it with
// group "web" (DesiredTotal 2, progress deadline 10m), and two of its
// allocs in the deployment.
func deploymentWithAllocs(t *testing.T, s *StateStore) (*structs.Job, *structs.Deployment, []*structs.Allocation) {
	t.Helper()
	job := registered(t, s, 1, mockJob())
	d := mockDeployment(job)
	d.TaskGroups["web"].ProgressDeadline = 10 * time.Minute
	d.TaskGroups["web"].RequireProgressBy = time.Unix(1_700_000_600, 0).UTC()
	must.NoError(t, s.UpsertDeployment(2, d))
	node := mockNode()
	must.NoError(t, s.UpsertNode(3, node))
	var allocs []*structs.Allocation
	for i := 0; i < 2; i++ {
		a := mockAlloc(job, node)
		a.Name = structs.AllocName(job.ID, "web", i)
		a.DeploymentID = d.ID
		allocs = append(allocs, a)
	}
	must.NoError(t, s.UpsertAllocs(4, allocs))
	return job, d, allocs
}

func TestDeploymentAllocHealth(t *testing.T) {
	s := testStore(t)
	job, d, allocs := deploymentWithAllocs(t, s)
	ts := time.Unix(1_700_000_100, 0).UTC()

	must.NoError(t, s.UpdateDeploymentAllocHealth(5, &structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{
			DeploymentID:           d.ID,
			HealthyAllocationIDs:   []string{allocs[0].ID},
			UnhealthyAllocationIDs: []string{allocs[1].ID},
		},
		Timestamp: ts,
	}))
	a0, _ := s.AllocByID(nil, allocs[0].ID)
	must.True(t, a0.DeploymentStatus.IsHealthy())
	must.True(t, a0.DeploymentStatus.Timestamp.Equal(ts))
	must.Eq(t, 5, a0.DeploymentStatus.ModifyIndex)
	must.Eq(t, 5, a0.ModifyIndex)
	must.Eq(t, 4, a0.AllocModifyIndex, must.Sprint("health is not news for the client"))
	a1, _ := s.AllocByID(nil, allocs[1].ID)
	must.True(t, a1.DeploymentStatus.IsUnhealthy())

	out, _ := s.DeploymentByID(nil, d.ID)
	st := out.TaskGroups["web"]
	must.Eq(t, 2, st.PlacedAllocs)
	must.Eq(t, 1, st.HealthyAllocs)
	must.Eq(t, 1, st.UnhealthyAllocs)
	// A healthy alloc moves the progress deadline to its timestamp + 10m.
	must.True(t, st.RequireProgressBy.Equal(ts.Add(10*time.Minute)))

	// The same entry fails the deployment, reverts the job, adds an eval.
	revert := job.Copy()
	revert.Meta = map[string]string{"reverted": "yes"}
	ev := mockEval(job)
	ev.TriggeredBy = structs.EvalTriggerDeploymentWatcher
	must.NoError(t, s.UpdateDeploymentAllocHealth(6, &structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{
			DeploymentID: d.ID, UnhealthyAllocationIDs: []string{allocs[0].ID},
		},
		Timestamp: ts,
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: structs.DeploymentStatusFailed,
			StatusDescription: structs.DeploymentStatusDescriptionFailedAllocations},
		Job:  revert,
		Eval: ev,
	}))
	out, _ = s.DeploymentByID(nil, d.ID)
	must.Eq(t, structs.DeploymentStatusFailed, out.Status)
	must.Eq(t, 0, out.TaskGroups["web"].HealthyAllocs)
	must.Eq(t, 2, out.TaskGroups["web"].UnhealthyAllocs)
	j, _ := s.JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, job.Version+1, j.Version)
	must.Eq(t, "yes", j.Meta["reverted"])
	e, _ := s.EvalByID(nil, ev.ID)
	must.NotNil(t, e)
	must.Eq(t, 6, e.CreateIndex)
}

func TestDeploymentAllocHealth_Errors(t *testing.T) {
	s := testStore(t)
	_, d, allocs := deploymentWithAllocs(t, s)
	other := mockAlloc(allocs[0].Job, &structs.Node{ID: allocs[0].NodeID})
	must.NoError(t, s.UpsertAllocs(5, []*structs.Allocation{other}))

	cases := []struct {
		name    string
		req     structs.DeploymentAllocHealthRequest
		wantErr string
	}{
		{"unknown deployment", structs.DeploymentAllocHealthRequest{DeploymentID: "nope"}, "deployment not found"},
		{"unknown alloc", structs.DeploymentAllocHealthRequest{DeploymentID: d.ID,
			HealthyAllocationIDs: []string{allocs[0].ID, "ghost"}}, `alloc "ghost": alloc not found`},
		{"alloc of no deployment", structs.DeploymentAllocHealthRequest{DeploymentID: d.ID,
			HealthyAllocationIDs: []string{other.ID}}, "is not part of the deployment"},
		{"both lists", structs.DeploymentAllocHealthRequest{DeploymentID: d.ID,
			HealthyAllocationIDs: []string{allocs[0].ID}, UnhealthyAllocationIDs: []string{allocs[0].ID}}, "both healthy and unhealthy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.UpdateDeploymentAllocHealth(10, &structs.ApplyDeploymentAllocHealthRequest{DeploymentAllocHealthRequest: tc.req})
			must.ErrorContains(t, err, tc.wantErr)
			// Nothing was written, not even the first, valid verdict.
			a, _ := s.AllocByID(nil, allocs[0].ID)
			must.Nil(t, a.DeploymentStatus)
			must.Eq(t, 5, mustIndex(t, s, TableAllocs))
		})
	}

	must.NoError(t, s.UpdateDeploymentStatus(11, &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: structs.DeploymentStatusCancelled}))
	err := s.UpdateDeploymentAllocHealth(12, &structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: d.ID, HealthyAllocationIDs: []string{allocs[0].ID}}})
	must.ErrorContains(t, err, "only be set on an active deployment")
}

func TestDeploymentPromotion(t *testing.T) {
	healthy := true
	setup := func(t *testing.T, healthyCanaries int) (*StateStore, *structs.Deployment) {
		s := testStore(t)
		job := registered(t, s, 1, mockJob())
		d := mockDeployment(job)
		d.StatusDescription = structs.DeploymentStatusDescriptionRunningNeedsPromotion
		d.TaskGroups["web"].DesiredCanaries = 2
		d.TaskGroups["api"] = &structs.DeploymentState{DesiredTotal: 1}
		node := mockNode()
		must.NoError(t, s.UpsertNode(2, node))
		var canaries []*structs.Allocation
		for i := 0; i < 2; i++ {
			a := mockAlloc(job, node)
			a.DeploymentID = d.ID
			a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
			if i < healthyCanaries {
				a.DeploymentStatus.Healthy = &healthy
			}
			canaries = append(canaries, a)
			d.TaskGroups["web"].PlacedCanaries = append(d.TaskGroups["web"].PlacedCanaries, a.ID)
		}
		must.NoError(t, s.UpsertDeployment(3, d))
		must.NoError(t, s.UpsertAllocs(4, canaries))
		return s, d
	}

	t.Run("all healthy", func(t *testing.T) {
		s, d := setup(t, 2)
		ev := mockEval(&structs.Job{ID: d.JobID, Namespace: d.Namespace, Type: structs.JobTypeService})
		must.NoError(t, s.UpdateDeploymentPromotion(5, &structs.ApplyDeploymentPromoteRequest{
			DeploymentPromoteRequest: structs.DeploymentPromoteRequest{DeploymentID: d.ID, All: true}, Eval: ev}))
		out, _ := s.DeploymentByID(nil, d.ID)
		must.True(t, out.TaskGroups["web"].Promoted)
		must.False(t, out.TaskGroups["api"].Promoted, must.Sprint("a group without canaries has nothing to promote"))
		must.Eq(t, structs.DeploymentStatusDescriptionRunning, out.StatusDescription)
		e, _ := s.EvalByID(nil, ev.ID)
		must.NotNil(t, e)

		err := s.UpdateDeploymentPromotion(6, &structs.ApplyDeploymentPromoteRequest{
			DeploymentPromoteRequest: structs.DeploymentPromoteRequest{DeploymentID: d.ID, All: true}})
		must.ErrorContains(t, err, "no canaries to promote")
	})

	cases := []struct {
		name    string
		healthy int
		req     structs.DeploymentPromoteRequest
		wantErr string
	}{
		{"one of two canaries healthy", 1, structs.DeploymentPromoteRequest{All: true}, `task group "web" has 1/2 healthy allocations`},
		{"unknown group", 2, structs.DeploymentPromoteRequest{Groups: []string{"db"}}, `has no task group "db"`},
		{"group without canaries", 2, structs.DeploymentPromoteRequest{Groups: []string{"api"}}, "no canaries to promote"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, d := setup(t, tc.healthy)
			tc.req.DeploymentID = d.ID
			err := s.UpdateDeploymentPromotion(5, &structs.ApplyDeploymentPromoteRequest{DeploymentPromoteRequest: tc.req})
			must.ErrorContains(t, err, tc.wantErr)
			out, _ := s.DeploymentByID(nil, d.ID)
			must.False(t, out.TaskGroups["web"].Promoted)
		})
	}

	t.Run("unknown deployment", func(t *testing.T) {
		s, _ := setup(t, 2)
		err := s.UpdateDeploymentPromotion(5, &structs.ApplyDeploymentPromoteRequest{
			DeploymentPromoteRequest: structs.DeploymentPromoteRequest{DeploymentID: "nope", All: true}})
		must.ErrorIs(t, err, structs.ErrUnknownDeployment)
	})
}

func TestNodeDrainProgressRead(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := registered(t, s, 2, mockJob())
	a := mockAlloc(job, node)
	a.ClientStatus = structs.AllocClientStatusRunning
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{a}))
	must.NoError(t, s.UpdateNodeDrain(4, node.ID, &structs.DrainStrategy{}, false, 1_700_000_000, nil, nil))

	n, p, err := s.NodeDrainProgress(nil, node.ID)
	must.NoError(t, err)
	must.NotNil(t, n.DrainStrategy)
	must.Eq(t, structs.DrainProgress{Remaining: 1}, p)

	_, _, err = s.NodeDrainProgress(nil, "missing")
	must.ErrorIs(t, err, structs.ErrUnknownNode)
}

// The servers judged an alloc healthy (and wrote the deployment watcher's
// eval with that verdict); its client then reports the same health. The
// report must not look like a new verdict: the watcher writes an eval for
// every verdict whose ModifyIndex is newer than the job's last eval, and
// a moved index gave 7% of the jobs of a flood a second, useless
// deployment-watcher eval. A report that changes the verdict still moves
// it.
func TestDeploymentAllocHealth_ClientRepeatingTheVerdictKeepsIt(t *testing.T) {
	s := testStore(t)
	_, d, allocs := deploymentWithAllocs(t, s)
	judgedAt := time.Unix(1_700_000_100, 0).UTC()
	must.NoError(t, s.UpdateDeploymentAllocHealth(5, &structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{
			DeploymentID: d.ID, HealthyAllocationIDs: []string{allocs[0].ID},
		},
		Timestamp: judgedAt,
	}))

	healthy, unhealthy := true, false
	report := func(index uint64, h *bool) {
		t.Helper()
		must.NoError(t, s.UpdateAllocsFromClient(index, []*structs.Allocation{{
			ID: allocs[0].ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: h, Timestamp: judgedAt.Add(time.Second)},
		}}))
	}
	report(6, &healthy)
	a, _ := s.AllocByID(nil, allocs[0].ID)
	must.Eq(t, 5, a.DeploymentStatus.ModifyIndex, must.Sprint("the same verdict is no news"))
	must.True(t, a.DeploymentStatus.Timestamp.Equal(judgedAt))
	must.Eq(t, 6, a.ModifyIndex, must.Sprint("the rest of the report is applied"))
	must.Eq(t, structs.AllocClientStatusRunning, a.ClientStatus)
	out, _ := s.DeploymentByID(nil, d.ID)
	must.Eq(t, 1, out.TaskGroups["web"].HealthyAllocs, must.Sprint("counted once"))

	report(7, &unhealthy)
	a, _ = s.AllocByID(nil, allocs[0].ID)
	must.Eq(t, 7, a.DeploymentStatus.ModifyIndex)
	must.True(t, a.DeploymentStatus.IsUnhealthy())
	out, _ = s.DeploymentByID(nil, d.ID)
	must.Eq(t, 0, out.TaskGroups["web"].HealthyAllocs)
	must.Eq(t, 1, out.TaskGroups["web"].UnhealthyAllocs)
}

// The requests of a batch apply in order, each as it would alone: a
// later verdict on the same alloc sees and replaces an earlier one, and
// every request's eval is written, all at the batch's index.
func TestDeploymentAllocHealthBatch(t *testing.T) {
	s := testStore(t)
	job, d, allocs := deploymentWithAllocs(t, s)
	ts := time.Unix(1_700_000_100, 0).UTC()
	req := func(healthy, unhealthy []string) *structs.ApplyDeploymentAllocHealthRequest {
		return &structs.ApplyDeploymentAllocHealthRequest{
			DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: d.ID,
				HealthyAllocationIDs: healthy, UnhealthyAllocationIDs: unhealthy},
			Timestamp: ts,
			Eval:      mockEval(job),
		}
	}
	reqs := []*structs.ApplyDeploymentAllocHealthRequest{
		req([]string{allocs[0].ID, allocs[1].ID}, nil),
		req(nil, []string{allocs[1].ID}),
	}
	must.NoError(t, s.UpdateDeploymentAllocHealthBatch(5, reqs))
	a0, _ := s.AllocByID(nil, allocs[0].ID)
	must.True(t, a0.DeploymentStatus.IsHealthy())
	must.Eq(t, 5, a0.DeploymentStatus.ModifyIndex)
	a1, _ := s.AllocByID(nil, allocs[1].ID)
	must.True(t, a1.DeploymentStatus.IsUnhealthy())
	out, _ := s.DeploymentByID(nil, d.ID)
	must.Eq(t, 1, out.TaskGroups["web"].HealthyAllocs)
	must.Eq(t, 1, out.TaskGroups["web"].UnhealthyAllocs)
	for _, r := range reqs {
		e, _ := s.EvalByID(nil, r.Eval.ID)
		must.NotNil(t, e)
		must.Eq(t, 5, e.CreateIndex)
	}
}

// One request refused refuses the batch: nothing is written, not even
// the valid requests before it. A verdict on a deployment no longer
// active is refused as it is alone.
func TestDeploymentAllocHealthBatch_OneRefusedWritesNothing(t *testing.T) {
	s := testStore(t)
	job, d, allocs := deploymentWithAllocs(t, s)
	other := registered(t, s, 5, mockJob())
	cancelled := mockDeployment(other)
	must.NoError(t, s.UpsertDeployment(6, cancelled))
	must.NoError(t, s.UpdateDeploymentStatus(7, &structs.DeploymentStatusUpdate{DeploymentID: cancelled.ID, Status: structs.DeploymentStatusCancelled}))
	good := &structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: d.ID, HealthyAllocationIDs: []string{allocs[0].ID}},
		Eval:                         mockEval(job),
	}
	for _, tc := range []struct {
		name    string
		reqs    []*structs.ApplyDeploymentAllocHealthRequest
		wantErr string
	}{
		{"none", nil, "no requests"},
		{"unknown deployment", []*structs.ApplyDeploymentAllocHealthRequest{good,
			{DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: "nope"}}}, "request 2 of 2"},
		{"cancelled deployment", []*structs.ApplyDeploymentAllocHealthRequest{good,
			{DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: cancelled.ID}}}, "only be set on an active deployment"},
		{"nil request", []*structs.ApplyDeploymentAllocHealthRequest{good, nil}, "request is nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.UpdateDeploymentAllocHealthBatch(10, tc.reqs)
			must.ErrorContains(t, err, tc.wantErr)
			a, _ := s.AllocByID(nil, allocs[0].ID)
			must.Nil(t, a.DeploymentStatus)
			e, _ := s.EvalByID(nil, good.Eval.ID)
			must.Nil(t, e)
			latest, _ := s.LatestIndex()
			must.Eq(t, 7, latest)
		})
	}
}
