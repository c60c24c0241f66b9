package deploymentwatcher

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/leadertest"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// These tests drive roll-outs end to end on the fake clock: a watcher
// pass, the real scheduler over the pending evals, the clients starting
// and stopping what they were told, five seconds; repeat.

type rig struct {
	c    *leadertest.Cluster
	raft *StateRaft
	w    *Watcher
	// hold keeps clients from starting allocs (they still stop those
	// the servers stopped).
	hold bool
}

// newRig is a cluster whose watcher is configured as on a server:
// verdicts go in batch entries, and a roll-out that may be over is
// settled by a dry run of the scheduler.
func newRig(t *testing.T) *rig {
	return newRigWith(t, scheduler.Builtin())
}

// newRigWith is newRig with the watcher's dry-run schedulers; nil
// means the watcher asks for an eval after every verdict, as before it
// ran the scheduler itself.
func newRigWith(t *testing.T, schedulers scheduler.Factories) *rig {
	c := leadertest.New(t)
	for i := 0; i < 4; i++ {
		c.AddNodes(mock.Node())
	}
	r := &rig{c: c, raft: NewStateRaft(c.State)}
	var err error
	r.w, err = New(Config{State: c.State, Raft: r.raft, Clock: c.Clock, AllocHealthBatch: func() bool { return true },
		Schedulers: schedulers})
	must.NoError(t, err)
	return r
}

// webJob is a service job "web" of 3 allocs rolled one at a time, judged
// on task states (10s min healthy time, 1m healthy deadline), with a 5m
// progress deadline.
func webJob() *structs.Job {
	j := mock.Job(mock.JobID("web"), mock.Count(3))
	j.TaskGroups[0].Update = &structs.UpdateStrategy{
		Stagger: 30 * time.Second, MaxParallel: 1, HealthCheck: structs.UpdateHealthCheckTaskStates,
		MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute, ProgressDeadline: 5 * time.Minute,
	}
	return j
}

// version returns a new version of job: the same spec with another
// environment, edited by edit.
func version(job *structs.Job, n int, edit func(tg *structs.TaskGroup)) *structs.Job {
	j := job.Copy()
	j.TaskGroups[0].Tasks[0].Env = map[string]string{"VERSION": fmt.Sprint(n)}
	if edit != nil {
		edit(j.TaskGroups[0])
	}
	j.SubmitTime = 0
	return j
}

func (r *rig) pass(t *testing.T) {
	t.Helper()
	_, _, err := r.w.pass(memdb.NewWatchSet(), r.c.Now())
	must.NoError(t, err)
}

// step runs one round: watcher, scheduler, clients, 5s.
func (r *rig) step(t *testing.T) {
	t.Helper()
	r.pass(t)
	r.c.Schedule()
	if r.hold {
		r.c.FinishStopped()
	} else {
		r.c.RunClients()
	}
	r.c.Clock.Advance(5 * time.Second)
}

// until steps until done holds (checking check after every watcher pass).
func (r *rig) until(t *testing.T, what string, done func() bool, check func()) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if done() {
			return
		}
		r.pass(t)
		if check != nil {
			check()
		}
		r.c.Schedule()
		if r.hold {
			r.c.FinishStopped()
		} else {
			r.c.RunClients()
		}
		r.c.Clock.Advance(5 * time.Second)
	}
	t.Fatalf("never reached: %s", what)
}

func (r *rig) latest(t *testing.T) *structs.Deployment {
	t.Helper()
	d, err := r.c.Store.LatestDeploymentByJobID(nil, "default", "web")
	must.NoError(t, err)
	must.NotNil(t, d)
	return d
}

func (r *rig) deployment(t *testing.T, id string) *structs.Deployment {
	t.Helper()
	d, err := r.c.Store.DeploymentByID(nil, id)
	must.NoError(t, err)
	return d
}

// settled reports whether the job's latest deployment is of its current
// version and no longer active.
func (r *rig) settled(t *testing.T) func() bool {
	return func() bool {
		job := r.c.Job("default", "web")
		d, _ := r.c.Store.LatestDeploymentByJobID(nil, "default", "web")
		return d != nil && d.JobVersion == job.Version && !d.Active()
	}
}

