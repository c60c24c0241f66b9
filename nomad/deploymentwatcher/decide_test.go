package deploymentwatcher

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// fixture is one deployment of a job with group "web" (update: 10s min
// healthy time, 5m healthy deadline, no progress deadline unless a case
// sets one), created at t0.
type fixture struct {
	job *structs.Job
	d   *structs.Deployment
	st  *structs.DeploymentState
}

func newFixture() *fixture {
	job := mock.Job(mock.Count(3))
	job.Version, job.CreateIndex, job.JobModifyIndex = 1, 10, 20
	job.TaskGroups[0].Update = &structs.UpdateStrategy{
		MaxParallel: 1, HealthCheck: structs.UpdateHealthCheckTaskStates,
		MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute,
	}
	d := structs.NewDeployment(job, 50, t0)
	st := &structs.DeploymentState{DesiredTotal: 3}
	d.TaskGroups["web"] = st
	return &fixture{job: job, d: d, st: st}
}

// alloc returns an alloc of the deployment running since since (zero:
// not started).
func (f *fixture) alloc(since time.Time) *structs.Allocation {
	a := mock.Alloc(mock.ForJob(f.job, 0))
	a.DeploymentID = f.d.ID
	a.CreateTime = t0.UnixNano()
	if !since.IsZero() {
		a.ClientStatus = structs.AllocClientStatusRunning
		a.TaskStates = map[string]*structs.TaskState{"web": {State: structs.TaskStateRunning, StartedAt: since}}
	}
	return a
}

func verdict(a *structs.Allocation, healthy bool, index uint64) *structs.Allocation {
	a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &healthy, ModifyIndex: index}
	return a
}

func failed(a *structs.Allocation) *structs.Allocation {
	a.ClientStatus = structs.AllocClientStatusFailed
	a.TaskStates = map[string]*structs.TaskState{"web": {State: structs.TaskStateDead, Failed: true}}
	return a
}

func canary(f *fixture, a *structs.Allocation) *structs.Allocation {
	if a.DeploymentStatus == nil {
		a.DeploymentStatus = &structs.AllocDeploymentStatus{}
	}
	a.DeploymentStatus.Canary = true
	f.st.PlacedCanaries = append(f.st.PlacedCanaries, a.ID)
	return a
}

