package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestPlanResults_Apply(t *testing.T) {
	s := testStore(t)
	node, busy := mockNode(), mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	must.NoError(t, s.UpsertNode(2, busy))
	job := registered(t, s, 3, mockJob())
	low := mockJob()
	low.Priority = 10
	low = registered(t, s, 4, low)
	ev := mockEval(job)
	must.NoError(t, s.UpsertEvals(5, []*structs.Evaluation{ev}))

	toStop, toPreempt := mockAlloc(job, node), mockAlloc(low, busy)
	must.NoError(t, s.UpsertAllocs(6, []*structs.Allocation{toStop, toPreempt}))
	must.NoError(t, s.UpdateAllocsFromClient(7, []*structs.Allocation{
		{ID: toStop.ID, ClientStatus: structs.AllocClientStatusRunning},
		{ID: toPreempt.ID, ClientStatus: structs.AllocClientStatusRunning},
	}))
	existingDep := mockDeployment(job)
	must.NoError(t, s.UpsertDeployment(8, existingDep))

	placed := mockAlloc(job, node)
	placed.Job = nil // denormalised: the request carries the job once
	placed.PreviousAllocation = toStop.ID
	newDep := mockDeployment(job)
	placed.DeploymentID = newDep.ID
	preemptEval := mockEval(low)
	preemptEval.TriggeredBy = structs.EvalTriggerPreemption

	req := &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{
			AllocsStopped: []*structs.AllocationDiff{{
				ID: toStop.ID, DesiredDescription: structs.AllocNotNeeded, ModifyTime: 555,
			}},
			AllocsUpdated: []*structs.Allocation{placed},
			Job:           job,
		},
		AllocsPreempted: []*structs.AllocationDiff{{
			ID: toPreempt.ID, PreemptedByAllocation: placed.ID,
			DesiredDescription: "Preempted by alloc ID " + placed.ID,
		}},
		Deployment: newDep,
		DeploymentUpdates: []*structs.DeploymentStatusUpdate{{
			DeploymentID: existingDep.ID, Status: structs.DeploymentStatusCancelled,
			StatusDescription: structs.DeploymentStatusDescriptionNewerJob,
		}},
		EvalID:          ev.ID,
		PreemptionEvals: []*structs.Evaluation{preemptEval},
		IneligibleNodes: []string{busy.ID},
		UpdatedAt:       1_700_000_123_000_000_000,
	}
	must.NoError(t, s.UpsertPlanResults(9, req))

	stopped, _ := s.AllocByID(nil, toStop.ID)
	must.Eq(t, structs.AllocDesiredStatusStop, stopped.DesiredStatus)
	must.Eq(t, structs.AllocNotNeeded, stopped.DesiredDescription)
	must.Eq(t, structs.AllocClientStatusRunning, stopped.ClientStatus) // the client's until it reports
	must.Eq(t, 555, stopped.ModifyTime)
	must.Eq(t, placed.ID, stopped.NextAllocation)
	must.Eq(t, 9, stopped.AllocModifyIndex)
	must.NotNil(t, stopped.Job)

	preempted, _ := s.AllocByID(nil, toPreempt.ID)
	must.Eq(t, structs.AllocDesiredStatusEvict, preempted.DesiredStatus)
	must.Eq(t, placed.ID, preempted.PreemptedByAllocation)

	p, _ := s.AllocByID(nil, placed.ID)
	must.Eq(t, job, p.Job)
	must.Eq(t, 9, p.CreateIndex)

	d, _ := s.DeploymentByID(nil, newDep.ID)
	must.Eq(t, 1, d.TaskGroups["web"].PlacedAllocs)
	old, _ := s.DeploymentByID(nil, existingDep.ID)
	must.Eq(t, structs.DeploymentStatusCancelled, old.Status)

	e, _ := s.EvalByID(nil, ev.ID)
	must.Eq(t, 9, e.ModifyIndex)
	must.Eq(t, structs.EvalStatusPending, e.Status)
	pe, _ := s.EvalByID(nil, preemptEval.ID)
	must.NotNil(t, pe)

	b, _ := s.NodeByID(nil, busy.ID)
	must.Eq(t, structs.NodeSchedulingIneligible, b.SchedulingEligibility)
	must.Eq(t, NodeEventMsgPlanRejected, b.Events[len(b.Events)-1].Message)
	must.Eq(t, 1_700_000_123, b.StatusUpdatedAt)

	for _, table := range []string{TableAllocs, TableEvals, TableDeployment, TableNodes} {
		must.Eq(t, 9, mustIndex(t, s, table), must.Sprintf("table %s", table))
	}
}

