package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func TestScalingEvents_NewestFirstBoundedAndPurgedWithJob(t *testing.T) {
	s := testStore(t)
	job := registered(t, s, 10, mockJob())
	index := uint64(10)
	for i := 0; i < structs.JobTrackedScalingEvents+5; i++ {
		index++
		count := int64(i)
		must.NoError(t, s.UpsertScalingEvent(index, &structs.ScalingEventRequest{
			Namespace: job.Namespace, JobID: job.ID, TaskGroup: "web",
			ScalingEvent: &structs.ScalingEvent{Count: &count, Message: "scale"},
		}))
	}
	index++
	must.NoError(t, s.UpsertScalingEvent(index, &structs.ScalingEventRequest{
		Namespace: job.Namespace, JobID: job.ID, TaskGroup: "other",
		ScalingEvent: &structs.ScalingEvent{Error: true, Message: "failed"},
	}))

	events, modify, err := s.ScalingEventsByJob(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Eq(t, index, modify)
	web := events["web"]
	must.Len(t, structs.JobTrackedScalingEvents, web)
	must.Eq(t, int64(structs.JobTrackedScalingEvents+4), *web[0].Count, must.Sprint("newest first"))
	must.Eq(t, index-1, web[0].CreateIndex)
	must.Eq(t, int64(5), *web[len(web)-1].Count, must.Sprint("the oldest are dropped"))
	must.Len(t, 1, events["other"])
	must.Nil(t, events["other"][0].Count)
	must.Eq(t, index, mustIndex(t, s, TableScalingEvents))

	must.NoError(t, s.DeleteJob(index+1, job.Namespace, job.ID))
	events, _, err = s.ScalingEventsByJob(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Nil(t, events)
}

func TestScalingEvents_Invalid(t *testing.T) {
	s := testStore(t)
	cases := map[string]*structs.ScalingEventRequest{
		"no event": {JobID: "j", TaskGroup: "g"},
		"no group": {JobID: "j", ScalingEvent: &structs.ScalingEvent{}},
		"no job":   {TaskGroup: "g", ScalingEvent: &structs.ScalingEvent{}},
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			must.Error(t, s.UpsertScalingEvent(5, req))
		})
	}
}