// deployV0 registers webJob and rolls it out; version 0 ends stable.
func (r *rig) deployV0(t *testing.T, job *structs.Job) *structs.Job {
	t.Helper()
	r.c.Register(job)
	r.until(t, "version 0 deployed", r.settled(t), nil)
	must.Eq(t, structs.DeploymentStatusSuccessful, r.latest(t).Status)
	v0 := r.c.Job("default", "web")
	must.True(t, v0.Stable)
	return v0
}

func TestRollout_MaxParallelOneBatchAtATime(t *testing.T) {
	for _, tc := range []struct {
		name       string
		schedulers scheduler.Factories
		// watcherEvals: version 0 placed its three allocs at once (one
		// pass of verdicts), version 1 one at a time (three passes).
		// Every pass of verdicts asks for an eval, unless a dry run of
		// the scheduler finds the roll-out over: then the watcher marks
		// the deployment successful itself.
		watcherEvals int
	}{
		{name: "eval after every verdict", watcherEvals: 4},
		{name: "dry run settles the last", schedulers: scheduler.Builtin(), watcherEvals: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testRolloutMaxParallel(t, newRigWith(t, tc.schedulers), tc.watcherEvals)
		})
	}
}

func testRolloutMaxParallel(t *testing.T, r *rig, wantWatcherEvals int) {
	v0 := r.deployV0(t, webJob())

	r.c.Register(version(v0, 1, nil))
	r.until(t, "version 1 deployed", r.settled(t), func() {
		d := r.latest(t)
		if d.JobVersion != 1 {
			return
		}
		// At most max_parallel allocs of the deployment are not healthy.
		unhealthy := 0
		for _, a := range r.c.LiveAllocs(r.c.Job("default", "web")) {
			if a.DeploymentID == d.ID && !a.DeploymentStatus.IsHealthy() {
				unhealthy++
			}
		}
		must.LessEq(t, 1, unhealthy)
	})
	d := r.latest(t)
	must.Eq(t, structs.DeploymentStatusSuccessful, d.Status)
	must.Eq(t, structs.DeploymentStatusDescriptionSuccessful, d.StatusDescription)
	st := d.TaskGroups["web"]
	must.Eq(t, 3, st.PlacedAllocs)
	must.Eq(t, 3, st.HealthyAllocs)
	must.Eq(t, 0, st.UnhealthyAllocs)
	job := r.c.Job("default", "web")
	must.Eq(t, uint64(1), job.Version)
	must.True(t, job.Stable, must.Sprint("a successful deployment marks its version stable"))
	live := r.c.LiveAllocs(job)
	must.Len(t, 3, live)
	for _, a := range live {
		must.Eq(t, uint64(1), a.Job.Version)
		must.True(t, a.DeploymentStatus.IsHealthy())
	}
	watcherEvals := 0
	for _, e := range r.raft.Evals() {
		must.Eq(t, structs.EvalTriggerDeploymentWatcher, e.TriggeredBy)
		watcherEvals++
	}
	must.Eq(t, wantWatcherEvals, watcherEvals)
}

func TestRollout_UnhealthyFailsAndAutoReverts(t *testing.T) {
	r := newRig(t)
	v0 := r.deployV0(t, webJob())

	bad := version(v0, 1, func(tg *structs.TaskGroup) {
		tg.Update.AutoRevert = true
		tg.Update.ProgressDeadline = 0
	})
	r.c.Register(bad)
	d1 := r.latest(t)
	r.until(t, "a version 1 alloc running", func() bool {
		for _, a := range r.c.LiveAllocs(r.c.Job("default", "web")) {
			if a.Job.Version == 1 && a.ClientStatus == structs.AllocClientStatusRunning {
				return true
			}
		}
		return false
	}, nil)
	d1 = r.latest(t)
	must.Eq(t, uint64(1), d1.JobVersion)
	r.c.FailAllocs(func(a *structs.Allocation) bool { return a.Job.Version == 1 })
	r.pass(t)

	failedD := r.deployment(t, d1.ID)
	must.Eq(t, structs.DeploymentStatusFailed, failedD.Status)
	must.Eq(t, structs.DeploymentStatusDescriptionRollback(structs.DeploymentStatusDescriptionFailedAllocations, 0), failedD.StatusDescription)
	job := r.c.Job("default", "web")
	must.Eq(t, uint64(2), job.Version, must.Sprint("version 0 registered again as version 2"))
	must.False(t, job.SpecChanged(v0))

	// The reverted version rolls out and ends stable.
	r.until(t, "version 2 deployed", r.settled(t), nil)
	must.Eq(t, structs.DeploymentStatusSuccessful, r.latest(t).Status)
	job = r.c.Job("default", "web")
	must.True(t, job.Stable)
	for _, a := range r.c.LiveAllocs(job) {
		must.Eq(t, uint64(2), a.Job.Version)
	}
}

