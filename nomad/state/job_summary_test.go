package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestJobSummary_FollowsAllocsAndEvals(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	job := registered(t, s, 2, mockJob())

	web := func() structs.TaskGroupSummary {
		t.Helper()
		sum, err := s.JobSummaryByID(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		return sum.Summary["web"]
	}

	// The scheduler could place nothing yet: two queued.
	ev := mockEval(job)
	ev.Status = structs.EvalStatusComplete
	ev.QueuedAllocations = map[string]int{"web": 2, "ghost": 1}
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{ev}))
	must.Eq(t, structs.TaskGroupSummary{Queued: 2}, web())
	must.Eq(t, 3, mustIndex(t, s, TableJobSummary))

	a1, a2 := mockAlloc(job, node), mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{a1, a2}))
	must.Eq(t, structs.TaskGroupSummary{Starting: 2}, web())

	steps := []struct {
		index    uint64
		alloc    *structs.Allocation
		status   string
		expected structs.TaskGroupSummary
	}{
		{5, a1, structs.AllocClientStatusRunning, structs.TaskGroupSummary{Starting: 1, Running: 1}},
		{6, a2, structs.AllocClientStatusRunning, structs.TaskGroupSummary{Running: 2}},
		{7, a1, structs.AllocClientStatusFailed, structs.TaskGroupSummary{Running: 1, Failed: 1}},
		{8, a2, structs.AllocClientStatusComplete, structs.TaskGroupSummary{Failed: 1, Complete: 1}},
		// Re-reporting the same status changes nothing.
		{9, a2, structs.AllocClientStatusComplete, structs.TaskGroupSummary{Failed: 1, Complete: 1}},
	}
	for _, st := range steps {
		upd := &structs.Allocation{ID: st.alloc.ID, ClientStatus: st.status}
		must.NoError(t, s.UpdateAllocsFromClient(st.index, []*structs.Allocation{upd}))
		must.Eq(t, st.expected, web(), must.Sprintf("after index %d", st.index))
	}

	// The servers mark a1 lost: the scheduler's status wins over the
	// client's.
	lost := a1.Copy()
	lost.DesiredStatus = structs.AllocDesiredStatusStop
	lost.ClientStatus = structs.AllocClientStatusLost
	must.NoError(t, s.UpsertAllocs(10, []*structs.Allocation{lost}))
	must.Eq(t, structs.TaskGroupSummary{Complete: 1, Lost: 1}, web())
}

func TestJobSummary_OtherInstanceNotCounted(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	old := registered(t, s, 2, mockJob())
	a := mockAlloc(old, node)
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{a}))

	// Purge and register again: a new instance with a fresh summary.
	must.NoError(t, s.DeleteJob(4, old.Namespace, old.ID))
	fresh := mockJob()
	fresh.ID = old.ID
	registered(t, s, 5, fresh)

	upd := &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning}
	must.NoError(t, s.UpdateAllocsFromClient(6, []*structs.Allocation{upd}))
	sum, _ := s.JobSummaryByID(nil, fresh.Namespace, fresh.ID)
	must.Eq(t, structs.TaskGroupSummary{}, sum.Summary["web"])
}

func TestJobSummary_NewGroupsAdded(t *testing.T) {
	s := testStore(t)
	job := registered(t, s, 1, mockJob())
	v2 := mockJob()
	v2.ID = job.ID
	v2.TaskGroups = append(v2.TaskGroups, &structs.TaskGroup{Name: "cache", Count: 1})
	must.NoError(t, s.UpsertJob(2, v2))
	sum, _ := s.JobSummaryByID(nil, job.Namespace, job.ID)
	must.MapContainsKeys(t, sum.Summary, []string{"web", "cache"})
	must.Eq(t, 1, sum.CreateIndex)
	must.Eq(t, 2, sum.ModifyIndex)
}

func TestJobSummary_Reconcile(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	parent := mockJob()
	parent.ParameterizedJob = &structs.ParameterizedJobConfig{}
	parent = registered(t, s, 2, parent)
	job := mockJob()
	job.ParentID = parent.ID
	job = registered(t, s, 3, job)

	running, failed := mockAlloc(job, node), mockAlloc(job, node)
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{running, failed}))
	must.NoError(t, s.UpdateAllocsFromClient(5, []*structs.Allocation{
		{ID: running.ID, ClientStatus: structs.AllocClientStatusRunning},
		{ID: failed.ID, ClientStatus: structs.AllocClientStatusFailed},
	}))
	ev := mockEval(job)
	ev.QueuedAllocations = map[string]int{"web": 3}
	must.NoError(t, s.UpsertEvals(6, []*structs.Evaluation{ev}))

	// Skew the summaries behind the store's back, then reconcile.
	must.NoError(t, s.WithWriteTxn(7, func(tx *Txn) error {
		for _, id := range []string{job.ID, parent.ID} {
			bad := &structs.JobSummary{JobID: id, Namespace: job.Namespace,
				Summary: map[string]structs.TaskGroupSummary{"web": {Running: 40, Queued: 3}}, CreateIndex: 1}
			if err := tx.insert(TableJobSummary, bad); err != nil {
				return err
			}
		}
		return nil
	}))
	must.NoError(t, s.ReconcileJobSummaries(8))

	sum, _ := s.JobSummaryByID(nil, job.Namespace, job.ID)
	must.Eq(t, structs.TaskGroupSummary{Running: 1, Failed: 1, Queued: 3}, sum.Summary["web"])
	must.Eq(t, job.CreateIndex, sum.CreateIndex)
	must.Eq(t, 8, sum.ModifyIndex)
	psum, _ := s.JobSummaryByID(nil, parent.Namespace, parent.ID)
	must.Eq(t, structs.JobChildrenSummary{Running: 1}, *psum.Children)
	all, err := s.JobSummaries(nil)
	must.NoError(t, err)
	must.Len(t, 2, all)
}
