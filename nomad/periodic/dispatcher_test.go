package periodic

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/leadertest"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// These tests run the dispatcher's own goroutine on the fake clock.

type rig struct {
	c     *leadertest.Cluster
	raft  *StateRaft
	d     *Dispatcher
	probe *leadertest.Probe
}

func newRig(t *testing.T) *rig {
	c := leadertest.New(t)
	c.AddNodes(mock.Node(), mock.Node())
	r := &rig{c: c, raft: NewStateRaft(c.State)}
	var err error
	r.d, err = New(Config{State: c.State, Raft: r.raft, Clock: c.Clock})
	must.NoError(t, err)
	return r
}

// start enables the dispatcher with a probe and waits for its first pass.
func (r *rig) start(t *testing.T) {
	t.Helper()
	r.probe = leadertest.NewProbe(t)
	r.d.loop.SetOnPass(r.probe.Record)
	r.d.SetEnabled(true)
	t.Cleanup(func() { r.d.SetEnabled(false) })
	r.probe.Sync(r.c, r.d.loop.Poke)
}

// advanceTo moves the clock to at a minute at a time, so the dispatcher
// wakes at every launch on the way (one Advance over several launches
// would look like launches missed).
func (r *rig) advanceTo(t *testing.T, at time.Time) {
	t.Helper()
	for r.c.Now().Before(at) {
		r.probe.Advance(r.c, min(time.Minute, at.Sub(r.c.Now())))
		r.probe.Sync(r.c, r.d.loop.Poke)
	}
}

func (r *rig) childIDs() []string {
	var out []string
	for _, c := range r.raft.Children() {
		out = append(out, c.ID)
	}
	return out
}

func TestDispatcher_LaunchesOnSchedule(t *testing.T) {
	r := newRig(t)
	r.start(t)
	// Registered while the dispatcher runs: it wakes on the new template.
	r.c.Register(template("*/15 * * * *"))
	r.probe.Sync(r.c, r.d.loop.Poke)
	must.Len(t, 0, r.raft.Children())

	r.advanceTo(t, clockAt(15*time.Minute))
	must.Eq(t, []string{structs.PeriodicChildID("report", clockAt(15*time.Minute))}, r.childIDs())

	// The child is in state with its eval; the launch is recorded, and
	// the template counts a pending child.
	child := r.c.Job("default", structs.PeriodicChildID("report", clockAt(15*time.Minute)))
	must.Eq(t, "report", child.ParentID)
	must.Nil(t, child.Periodic)
	must.Eq(t, structs.JobStatusPending, child.Status)
	evals, err := r.c.Store.EvalsByJob(nil, "default", child.ID)
	must.NoError(t, err)
	must.Len(t, 1, evals)
	must.Eq(t, structs.EvalTriggerPeriodicJob, evals[0].TriggeredBy)
	must.Eq(t, structs.EvalStatusPending, evals[0].Status)
	l, err := r.c.Store.PeriodicLaunchByID(nil, "default", "report")
	must.NoError(t, err)
	must.True(t, l.Launch.Equal(clockAt(15*time.Minute)))
	summary, err := r.c.Store.JobSummaryByID(nil, "default", "report")
	must.NoError(t, err)
	must.Eq(t, int64(1), summary.Children.Pending)

	// The scheduler runs it like any batch job.
	r.c.Schedule()
	must.Len(t, 2, r.c.LiveAllocs(child))

	r.advanceTo(t, clockAt(45*time.Minute))
	must.Len(t, 3, r.raft.Children(), must.Sprint("09:15, 09:30, 09:45"))
}

