package state

import (
	"errors"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestJobs_UpsertNew(t *testing.T) {
	s := testStore(t)
	job := mockJob()
	out := registered(t, s, 10, job)

	must.Eq(t, 10, out.CreateIndex)
	must.Eq(t, 10, out.ModifyIndex)
	must.Eq(t, 10, out.JobModifyIndex)
	must.Eq(t, 0, out.Version)
	must.Eq(t, structs.JobStatusPending, out.Status)
	must.Eq(t, job.SubmitTime, out.SubmitTime)
	for _, table := range []string{TableJobs, TableJobVersion, TableJobSummary} {
		must.Eq(t, 10, mustIndex(t, s, table), must.Sprintf("table %s", table))
	}

	summary, err := s.JobSummaryByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Eq(t, 10, summary.CreateIndex)
	must.MapContainsKey(t, summary.Summary, "web")
	must.NotNil(t, summary.Children)

	versions, err := s.JobVersionsByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Len(t, 1, versions)
}

func TestJobs_Versioning(t *testing.T) {
	s := testStore(t)
	job := mockJob()
	registered(t, s, 10, job)

	// Same spec again: no new version, the job is untouched, but the
	// table index still reaches the applied index.
	same := mockJob()
	same.ID = job.ID
	same.SubmitTime = 42
	must.NoError(t, s.UpsertJob(11, same))
	out, _ := s.JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, 0, out.Version)
	must.Eq(t, 10, out.ModifyIndex)
	must.Eq(t, job.SubmitTime, out.SubmitTime)
	must.Eq(t, 11, mustIndex(t, s, TableJobs))

	// A spec change makes version 1.
	changed := mockJob()
	changed.ID = job.ID
	changed.Priority = 70
	changed.SubmitTime = 77
	must.NoError(t, s.UpsertJob(12, changed))
	out, _ = s.JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, 1, out.Version)
	must.Eq(t, 10, out.CreateIndex)
	must.Eq(t, 12, out.ModifyIndex)
	must.Eq(t, 12, out.JobModifyIndex)
	must.Eq(t, 77, out.SubmitTime)

	v0, err := s.JobByIDAndVersion(nil, job.Namespace, job.ID, 0)
	must.NoError(t, err)
	must.Eq(t, 50, v0.Priority)
	v1, _ := s.JobByIDAndVersion(nil, job.Namespace, job.ID, 1)
	must.Eq(t, 70, v1.Priority)
	none, _ := s.JobByIDAndVersion(nil, job.Namespace, job.ID, 9)
	must.Nil(t, none)
}

func TestJobs_VersionHistoryIsBounded(t *testing.T) {
	cases := []struct {
		name       string
		stable     uint64 // version marked stable before the churn; 99 = none
		wantKeep   []uint64
		totalSpecs int
	}{
		{"no stable version", 99, []uint64{9, 8, 7, 6, 5, 4}, 10},
		{"oldest stable kept", 0, []uint64{9, 8, 7, 6, 5, 0}, 10},
		{"stable inside the window", 7, []uint64{9, 8, 7, 6, 5, 4}, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			job := mockJob()
			for i := 0; i < tc.totalSpecs; i++ {
				j := mockJob()
				j.ID = job.ID
				j.Priority = 10 + i
				must.NoError(t, s.UpsertJob(uint64(100+i), j))
				if uint64(i) == tc.stable {
					must.NoError(t, s.UpdateJobStability(uint64(100+i), job.Namespace, job.ID, uint64(i), true))
				}
			}
			versions, err := s.JobVersionsByID(nil, job.Namespace, job.ID)
			must.NoError(t, err)
			var got []uint64
			for _, v := range versions {
				got = append(got, v.Version)
			}
			must.Eq(t, tc.wantKeep, got)
		})
	}
}

func TestJobs_VersionsExactID(t *testing.T) {
	s := testStore(t)
	a := mockJob()
	a.ID = "web"
	b := mockJob()
	b.ID = "web-2"
	registered(t, s, 1, a)
	registered(t, s, 2, b)
	versions, err := s.JobVersionsByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Len(t, 1, versions)
	must.Eq(t, "web", versions[0].ID)
}

func TestJobs_ListByNamespaceAndPrefix(t *testing.T) {
	s := testStore(t)
	mk := func(ns, id string) *structs.Job {
		j := mockJob()
		j.Namespace, j.ID = ns, id
		return j
	}
	for i, j := range []*structs.Job{
		mk("default", "api"), mk("default", "web"), mk("default", "web-2"),
		mk("default2", "web"), mk("prod", "web"),
	} {
		registered(t, s, uint64(i+1), j)
	}
	cases := []struct {
		ns, prefix string
		want       []string
	}{
		{"default", "", []string{"default/api", "default/web", "default/web-2"}},
		{"default", "web", []string{"default/web", "default/web-2"}},
		{"default2", "", []string{"default2/web"}},
		{"*", "", []string{"default/api", "default/web", "default/web-2", "default2/web", "prod/web"}},
		{"*", "web", []string{"default/web", "default/web-2", "default2/web", "prod/web"}},
		{"nope", "", nil},
	}
	for _, tc := range cases {
		got, err := s.JobsByIDPrefix(nil, tc.ns, tc.prefix)
		must.NoError(t, err)
		var ids []string
		for _, j := range got {
			ids = append(ids, j.Namespace+"/"+j.ID)
		}
		must.Eq(t, tc.want, ids, must.Sprintf("ns %q prefix %q", tc.ns, tc.prefix))
	}
	all, err := s.Jobs(nil, "default")
	must.NoError(t, err)
	must.Len(t, 3, all)
}

