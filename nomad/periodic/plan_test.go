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

// template returns a batch job "report" launched on spec.
func template(spec string) *structs.Job {
	j := mock.BatchJob(mock.JobID("report"))
	j.Periodic = &structs.PeriodicConfig{Enabled: true, SpecType: structs.PeriodicSpecCron, Spec: spec}
	return j
}

// clockAt returns leadertest.Start (09:00 UTC) plus d.
func clockAt(d time.Duration) time.Time { return leadertest.Start.Add(d) }

func TestPlanLaunches(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	must.NoError(t, err)
	cases := []struct {
		name string
		// setup registers the template (at 09:00) and what else the case
		// needs, and returns the dispatcher's memory.
		setup func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time
		now   time.Time
		// launches are the expected launch times; skipped likewise.
		launches, skipped []time.Time
		wake              time.Time
		firstSeen         bool
	}{
		{
			name:  "registered at 09:00, every 15m: nothing before 09:15",
			setup: register(template("*/15 * * * *")),
			now:   clockAt(10 * time.Minute),
			wake:  clockAt(15 * time.Minute),
		},
		{
			name:     "09:15: launch, look again at 09:30",
			setup:    register(template("*/15 * * * *")),
			now:      clockAt(15 * time.Minute),
			launches: []time.Time{clockAt(15 * time.Minute)},
			wake:     clockAt(30 * time.Minute),
		},
		{
			name: "launched at 09:15: nothing at 09:20",
			setup: func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time {
				register(template("*/15 * * * *"))(c)
				launched(c, clockAt(15*time.Minute))
				return nil
			},
			now:  clockAt(20 * time.Minute),
			wake: clockAt(30 * time.Minute),
		},
		{
			// 09:30, 09:45 and 10:00 passed with no leader: one launch,
			// now (to the second), then back on the schedule.
			name: "missed launches: one launch now",
			setup: func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time {
				register(template("*/15 * * * *"))(c)
				launched(c, clockAt(15*time.Minute))
				return nil
			},
			now:      clockAt(67*time.Minute + 30*time.Second + 500*time.Millisecond),
			launches: []time.Time{clockAt(67*time.Minute + 30*time.Second)},
			wake:     clockAt(75 * time.Minute),
		},
		{
			// 02:00 in Tokyo is 17:00 UTC the day before.
			name: "time zone: daily at 02:00 Asia/Tokyo",
			setup: func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time {
				j := template("0 2 * * *")
				j.Periodic.TimeZone = "Asia/Tokyo"
				return register(j)(c)
			},
			now:      clockAt(8 * time.Hour),
			launches: []time.Time{time.Date(2026, 3, 3, 2, 0, 0, 0, tokyo)},
			wake:     time.Date(2026, 3, 4, 2, 0, 0, 0, tokyo),
		},
		{
			name: "overlap prohibited, a child still running: skipped",
			setup: func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time {
				j := template("*/15 * * * *")
				j.Periodic.ProhibitOverlap = true
				register(j)(c)
				launched(c, clockAt(15*time.Minute)) // pending: not dead
				return nil
			},
			now:     clockAt(30 * time.Minute),
			skipped: []time.Time{clockAt(30 * time.Minute)},
			wake:    clockAt(45 * time.Minute),
		},
		{
			name: "overlap prohibited, the child is dead: launch",
			setup: func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time {
				j := template("*/15 * * * *")
				j.Periodic.ProhibitOverlap = true
				register(j)(c)
				child := launched(c, clockAt(15*time.Minute))
				c.Write(func(tx *state.Txn) error {
					evals, _ := c.Store.EvalsByJob(nil, child.Namespace, child.ID)
					done := evals[0].Copy()
					done.Status = structs.EvalStatusComplete
					return tx.UpsertEvals([]*structs.Evaluation{done})
				})
				return nil
			},
			now:      clockAt(30 * time.Minute),
			launches: []time.Time{clockAt(30 * time.Minute)},
			wake:     clockAt(45 * time.Minute),
		},
		{
			name: "a skipped launch is not retried",
			setup: func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time {
				register(template("*/15 * * * *"))(c)
				return map[structs.NamespacedID]time.Time{{ID: "report", Namespace: "default"}: clockAt(30 * time.Minute)}
			},
			now:  clockAt(35 * time.Minute),
			wake: clockAt(45 * time.Minute),
		},
		{
			name: "stopped template: nothing",
			setup: func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time {
				j := template("*/15 * * * *")
				j.Stop = true
				return register(j)(c)
			},
			now: clockAt(time.Hour),
		},
		{
			name: "parameterized template: nothing",
			setup: func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time {
				j := template("*/15 * * * *")
				j.ParameterizedJob = &structs.ParameterizedJobConfig{}
				return register(j)(c)
			},
			now: clockAt(time.Hour),
		},
		{
			name: "nothing to count from: from now",
			setup: func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time {
				j := template("*/15 * * * *")
				c.Write(func(tx *state.Txn) error { return tx.UpsertJob(j) }) // no submit time
				return nil
			},
			now:       clockAt(20 * time.Minute),
			wake:      clockAt(30 * time.Minute),
			firstSeen: true,
		},
		{
			name:  "a spec that never fires again",
			setup: register(template("0 0 1 1 * 2020")),
			now:   clockAt(time.Hour),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := leadertest.New(t)
			after := tc.setup(c)
			p, err := planLaunches(&c.Store.Snapshot().StateStore, nil, tc.now, after)
			must.NoError(t, err)
			must.Eq(t, tc.launches, launchTimes(p.launches))
			must.Eq(t, tc.skipped, launchTimes(p.skipped))
			must.True(t, p.wakeAt.Equal(tc.wake), must.Sprintf("wake at %v, want %v", p.wakeAt, tc.wake))
			must.Eq(t, tc.firstSeen, len(p.firstSeen) == 1)
		})
	}
}

