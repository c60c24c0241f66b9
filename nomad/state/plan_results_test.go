package state

import (
	"reflect"
	"testing"
	"time"

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
			AllocsStopped: []*structs.AllocStop{{
				ID: toStop.ID, DesiredDescription: structs.AllocNotNeeded,
			}},
			AllocsUpdated: []*structs.Allocation{placed},
			Job:           job,
		},
		AllocsPreempted: []*structs.AllocStop{{
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
	must.Eq(t, req.UpdatedAt, stopped.ModifyTime)
	must.Eq(t, placed.ID, stopped.NextAllocation)
	must.Eq(t, 9, stopped.AllocModifyIndex)
	must.NotNil(t, stopped.Job)

	preempted, _ := s.AllocByID(nil, toPreempt.ID)
	must.Eq(t, structs.AllocDesiredStatusEvict, preempted.DesiredStatus)
	must.Eq(t, placed.ID, preempted.PreemptedByAllocation)
	must.Eq(t, req.UpdatedAt, preempted.ModifyTime)

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
			AllocsStopped: []*structs.AllocStop{{
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

// TestPlanResults_StopKeepsStoredAlloc: a stop changes what the decision
// owns and nothing else. The reschedule history in particular is the
// stored alloc's: a replacement placed later builds on it, and losing it
// would let a job reschedule more often than its policy allows.
func TestPlanResults_StopKeepsStoredAlloc(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := registered(t, s, 2, mockJob())
	a := mockAlloc(job, node)
	a.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{{
		RescheduleTime: 100, PrevAllocID: "before", PrevNodeID: "elsewhere", Delay: time.Second,
	}}}
	a.FollowupEvalID = "stored follow-up"
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{a}))
	must.NoError(t, s.UpdateAllocsFromClient(4, []*structs.Allocation{
		{ID: a.ID, ClientStatus: structs.AllocClientStatusFailed},
	}))
	stored, _ := s.AllocByID(nil, a.ID)

	must.NoError(t, s.UpsertPlanResults(5, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{
			AllocsStopped: []*structs.AllocStop{{ID: a.ID, DesiredDescription: structs.AllocRescheduled}},
		},
		UpdatedAt: 1_700_000_000_000_000_000,
	}))
	got, _ := s.AllocByID(nil, a.ID)
	must.Eq(t, structs.AllocDesiredStatusStop, got.DesiredStatus)
	must.Eq(t, structs.AllocRescheduled, got.DesiredDescription)
	must.Eq(t, stored.RescheduleTracker, got.RescheduleTracker)
	must.Eq(t, "stored follow-up", got.FollowupEvalID)
	must.Eq(t, structs.AllocClientStatusFailed, got.ClientStatus)
	must.Eq(t, stored.AllocatedResources, got.AllocatedResources)
	must.Eq(t, 1_700_000_000_000_000_000, got.ModifyTime)
}

// TestStoppedAlloc_AppliesEveryField guards the one expansion of the wire
// type: every field a structs.AllocStop carries reaches the alloc written
// (the field of the same name), so no decision travels to the FSM only to
// be dropped there, as the reschedule tracker once was on its way from
// worker to leader to Raft entry.
func TestStoppedAlloc_AppliesEveryField(t *testing.T) {
	stored := &structs.Allocation{ID: "a", DesiredStatus: structs.AllocDesiredStatusRun}
	stop := &structs.AllocStop{}
	sv := reflect.ValueOf(stop).Elem()
	for i := range sv.NumField() {
		f := sv.Type().Field(i)
		must.Eq(t, reflect.String, f.Type.Kind(), must.Sprintf("AllocStop.%s: extend this test to its type", f.Name))
		sv.Field(i).SetString("set " + f.Name)
	}
	stop.ID = stored.ID

	got := stoppedAlloc(stored, stop, structs.AllocDesiredStatusEvict, 42)
	gv := reflect.ValueOf(got).Elem()
	for i := range sv.NumField() {
		name := sv.Type().Field(i).Name
		field := gv.FieldByName(name)
		must.True(t, field.IsValid(), must.Sprintf("AllocStop.%s is no Allocation field", name))
		must.Eq(t, sv.Field(i).String(), field.String(), must.Sprintf("AllocStop.%s not applied", name))
	}
	must.Eq(t, structs.AllocDesiredStatusEvict, got.DesiredStatus)
	must.Eq(t, 42, got.ModifyTime)
	must.Eq(t, structs.AllocDesiredStatusRun, stored.DesiredStatus, must.Sprint("the stored alloc is not changed"))
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
			AllocsStopped: []*structs.AllocStop{{ID: "collected"}},
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
