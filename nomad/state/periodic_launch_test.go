package state

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

func periodicTemplate() *structs.Job {
	j := mockJob()
	j.ID = "report-" + structs.ShortID(structs.GenerateUUID())
	j.Type = structs.JobTypeBatch
	j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "*/5 * * * *"}
	return j
}

func TestPeriodicLaunch_RecordedByRegistration(t *testing.T) {
	s := testStore(t)
	tmpl := periodicTemplate()
	registered(t, s, 10, tmpl)

	// The template's registration is its first "launch".
	l, err := s.PeriodicLaunchByID(nil, tmpl.Namespace, tmpl.ID)
	must.NoError(t, err)
	must.NotNil(t, l)
	must.True(t, l.Launch.Equal(time.Unix(0, tmpl.SubmitTime)))
	must.Eq(t, 10, l.CreateIndex)
	must.Eq(t, 10, mustIndex(t, s, TablePeriodicLaunch))

	// A new version of the template keeps the record.
	v2 := tmpl.Copy()
	v2.Meta = map[string]string{"v": "2"}
	v2.SubmitTime += int64(time.Hour)
	registered(t, s, 11, v2)
	l, _ = s.PeriodicLaunchByID(nil, tmpl.Namespace, tmpl.ID)
	must.Eq(t, 10, l.ModifyIndex)

	// Registering a child records its launch time for the parent.
	launch := time.Unix(1_700_000_300, 0).UTC()
	child := tmpl.Copy()
	child.ID = structs.PeriodicChildID(tmpl.ID, launch)
	child.ParentID = tmpl.ID
	child.Periodic = nil
	registered(t, s, 12, child)
	l, _ = s.PeriodicLaunchByID(nil, tmpl.Namespace, tmpl.ID)
	must.True(t, l.Launch.Equal(launch))
	must.Eq(t, 10, l.CreateIndex)
	must.Eq(t, 12, l.ModifyIndex)

	// Stopping the child (a new version of it) does not move the record.
	stopped := child.Copy()
	stopped.Stop = true
	registered(t, s, 13, stopped)
	l, _ = s.PeriodicLaunchByID(nil, tmpl.Namespace, tmpl.ID)
	must.Eq(t, 12, l.ModifyIndex)

	// Purging the template forgets its launches.
	must.NoError(t, s.DeleteJob(14, tmpl.Namespace, tmpl.ID))
	l, err = s.PeriodicLaunchByID(nil, tmpl.Namespace, tmpl.ID)
	must.NoError(t, err)
	must.Nil(t, l)
}

func TestPeriodicLaunch_OnlyMovesForward(t *testing.T) {
	s := testStore(t)
	t1 := time.Unix(1_700_000_600, 0).UTC()
	must.NoError(t, s.UpsertPeriodicLaunch(5, &structs.PeriodicLaunch{ID: "r", Namespace: "default", Launch: t1}))
	must.NoError(t, s.UpsertPeriodicLaunch(6, &structs.PeriodicLaunch{ID: "r", Namespace: "default", Launch: t1.Add(-time.Minute)}))
	l, _ := s.PeriodicLaunchByID(nil, "default", "r")
	must.True(t, l.Launch.Equal(t1))
	must.Eq(t, 5, l.ModifyIndex)
	must.Eq(t, 6, mustIndex(t, s, TablePeriodicLaunch), must.Sprint("an ignored write still reaches the index"))

	must.NoError(t, s.UpsertPeriodicLaunch(7, &structs.PeriodicLaunch{ID: "q", Namespace: "default", Launch: t1}))
	all, err := s.PeriodicLaunches(nil)
	must.NoError(t, err)
	must.Len(t, 2, all)
	must.Eq(t, "q", all[0].ID)

	must.ErrorContains(t, s.UpsertPeriodicLaunch(8, &structs.PeriodicLaunch{ID: "r"}), "ID and Namespace are required")
	must.NoError(t, s.DeletePeriodicLaunch(9, "default", "missing"))
	must.NoError(t, s.DeletePeriodicLaunch(10, "default", "r"))
	l, _ = s.PeriodicLaunchByID(nil, "default", "r")
	must.Nil(t, l)
}

func TestPeriodicLaunch_TemplateWithoutSubmitTime(t *testing.T) {
	s := testStore(t)
	tmpl := periodicTemplate()
	tmpl.SubmitTime = 0
	registered(t, s, 3, tmpl)
	l, err := s.PeriodicLaunchByID(nil, tmpl.Namespace, tmpl.ID)
	must.NoError(t, err)
	must.Nil(t, l, must.Sprint("no time to record"))
}
