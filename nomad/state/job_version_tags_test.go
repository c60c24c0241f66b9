package state

import (
	"fmt"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func tagRequest(job *structs.Job, version uint64, name string) *structs.JobApplyTagRequest {
	return &structs.JobApplyTagRequest{JobID: job.ID, Name: name, Version: version,
		Tag: &structs.JobVersionTag{Name: name, Description: "version " + name, TaggedTime: 7}}
}

func TestJobVersionTags_ApplyUniqueUnset(t *testing.T) {
	s := testStore(t)
	job := mockJob()
	for i := 0; i < 3; i++ {
		j := mockJob()
		j.ID = job.ID
		j.Priority = 10 + i
		must.NoError(t, s.UpsertJob(uint64(100+i), j))
	}
	cur, err := s.JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	jobModify := cur.JobModifyIndex

	must.NoError(t, s.UpdateJobVersionTag(200, job.Namespace, tagRequest(job, 1, "v1")))
	got, err := s.JobVersionByTagName(nil, job.Namespace, job.ID, "v1")
	must.NoError(t, err)
	must.Eq(t, uint64(1), got.Version)
	must.Eq(t, "version v1", got.VersionTag.Description)

	// Tagging the current version tags the job too, without a new
	// version or a new JobModifyIndex.
	must.NoError(t, s.UpdateJobVersionTag(201, job.Namespace, tagRequest(job, 2, "v2")))
	cur, err = s.JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Eq(t, "v2", cur.VersionTag.Name)
	must.Eq(t, jobModify, cur.JobModifyIndex)
	must.Eq(t, uint64(2), cur.Version)

	// Retagging the same version with the same name is fine; a name on
	// another version is not.
	must.NoError(t, s.UpdateJobVersionTag(202, job.Namespace, tagRequest(job, 1, "v1")))
	err = s.UpdateJobVersionTag(203, job.Namespace, tagRequest(job, 0, "v1"))
	must.ErrorIs(t, err, structs.ErrConflict)
	must.ErrorContains(t, err, fmt.Sprintf(`tag "v1" already exists on a different version of job %q`, job.ID))

	err = s.UpdateJobVersionTag(204, job.Namespace, tagRequest(job, 99, "x"))
	must.ErrorIs(t, err, structs.ErrNotFound)
	must.ErrorContains(t, err, fmt.Sprintf("job %q version 99 not found", job.ID))

	// A new version starts untagged, even when registered from a tagged
	// copy.
	next := cur.Copy()
	next.Priority = 99
	must.NoError(t, s.UpsertJob(205, next))
	cur, err = s.JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Nil(t, cur.VersionTag)
	must.Eq(t, uint64(3), cur.Version)

	must.NoError(t, s.UpdateJobVersionTag(206, job.Namespace, &structs.JobApplyTagRequest{JobID: job.ID, Name: "v2"}))
	got, err = s.JobVersionByTagName(nil, job.Namespace, job.ID, "v2")
	must.NoError(t, err)
	must.Nil(t, got)
	err = s.UpdateJobVersionTag(207, job.Namespace, &structs.JobApplyTagRequest{JobID: job.ID, Name: "v2"})
	must.ErrorIs(t, err, structs.ErrNotFound)
}

// TestJobVersionTags_KeptBeyondHistory checks that tagged versions do not
// count toward the tracked versions and are never dropped, and that an
// untagged version beyond the window goes as soon as its tag does.
func TestJobVersionTags_KeptBeyondHistory(t *testing.T) {
	s := testStore(t)
	job := mockJob()
	index := uint64(100)
	upsert := func() {
		index++
		j := mockJob()
		j.ID = job.ID
		j.Priority = int(index % 100)
		must.NoError(t, s.UpsertJob(index, j))
	}
	versions := func() []uint64 {
		vs, err := s.JobVersionsByID(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		var out []uint64
		for _, v := range vs {
			out = append(out, v.Version)
		}
		return out
	}
	upsert()
	upsert()
	index++
	must.NoError(t, s.UpdateJobVersionTag(index, job.Namespace, tagRequest(job, 0, "v0")))
	for i := 0; i < 10; i++ {
		upsert()
	}
	must.Eq(t, []uint64{11, 10, 9, 8, 7, 6, 0}, versions())

	index++
	must.NoError(t, s.UpdateJobVersionTag(index, job.Namespace, &structs.JobApplyTagRequest{JobID: job.ID, Name: "v0"}))
	must.Eq(t, []uint64{11, 10, 9, 8, 7, 6}, versions())
}
