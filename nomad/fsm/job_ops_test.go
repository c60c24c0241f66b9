package fsm

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestFSM_ScalingEventsAndVersionTags applies the two entries of job
// scaling and version tags: an event is recorded; a tag is applied,
// refused on another version, and removed.
func TestFSM_ScalingEventsAndVersionTags(t *testing.T) {
	f, _ := newTestFSM(t)
	job := mock.Job()
	mustApply(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	v1 := job.Copy()
	v1.Priority = 70
	mustApply(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: v1})

	count := int64(4)
	mustApply(t, f, 12, structs.ScalingEventRegisterRequestType, &structs.ScalingEventRequest{
		Namespace: job.Namespace, JobID: job.ID, TaskGroup: job.TaskGroups[0].Name,
		ScalingEvent: &structs.ScalingEvent{Count: &count, PreviousCount: 1, Meta: map[string]interface{}{"k": "v"}}})
	events, _, err := f.State().ScalingEventsByJob(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Len(t, 1, events[job.TaskGroups[0].Name])
	must.Eq(t, 12, events[job.TaskGroups[0].Name][0].CreateIndex)

	ns := structs.WriteRequest{Namespace: job.Namespace}
	mustApply(t, f, 13, structs.JobVersionTagRequestType, &structs.JobApplyTagRequest{JobID: job.ID, Name: "a",
		Version: 0, Tag: &structs.JobVersionTag{Name: "a", TaggedTime: 5}, WriteRequest: ns})
	got, err := f.State().JobVersionByTagName(nil, job.Namespace, job.ID, "a")
	must.NoError(t, err)
	must.Eq(t, 0, got.Version)
	err = mustFail(t, f, 14, structs.JobVersionTagRequestType, &structs.JobApplyTagRequest{JobID: job.ID, Name: "a",
		Version: 1, Tag: &structs.JobVersionTag{Name: "a"}, WriteRequest: ns})
	must.ErrorIs(t, err, structs.ErrConflict)
	mustApply(t, f, 15, structs.JobVersionTagRequestType, &structs.JobApplyTagRequest{JobID: job.ID, Name: "a",
		WriteRequest: ns})
	got, err = f.State().JobVersionByTagName(nil, job.Namespace, job.ID, "a")
	must.NoError(t, err)
	must.Nil(t, got)
}