func TestDecide(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	cases := []struct {
		name string
		// build edits the fixture and returns the view's allocs.
		build func(f *fixture) []*structs.Allocation
		// edit changes the view (job, last eval index) before deciding.
		edit func(v *view)
		now  time.Time
		// check inspects the decision; allocs are build's.
		check func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision)
	}{
		{
			// Running since t0+5s: healthy at t0+15s.
			name:  "healthy after min_healthy_time: verdict and eval",
			build: func(f *fixture) []*structs.Allocation { return []*structs.Allocation{f.alloc(at(5 * time.Second))} },
			now:   at(20 * time.Second),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Eq(t, []string{allocs[0].ID}, dec.healthy)
				must.True(t, dec.eval)
				must.Nil(t, dec.fail)
			},
		},
		{
			name:  "running for 4s of 10s: wait until it may be healthy",
			build: func(f *fixture) []*structs.Allocation { return []*structs.Allocation{f.alloc(at(16 * time.Second))} },
			now:   at(20 * time.Second),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.False(t, dec.verdicts())
				must.False(t, dec.eval)
				must.Eq(t, at(26*time.Second), dec.wakeAt)
			},
		},
		{
			name: "unhealthy without a progress deadline: fail at once, revert when asked",
			build: func(f *fixture) []*structs.Allocation {
				f.st.AutoRevert = true
				return []*structs.Allocation{f.alloc(at(5 * time.Second)), failed(f.alloc(time.Time{}))}
			},
			now: at(20 * time.Second),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Eq(t, []string{allocs[0].ID}, dec.healthy)
				must.Eq(t, []string{allocs[1].ID}, dec.unhealthy)
				must.NotNil(t, dec.fail)
				must.Eq(t, structs.DeploymentStatusFailed, dec.fail.Status)
				must.Eq(t, structs.DeploymentStatusDescriptionFailedAllocations, dec.fail.StatusDescription)
				must.True(t, dec.revert)
				must.True(t, dec.eval)
			},
		},
		{
			name: "an earlier unhealthy verdict fails too",
			build: func(f *fixture) []*structs.Allocation {
				return []*structs.Allocation{verdict(f.alloc(at(0)), false, 30)}
			},
			edit: func(v *view) { v.lastEvalIndex = 30 },
			now:  at(20 * time.Second),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.False(t, dec.verdicts())
				must.NotNil(t, dec.fail)
				must.False(t, dec.revert)
			},
		},
		{
			// With a progress deadline, unhealthy allocs are left to the
			// scheduler; the deployment waits for RequireProgressBy.
			name: "unhealthy with a progress deadline: no failure yet",
			build: func(f *fixture) []*structs.Allocation {
				f.st.ProgressDeadline, f.st.RequireProgressBy = 10*time.Minute, at(10*time.Minute)
				return []*structs.Allocation{failed(f.alloc(time.Time{}))}
			},
			now: at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Eq(t, []string{allocs[0].ID}, dec.unhealthy)
				must.Nil(t, dec.fail)
				must.True(t, dec.eval)
				must.Eq(t, at(10*time.Minute), dec.wakeAt)
			},
		},
		{
			name: "progress deadline passed with the group not done: fail",
			build: func(f *fixture) []*structs.Allocation {
				f.st.ProgressDeadline, f.st.RequireProgressBy = 10*time.Minute, at(10*time.Minute)
				f.st.HealthyAllocs = 2
				f.st.AutoRevert = true
				return nil
			},
			now: at(10 * time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.NotNil(t, dec.fail)
				must.Eq(t, structs.DeploymentStatusDescriptionProgressDeadline, dec.fail.StatusDescription)
				must.True(t, dec.revert)
			},
		},
		{
			// The deadline starts with the first placement: a deployment
			// that placed nothing (a full cluster) waits however long.
			name: "progress deadline not started: no failure, however late",
			build: func(f *fixture) []*structs.Allocation {
				f.st.ProgressDeadline = 10 * time.Minute
				return nil
			},
			now: at(time.Hour),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Nil(t, dec.fail)
				must.True(t, dec.wakeAt.IsZero())
			},
		},
		{
			name: "progress deadline passed, but the group is done",
			build: func(f *fixture) []*structs.Allocation {
				f.st.ProgressDeadline, f.st.RequireProgressBy = 10*time.Minute, at(10*time.Minute)
				f.st.HealthyAllocs = 3
				return nil
			},
			now: at(11 * time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Nil(t, dec.fail)
			},
		},
		{
			// The verdict pushes RequireProgressBy forward as it lands.
			name: "progress deadline passed while an alloc turned healthy",
			build: func(f *fixture) []*structs.Allocation {
				f.st.ProgressDeadline, f.st.RequireProgressBy = 10*time.Minute, at(10*time.Minute)
				a := f.alloc(at(9 * time.Minute)) // placed at 8m: healthy deadline 13m
				a.CreateTime = at(8 * time.Minute).UnixNano()
				return []*structs.Allocation{a}
			},
			now: at(11 * time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Nil(t, dec.fail)
				must.Len(t, 1, dec.healthy)
			},
		},
		{
			name: "a client's verdict no eval saw: an eval",
			build: func(f *fixture) []*structs.Allocation {
				return []*structs.Allocation{verdict(f.alloc(at(0)), true, 31)}
			},
			edit: func(v *view) { v.lastEvalIndex = 30 },
			now:  at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.False(t, dec.verdicts())
				must.True(t, dec.eval)
			},
		},
		{
			name: "a verdict an eval saw: nothing to do",
			build: func(f *fixture) []*structs.Allocation {
				return []*structs.Allocation{verdict(f.alloc(at(0)), true, 31)}
			},
			edit: func(v *view) { v.lastEvalIndex = 31 },
			now:  at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Eq(t, decision{}, dec)
			},
		},
		{
			name: "paused: verdicts, nothing else",
			build: func(f *fixture) []*structs.Allocation {
				f.d.Status = structs.DeploymentStatusPaused
				return []*structs.Allocation{f.alloc(at(0)), failed(f.alloc(time.Time{})), f.alloc(at(55 * time.Second))}
			},
			now: at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Len(t, 1, dec.healthy)
				must.Len(t, 1, dec.unhealthy)
				must.Nil(t, dec.fail)
				must.False(t, dec.eval)
				must.True(t, dec.wakeAt.IsZero())
			},
		},
		{
			name: "canaries all healthy and auto-promoting: promote",
			build: func(f *fixture) []*structs.Allocation {
				f.st.DesiredCanaries, f.st.AutoPromote = 2, true
				return []*structs.Allocation{canary(f, f.alloc(at(0))), canary(f, verdict(f.alloc(at(0)), true, 31))}
			},
			edit: func(v *view) { v.lastEvalIndex = 31 },
			now:  at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.True(t, dec.promote)
				must.False(t, dec.needsPromotion)
			},
		},
		{
			name: "canaries all healthy, manual promotion: say so",
			build: func(f *fixture) []*structs.Allocation {
				f.st.DesiredCanaries = 1
				return []*structs.Allocation{canary(f, f.alloc(at(0)))}
			},
			now: at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.False(t, dec.promote)
				must.True(t, dec.needsPromotion)
			},
		},
		{
			name: "manual promotion already described",
			build: func(f *fixture) []*structs.Allocation {
				f.st.DesiredCanaries = 1
				f.d.StatusDescription = structs.DeploymentStatusDescriptionRunningNeedsPromotion
				return []*structs.Allocation{canary(f, verdict(f.alloc(at(0)), true, 31))}
			},
			edit: func(v *view) { v.lastEvalIndex = 31 },
			now:  at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Eq(t, decision{}, dec)
			},
		},
		{
			name: "one of two canaries healthy: wait",
			build: func(f *fixture) []*structs.Allocation {
				f.st.DesiredCanaries, f.st.AutoPromote = 2, true
				return []*structs.Allocation{canary(f, f.alloc(at(0))), canary(f, f.alloc(at(55*time.Second)))}
			},
			now: at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.False(t, dec.promote)
				must.Eq(t, at(65*time.Second), dec.wakeAt)
			},
		},
		{
			name: "manual health check and stopped allocs are not judged",
			build: func(f *fixture) []*structs.Allocation {
				stopped := f.alloc(at(0))
				stopped.DesiredStatus = structs.AllocDesiredStatusStop
				f.job.TaskGroups[0].Update.HealthCheck = structs.UpdateHealthCheckManual
				return []*structs.Allocation{stopped, f.alloc(at(0))}
			},
			now: at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Eq(t, decision{}, dec)
			},
		},
		{
			// 2 recorded + 1 fresh = DesiredTotal 3.
			name: "the last verdict completes every group: maybe done",
			build: func(f *fixture) []*structs.Allocation {
				f.st.HealthyAllocs = 2
				return []*structs.Allocation{
					verdict(f.alloc(at(0)), true, 30), verdict(f.alloc(at(0)), true, 30), f.alloc(at(5 * time.Second)),
				}
			},
			edit: func(v *view) { v.lastEvalIndex = 30 },
			now:  at(20 * time.Second),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Eq(t, []string{allocs[2].ID}, dec.healthy)
				must.True(t, dec.eval)
				must.True(t, dec.maybeDone)
			},
		},
		{
			// 1 recorded + 1 fresh < 3.
			name: "verdicts short of the total: not done",
			build: func(f *fixture) []*structs.Allocation {
				f.st.HealthyAllocs = 1
				return []*structs.Allocation{verdict(f.alloc(at(0)), true, 30), f.alloc(at(5 * time.Second))}
			},
			edit: func(v *view) { v.lastEvalIndex = 30 },
			now:  at(20 * time.Second),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.True(t, dec.eval)
				must.False(t, dec.maybeDone)
			},
		},
		{
			// Verdicts recorded after the last eval: the eval is due,
			// and settle may replace it with the success.
			name: "every verdict recorded, none seen by an eval: eval, maybe done",
			build: func(f *fixture) []*structs.Allocation {
				f.st.HealthyAllocs = 3
				return []*structs.Allocation{
					verdict(f.alloc(at(0)), true, 40), verdict(f.alloc(at(0)), true, 40), verdict(f.alloc(at(0)), true, 40),
				}
			},
			edit: func(v *view) { v.lastEvalIndex = 30 },
			now:  at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.False(t, dec.verdicts())
				must.True(t, dec.evalOnly())
				must.True(t, dec.maybeDone)
			},
		},
		{
			name: "an unhealthy alloc still live: not done",
			build: func(f *fixture) []*structs.Allocation {
				f.st.ProgressDeadline, f.st.RequireProgressBy = 10*time.Minute, at(10*time.Minute)
				f.st.HealthyAllocs, f.st.UnhealthyAllocs = 3, 1
				return []*structs.Allocation{
					verdict(f.alloc(at(0)), true, 40), verdict(f.alloc(at(0)), true, 40), verdict(f.alloc(at(0)), true, 40),
					verdict(f.alloc(at(0)), false, 40),
				}
			},
			edit: func(v *view) { v.lastEvalIndex = 30 },
			now:  at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.True(t, dec.eval)
				must.False(t, dec.maybeDone)
			},
		},
		{
			name: "canaries wait for promotion: not done",
			build: func(f *fixture) []*structs.Allocation {
				f.st.DesiredCanaries, f.st.HealthyAllocs = 1, 1
				return []*structs.Allocation{canary(f, verdict(f.alloc(at(0)), true, 40))}
			},
			edit: func(v *view) { v.lastEvalIndex = 30 },
			now:  at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.True(t, dec.needsPromotion)
				must.False(t, dec.maybeDone)
			},
		},
		{
			name:  "job stopped: cancel",
			build: func(f *fixture) []*structs.Allocation { return []*structs.Allocation{f.alloc(at(0))} },
			edit:  func(v *view) { v.job = v.job.Copy(); v.job.Stop = true },
			now:   at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Eq(t, structs.DeploymentStatusCancelled, dec.cancel.Status)
				must.Eq(t, structs.DeploymentStatusDescriptionStoppedJob, dec.cancel.StatusDescription)
				must.False(t, dec.verdicts())
			},
		},
		{
			name:  "job purged: cancel",
			build: func(f *fixture) []*structs.Allocation { return nil },
			edit:  func(v *view) { v.job = nil },
			now:   at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Eq(t, structs.DeploymentStatusDescriptionStoppedJob, dec.cancel.StatusDescription)
			},
		},
		{
			name:  "newer job version: cancel",
			build: func(f *fixture) []*structs.Allocation { return nil },
			edit:  func(v *view) { v.job = v.job.Copy(); v.job.Version++ },
			now:   at(time.Minute),
			check: func(t *testing.T, f *fixture, allocs []*structs.Allocation, dec decision) {
				must.Eq(t, structs.DeploymentStatusDescriptionNewerJob, dec.cancel.StatusDescription)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			allocs := tc.build(f)
			v := &view{d: f.d, job: f.job, allocs: allocs}
			if tc.edit != nil {
				tc.edit(v)
			}
			tc.check(t, f, allocs, decide(v, tc.now))
		})
	}
}
