package fsm

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestFSM_PlanResultsJobForms: a plan result applies alike whether it
// carries its job (every entry written before structs.JobVersionRef, and
// every one the leader writes while a server of an older build remains)
// or names the stored version; a name that no longer resolves is refused
// with nothing written.
func TestFSM_PlanResultsJobForms(t *testing.T) {
	type setup struct {
		f    *FSM
		node *structs.Node
		job  *structs.Job // as stored at index 11
	}
	start := func(t *testing.T) setup {
		f, _ := newTestFSM(t)
		node, job := mock.Node(), mock.Job(mock.Count(1))
		mustApply(t, f, 10, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
		mustApply(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
		stored, err := f.State().JobByID(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		return setup{f: f, node: node, job: stored}
	}
	place := func(s setup) *structs.Allocation {
		a := mock.Alloc(mock.ForJob(s.job, 0), mock.OnNode(s.node))
		a.Job = nil // sent without it, as the plan applier does
		return a
	}
	carried := func(s setup, a *structs.Allocation) *structs.ApplyPlanResultsRequest {
		return &structs.ApplyPlanResultsRequest{AllocUpdateRequest: structs.AllocUpdateRequest{
			AllocsUpdated: []*structs.Allocation{a}, Job: s.job}}
	}
	named := func(s setup, a *structs.Allocation) *structs.ApplyPlanResultsRequest {
		return &structs.ApplyPlanResultsRequest{AllocUpdateRequest: structs.AllocUpdateRequest{
			AllocsUpdated: []*structs.Allocation{a}}, JobRef: s.job.VersionRef()}
	}

	for _, form := range []struct {
		name  string
		build func(setup, *structs.Allocation) *structs.ApplyPlanResultsRequest
	}{{"job carried", carried}, {"job named", named}} {
		t.Run(form.name, func(t *testing.T) {
			s := start(t)
			a := place(s)
			mustApply(t, s.f, 12, structs.ApplyPlanResultsRequestType, form.build(s, a))

			got, err := s.f.State().AllocByID(nil, a.ID)
			must.NoError(t, err)
			must.NotNil(t, got)
			version, err := s.f.State().JobByIDAndVersion(nil, s.job.Namespace, s.job.ID, s.job.Version)
			must.NoError(t, err)
			must.True(t, got.Job == version, must.Sprint("the alloc shares the stored version"))
			summary, err := s.f.State().JobSummaryByID(nil, s.job.Namespace, s.job.ID)
			must.NoError(t, err)
			must.Eq(t, 1, summary.Summary[a.TaskGroup].Starting)
		})
	}

	refused := []struct {
		name   string
		before func(t *testing.T, s setup) // what happens between the judging and the commit
		ref    func(s setup) *structs.JobVersionRef
	}{
		{
			name: "the job was purged",
			before: func(t *testing.T, s setup) {
				mustApply(t, s.f, 12, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{
					JobID: s.job.ID, Purge: true, WriteRequest: structs.WriteRequest{Namespace: s.job.Namespace}})
			},
			ref: func(s setup) *structs.JobVersionRef { return s.job.VersionRef() },
		},
		{
			name: "the job was purged and registered again",
			before: func(t *testing.T, s setup) {
				mustApply(t, s.f, 12, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{
					JobID: s.job.ID, Purge: true, WriteRequest: structs.WriteRequest{Namespace: s.job.Namespace}})
				again := mock.Job(mock.JobID(s.job.ID), mock.Count(1))
				mustApply(t, s.f, 13, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: again})
			},
			ref: func(s setup) *structs.JobVersionRef { return s.job.VersionRef() },
		},
		{
			name:   "a version never written",
			before: func(*testing.T, setup) {},
			ref: func(s setup) *structs.JobVersionRef {
				r := s.job.VersionRef()
				r.Version++
				return r
			},
		},
	}
	for _, c := range refused {
		t.Run("refused: "+c.name, func(t *testing.T) {
			s := start(t)
			c.before(t, s)
			a := place(s)
			req := &structs.ApplyPlanResultsRequest{AllocUpdateRequest: structs.AllocUpdateRequest{
				AllocsUpdated: []*structs.Allocation{a}}, JobRef: c.ref(s)}
			err := mustFail(t, s.f, 20, structs.ApplyPlanResultsRequestType, req)
			must.True(t, errors.Is(err, structs.ErrNotFound), must.Sprintf("error %v", err))
			got, _ := s.f.State().AllocByID(nil, a.ID)
			must.Nil(t, got)
		})
	}
}