func TestRollout_ProgressDeadline(t *testing.T) {
	r := newRig(t)
	v0 := r.deployV0(t, webJob())

	// Version 1's allocs never start: each goes unhealthy at its healthy
	// deadline (30s), which does not fail a deployment with a progress
	// deadline; the deadline (1m) does.
	slow := version(v0, 1, func(tg *structs.TaskGroup) {
		tg.Update.HealthyDeadline = 30 * time.Second
		tg.Update.ProgressDeadline = time.Minute
	})
	r.c.Register(slow)
	r.hold = true
	start := r.c.Now()
	r.until(t, "version 1 failed", func() bool {
		d := r.latest(t)
		return d.JobVersion == 1 && d.Status == structs.DeploymentStatusFailed
	}, nil)
	d := r.latest(t)
	must.Eq(t, structs.DeploymentStatusDescriptionProgressDeadline, d.StatusDescription)
	must.GreaterEq(t, time.Minute, r.c.Now().Sub(start), must.Sprint("not before the progress deadline"))
	must.Eq(t, uint64(1), r.c.Job("default", "web").Version, must.Sprint("no auto-revert asked"))
}

func TestRollout_CanaryAutoPromote(t *testing.T) {
	r := newRig(t)
	v0 := r.deployV0(t, webJob())

	r.c.Register(version(v0, 1, func(tg *structs.TaskGroup) {
		tg.Update.Canary, tg.Update.AutoPromote = 1, true
	}))
	r.until(t, "version 1 deployed", r.settled(t), nil)
	d := r.latest(t)
	must.Eq(t, structs.DeploymentStatusSuccessful, d.Status)
	st := d.TaskGroups["web"]
	must.True(t, st.Promoted)
	must.Eq(t, 1, st.DesiredCanaries)
	must.Len(t, 1, st.PlacedCanaries)
	must.Len(t, 1, r.raft.Promotions())
	job := r.c.Job("default", "web")
	must.True(t, job.Stable)
	live := r.c.LiveAllocs(job)
	must.Len(t, 3, live)
	for _, a := range live {
		must.Eq(t, uint64(1), a.Job.Version)
	}
}

// The watcher cancels the deployment of a job stopped or registered again
// before the scheduler gets to it.
func TestRollout_StoppedOrNewerJobCancels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *rig, v0 *structs.Job)
		desc   string
	}{
		{"stopped", func(r *rig, _ *structs.Job) { r.c.Stop("default", "web") }, structs.DeploymentStatusDescriptionStoppedJob},
		{"newer version", func(r *rig, v0 *structs.Job) { r.c.Register(version(v0, 2, nil)) }, structs.DeploymentStatusDescriptionNewerJob},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			v0 := r.deployV0(t, webJob())
			r.c.Register(version(v0, 1, nil))
			r.step(t)
			d1 := r.latest(t)
			must.Eq(t, uint64(1), d1.JobVersion)
			must.True(t, d1.Active())

			tc.change(r, v0)
			r.pass(t)
			d := r.deployment(t, d1.ID)
			must.Eq(t, structs.DeploymentStatusCancelled, d.Status)
			must.Eq(t, tc.desc, d.StatusDescription)
		})
	}
}