func TestDispatcher_ProhibitOverlap(t *testing.T) {
	r := newRig(t)
	tmpl := template("*/15 * * * *")
	tmpl.Periodic.ProhibitOverlap = true
	r.c.Register(tmpl)
	r.start(t)

	r.advanceTo(t, clockAt(15*time.Minute))
	must.Len(t, 1, r.raft.Children())
	r.c.Schedule()
	r.c.StartAllocs()

	// 09:30: the 09:15 child still runs.
	r.advanceTo(t, clockAt(30*time.Minute))
	must.Len(t, 1, r.raft.Children())

	// It finishes at 09:35; the skipped launch is not made up for.
	r.c.Clock.Advance(5 * time.Minute)
	r.c.CompleteAllocs(func(*structs.Allocation) bool { return true })
	r.probe.Sync(r.c, r.d.loop.Poke)
	must.Len(t, 1, r.raft.Children())

	r.advanceTo(t, clockAt(45*time.Minute))
	must.Eq(t, []string{
		structs.PeriodicChildID("report", clockAt(15*time.Minute)),
		structs.PeriodicChildID("report", clockAt(45*time.Minute)),
	}, r.childIDs())
}

// A new leader catches up on a launch missed while nobody led, once.
func TestDispatcher_RestoreAfterLeaderChange(t *testing.T) {
	r := newRig(t)
	r.c.Register(template("*/15 * * * *"))
	r.start(t)
	r.advanceTo(t, clockAt(15*time.Minute))
	must.Len(t, 1, r.raft.Children())

	r.d.SetEnabled(false)
	r.c.Clock.Advance(52*time.Minute + 30*time.Second) // 10:07:30; 09:30 .. 10:00 missed
	must.Len(t, 1, r.raft.Children())

	d2, err := New(Config{State: r.c.State, Raft: r.raft, Clock: r.c.Clock})
	must.NoError(t, err)
	r.d = d2
	r.start(t)
	must.Eq(t, structs.PeriodicChildID("report", clockAt(67*time.Minute+30*time.Second)), r.childIDs()[1],
		must.Sprint("one catch-up launch, now"))
	must.Len(t, 2, r.raft.Children())

	r.advanceTo(t, clockAt(75*time.Minute))
	must.Eq(t, structs.PeriodicChildID("report", clockAt(75*time.Minute)), r.childIDs()[2])
}

func TestDispatcher_StoppedTemplateLaunchesNothing(t *testing.T) {
	r := newRig(t)
	r.c.Register(template("*/15 * * * *"))
	r.start(t)
	r.c.Write(func(tx *state.Txn) error {
		stopped := r.c.Job("default", "report").Copy()
		stopped.Stop = true
		return tx.UpsertJob(stopped)
	})
	r.probe.Sync(r.c, r.d.loop.Poke)
	r.advanceTo(t, clockAt(2*time.Hour))
	must.Len(t, 0, r.raft.Children())
	must.Eq(t, 0, r.c.Clock.Pending(), must.Sprint("nothing to wake for"))
}

func TestDispatcher_ForceRun(t *testing.T) {
	r := newRig(t)
	r.c.Register(template("0 0 1 1 *")) // yearly
	plain := r.c.Register(mock.BatchJob())
	_, err := r.d.ForceRun("default", "report")
	must.ErrorIs(t, err, ErrDisabled)

	r.start(t)
	r.c.Clock.Advance(90 * time.Second)
	got, err := r.d.ForceRun("default", "report")
	must.NoError(t, err)
	must.Eq(t, structs.PeriodicChildID("report", clockAt(90*time.Second)), got.JobID)
	must.Greater(t, 0, got.Index)
	ev, err := r.c.Store.EvalByID(nil, got.EvalID)
	must.NoError(t, err)
	must.Eq(t, got.JobID, ev.JobID)

	_, err = r.d.ForceRun("default", "report")
	must.ErrorContains(t, err, "launched this second already")
	_, err = r.d.ForceRun("default", plain.ID)
	must.ErrorContains(t, err, "is not periodic")
	_, err = r.d.ForceRun("default", "missing")
	must.ErrorIs(t, err, structs.ErrUnknownJob)
}

func TestDispatcher_ConfigErrors(t *testing.T) {
	_, err := New(Config{Raft: NewStateRaft(nil)})
	must.ErrorContains(t, err, "State is required")
	_, err = New(Config{State: func() *state.StateStore { return nil }})
	must.ErrorContains(t, err, "Raft is required")
}