func TestPlanResults_StopOfLostNode(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := registered(t, s, 2, mockJob())
	a := mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{a}))
	must.NoError(t, s.UpsertPlanResults(4, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{
			AllocsStopped: []*structs.AllocationDiff{{
				ID: a.ID, DesiredDescription: structs.AllocLost,
				ClientStatus: structs.AllocClientStatusLost, FollowupEvalID: "follow",
			}},
			Job: job,
		},
	}))
	out, _ := s.AllocByID(nil, a.ID)
	must.Eq(t, structs.AllocClientStatusLost, out.ClientStatus)
	must.Eq(t, "follow", out.FollowupEvalID)
	sum, _ := s.JobSummaryByID(nil, job.Namespace, job.ID)
	must.Eq(t, structs.TaskGroupSummary{Lost: 1}, sum.Summary["web"])
	j, _ := s.JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, structs.JobStatusDead, j.Status)
}

// A plan result whose stopped alloc was garbage collected meanwhile fails
// whole: none of its placements, evals or deployment are applied.
func TestPlanResults_Atomic(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := registered(t, s, 2, mockJob())
	placed := mockAlloc(job, node)
	dep := mockDeployment(job)
	pe := mockEval(job)
	err := s.UpsertPlanResults(3, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{
			AllocsUpdated: []*structs.Allocation{placed},
			AllocsStopped: []*structs.AllocationDiff{{ID: "collected"}},
			Job:           job,
		},
		Deployment:      dep,
		PreemptionEvals: []*structs.Evaluation{pe},
	})
	must.ErrorContains(t, err, `alloc "collected" to stop`)
	a, _ := s.AllocByID(nil, placed.ID)
	must.Nil(t, a)
	d, _ := s.DeploymentByID(nil, dep.ID)
	must.Nil(t, d)
	e, _ := s.EvalByID(nil, pe.ID)
	must.Nil(t, e)
	latest, _ := s.LatestIndex()
	must.Eq(t, 2, latest)
}

// TestPlanResults_PlannedDeploymentKeepsStoredCounters: a plan that
// carries an existing deployment (the scheduler changed its desired
// canaries) was built on a snapshot; a health verdict and a promotion
// committed since must survive it, while the scheduler's own fields win.
func TestPlanResults_PlannedDeploymentKeepsStoredCounters(t *testing.T) {
	s := testStore(t)
	job := registered(t, s, 1, mockJob())
	dep := mockDeployment(job)
	dep.TaskGroups["web"].PlacedCanaries = []string{"c0"}
	must.NoError(t, s.UpsertDeployment(2, dep))

	// The scheduler's copy, taken now.
	planned := dep.Copy()
	planned.TaskGroups["web"].DesiredCanaries = 2
	planned.TaskGroups["web"].PlacedCanaries = append(planned.TaskGroups["web"].PlacedCanaries, "c1")

	// Meanwhile: the watcher records health and an operator promotes.
	moved := dep.Copy()
	moved.TaskGroups["web"].HealthyAllocs = 3
	moved.TaskGroups["web"].UnhealthyAllocs = 1
	moved.TaskGroups["web"].Promoted = true
	moved.Status = structs.DeploymentStatusPaused
	must.NoError(t, s.UpsertDeployment(3, moved))

	must.NoError(t, s.UpsertPlanResults(4, &structs.ApplyPlanResultsRequest{Deployment: planned}))

	got, _ := s.DeploymentByID(nil, dep.ID)
	st := got.TaskGroups["web"]
	must.Eq(t, 2, st.DesiredCanaries)                   // the scheduler's
	must.Eq(t, []string{"c0", "c1"}, st.PlacedCanaries) // both
	must.Eq(t, 3, st.HealthyAllocs)                     // the store's
	must.Eq(t, 1, st.UnhealthyAllocs)
	must.True(t, st.Promoted)
	must.Eq(t, structs.DeploymentStatusPaused, got.Status)
}