func launchTimes(ls []launch) []time.Time {
	var out []time.Time
	for _, l := range ls {
		out = append(out, l.at.UTC())
	}
	return out
}

// register returns a setup registering the template at the cluster's
// current time.
func register(j *structs.Job) func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time {
	return func(c *leadertest.Cluster) map[structs.NamespacedID]time.Time {
		c.Register(j)
		return nil
	}
}

// launched registers the child "report" launched at at, with its eval.
func launched(c *leadertest.Cluster, at time.Time) *structs.Job {
	tmpl := c.Job("default", "report")
	ch := child(tmpl, at, at)
	c.Write(func(tx *state.Txn) error {
		if err := tx.UpsertJob(ch); err != nil {
			return err
		}
		return tx.UpsertEvals([]*structs.Evaluation{launchEval(ch, at)})
	})
	return c.Job(ch.Namespace, ch.ID)
}

func TestChild(t *testing.T) {
	tmpl := template("*/15 * * * *")
	tmpl.Version, tmpl.Stable, tmpl.CreateIndex, tmpl.JobModifyIndex = 3, true, 10, 12
	tmpl.Status = structs.JobStatusRunning
	at := clockAt(15 * time.Minute) // 2026-03-02 09:15 UTC
	c := child(tmpl, at, at.Add(time.Second))
	must.Eq(t, "report/periodic-1772442900", c.ID)
	must.Eq(t, c.ID, c.Name)
	must.Eq(t, "report", c.ParentID)
	must.Nil(t, c.Periodic)
	must.True(t, c.RequiresEval())
	must.Eq(t, uint64(0), c.Version)
	must.False(t, c.Stable)
	must.Eq(t, "", c.Status)
	must.Eq(t, at.Add(time.Second).UnixNano(), c.SubmitTime)
	must.NotNil(t, tmpl.Periodic, must.Sprint("the template is not changed"))

	ev := launchEval(c, at)
	must.Eq(t, structs.EvalTriggerPeriodicJob, ev.TriggeredBy)
	must.Eq(t, c.ID, ev.JobID)
	must.Eq(t, structs.JobTypeBatch, ev.Type)
	must.Eq(t, structs.EvalStatusPending, ev.Status)
}