func TestJobs_IndexesByTypeGCAndPeriodic(t *testing.T) {
	s := testStore(t)
	svc := mockJob()
	batch := mockJob()
	batch.Type = structs.JobTypeBatch
	periodic := mockJob()
	periodic.Type = structs.JobTypeBatch
	periodic.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "* * * * *"}
	system := mockJob()
	system.Type = structs.JobTypeSystem
	registered(t, s, 1, svc)
	registered(t, s, 2, batch)
	registered(t, s, 3, periodic)
	registered(t, s, 4, system)

	systems, err := s.JobsByType(nil, structs.JobTypeSystem)
	must.NoError(t, err)
	must.Len(t, 1, systems)
	must.Eq(t, system.ID, systems[0].ID)
	// Only the node-scoped types are indexed.
	_, err = s.JobsByType(nil, structs.JobTypeBatch)
	must.ErrorIs(t, err, structs.ErrInvalid)

	templates, err := s.PeriodicJobs(nil)
	must.NoError(t, err)
	must.Len(t, 1, templates)
	must.Eq(t, periodic.ID, templates[0].ID)

	gc, err := s.GCableJobs(nil)
	must.NoError(t, err)
	must.Len(t, 0, gc)
	// The batch job becomes dead once its only eval completes: GC-able.
	ev := mockEval(batch)
	ev.Status = structs.EvalStatusComplete
	must.NoError(t, s.UpsertEvals(5, []*structs.Evaluation{ev}))
	gc, err = s.GCableJobs(nil)
	must.NoError(t, err)
	must.Len(t, 1, gc)
	must.Eq(t, batch.ID, gc[0].ID)

	// A template that is no longer periodic leaves the index.
	plain := periodic.Copy()
	plain.Periodic = nil
	registered(t, s, 6, plain)
	templates, err = s.PeriodicJobs(nil)
	must.NoError(t, err)
	must.Len(t, 0, templates)
}

func TestJobs_Delete(t *testing.T) {
	s := testStore(t)
	job := mockJob()
	registered(t, s, 1, job)
	v2 := mockJob()
	v2.ID = job.ID
	v2.Priority = 90
	must.NoError(t, s.UpsertJob(2, v2))
	other := mockJob()
	registered(t, s, 3, other)

	must.NoError(t, s.DeleteJob(4, job.Namespace, job.ID))
	out, _ := s.JobByID(nil, job.Namespace, job.ID)
	must.Nil(t, out)
	versions, _ := s.JobVersionsByID(nil, job.Namespace, job.ID)
	must.Len(t, 0, versions)
	summary, _ := s.JobSummaryByID(nil, job.Namespace, job.ID)
	must.Nil(t, summary)
	for _, table := range []string{TableJobs, TableJobVersion, TableJobSummary} {
		must.Eq(t, 4, mustIndex(t, s, table), must.Sprintf("table %s", table))
	}
	// The other job is untouched.
	o, _ := s.JobByID(nil, other.Namespace, other.ID)
	must.NotNil(t, o)

	err := s.DeleteJob(5, job.Namespace, job.ID)
	must.True(t, errors.Is(err, structs.ErrUnknownJob))
}

func TestJobs_UpsertInvalid(t *testing.T) {
	s := testStore(t)
	noNS := mockJob()
	noNS.Namespace = ""
	cases := []struct {
		name string
		job  *structs.Job
		want string
	}{
		{"nil", nil, "job is nil"},
		{"no id", &structs.Job{Namespace: "default"}, "ID is required"},
		{"no namespace", noNS, "Namespace is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.ErrorContains(t, s.UpsertJob(1, tc.job), tc.want)
			must.Eq(t, 0, mustIndex(t, s, TableJobs))
		})
	}
}

func TestJobs_Stability(t *testing.T) {
	s := testStore(t)
	job := mockJob()
	registered(t, s, 1, job)
	must.NoError(t, s.UpdateJobStability(2, job.Namespace, job.ID, 0, true))
	cur, _ := s.JobByID(nil, job.Namespace, job.ID)
	must.True(t, cur.Stable)
	must.Eq(t, 0, cur.Version)
	must.Eq(t, 2, cur.ModifyIndex)
	v0, _ := s.JobByIDAndVersion(nil, job.Namespace, job.ID, 0)
	must.True(t, v0.Stable)

	// A newer version: marking the old one unstable leaves the current job.
	v1 := mockJob()
	v1.ID = job.ID
	v1.Priority = 1
	must.NoError(t, s.UpsertJob(3, v1))
	must.NoError(t, s.UpdateJobStability(4, job.Namespace, job.ID, 0, false))
	cur, _ = s.JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, 1, cur.Version)
	must.Eq(t, 3, cur.ModifyIndex)
	old, _ := s.JobByIDAndVersion(nil, job.Namespace, job.ID, 0)
	must.False(t, old.Stable)
	// Unknown versions are ignored.
	must.NoError(t, s.UpdateJobStability(5, job.Namespace, job.ID, 42, true))
}
