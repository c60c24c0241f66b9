package deploymentwatcher

import (
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/leadertest"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// These tests run the watcher's own goroutine.

// start enables w with a probe on its passes.
func start(t *testing.T, w *Watcher) *leadertest.Probe {
	t.Helper()
	probe := leadertest.NewProbe(t)
	w.loop.SetOnPass(probe.Record)
	w.SetEnabled(true)
	t.Cleanup(func() { w.SetEnabled(false) })
	return probe
}

// live is a step of a rig whose watcher runs on its own: bring it up to
// date, schedule, run the clients, bring it up to date, advance 5s.
func (r *rig) live(t *testing.T, probe *leadertest.Probe) {
	t.Helper()
	probe.Sync(r.c, r.w.loop.Poke)
	r.c.Schedule()
	if r.hold {
		r.c.FinishStopped()
	} else {
		r.c.RunClients()
	}
	probe.Sync(r.c, r.w.loop.Poke)
	probe.Advance(r.c, 5*time.Second)
}

func (r *rig) liveUntil(t *testing.T, probe *leadertest.Probe, what string, done func() bool) {
	t.Helper()
	for i := 0; i < 200 && !done(); i++ {
		r.live(t, probe)
	}
	if !done() {
		t.Fatalf("never reached: %s", what)
	}
}

func TestWatcher_ConfigErrors(t *testing.T) {
	_, err := New(Config{Raft: NewStateRaft(nil)})
	must.ErrorContains(t, err, "State is required")
	_, err = New(Config{State: func() *state.StateStore { return nil }})
	must.ErrorContains(t, err, "Raft is required")
}

// The watcher wakes by itself when an alloc may have become healthy, and
// a new leader's watcher carries on from state.
func TestWatcher_TimersAndLeaderChange(t *testing.T) {
	r := newRig(t)
	probe := start(t, r.w)
	must.True(t, r.w.Enabled())
	r.c.Register(webJob())
	r.liveUntil(t, probe, "version 0 deployed", r.settled(t))
	v0 := r.c.Job("default", "web")

	// Version 1: the first alloc is placed and starts.
	r.c.Register(version(v0, 1, nil))
	probe.Sync(r.c, r.w.loop.Poke)
	r.c.Schedule()
	r.c.RunClients()
	probe.Sync(r.c, r.w.loop.Poke)
	verdicts := len(r.raft.HealthUpdates())
	// Nothing changes in state for 10s: the watcher's timer wakes it.
	probe.Advance(r.c, 10*time.Second)
	probe.Sync(r.c, r.w.loop.Poke)
	must.Eq(t, verdicts+1, len(r.raft.HealthUpdates()), must.Sprint("the verdict came from the timer"))

	// Leadership lost: the roll-out goes on as far as it can without a
	// watcher, which writes nothing meanwhile.
	r.w.SetEnabled(false)
	must.False(t, r.w.Enabled())
	writes := len(r.raft.Evals())
	r.c.Schedule()
	r.c.RunClients()
	r.c.Clock.Advance(time.Minute)
	must.Eq(t, writes, len(r.raft.Evals()))

	// A new leader's watcher takes over from state.
	w2, err := New(Config{State: r.c.State, Raft: r.raft, Clock: r.c.Clock})
	must.NoError(t, err)
	r.w = w2
	probe = start(t, w2)
	r.liveUntil(t, probe, "version 1 deployed", r.settled(t))
	must.Eq(t, structs.DeploymentStatusSuccessful, r.latest(t).Status)
	must.True(t, r.c.Job("default", "web").Stable)
}

func TestWatcher_ManualPromotion(t *testing.T) {
	r := newRig(t)
	probe := start(t, r.w)
	r.c.Register(webJob())
	r.liveUntil(t, probe, "version 0 deployed", r.settled(t))
	v0 := r.c.Job("default", "web")

	r.c.Register(version(v0, 1, func(tg *structs.TaskGroup) { tg.Update.Canary = 1 }))
	probe.Sync(r.c, r.w.loop.Poke)
	r.c.Schedule() // places the canary
	d := r.latest(t)
	must.Eq(t, uint64(1), d.JobVersion)

	// Too early: the canary is not healthy yet.
	_, err := r.w.Promote(&structs.DeploymentPromoteRequest{DeploymentID: d.ID, All: true})
	must.ErrorContains(t, err, `task group "web" has 0/1 healthy allocations`)

	r.liveUntil(t, probe, "the deployment asks for promotion", func() bool {
		return r.latest(t).StatusDescription == structs.DeploymentStatusDescriptionRunningNeedsPromotion
	})
	must.Len(t, 1, r.latest(t).TaskGroups["web"].PlacedCanaries)
	resp, err := r.w.Promote(&structs.DeploymentPromoteRequest{DeploymentID: d.ID, All: true})
	must.NoError(t, err)
	must.NotEq(t, "", resp.EvalID)
	must.Greater(t, 0, resp.DeploymentModifyIndex)
	r.liveUntil(t, probe, "version 1 deployed", r.settled(t))
	must.Eq(t, structs.DeploymentStatusSuccessful, r.latest(t).Status)
}

func TestWatcher_PauseResumeAndFail(t *testing.T) {
	r := newRig(t)
	_, err := r.w.Pause(&structs.DeploymentPauseRequest{DeploymentID: "x", Pause: true})
	must.ErrorIs(t, err, ErrDisabled)

	probe := start(t, r.w)
	job := webJob()
	job.TaskGroups[0].Update.AutoRevert = true
	r.c.Register(job)
	r.liveUntil(t, probe, "version 0 deployed", r.settled(t))
	v0 := r.c.Job("default", "web")

	_, err = r.w.Fail(&structs.DeploymentFailRequest{DeploymentID: "missing"})
	must.ErrorIs(t, err, structs.ErrUnknownDeployment)
	_, err = r.w.Fail(&structs.DeploymentFailRequest{DeploymentID: r.latest(t).ID})
	must.ErrorContains(t, err, "only an active deployment can be changed")

	r.c.Register(version(v0, 1, nil))
	r.live(t, probe)
	d := r.latest(t)
	must.Eq(t, uint64(1), d.JobVersion)

	// Paused: nothing more is placed, whatever the time.
	_, err = r.w.Pause(&structs.DeploymentPauseRequest{DeploymentID: d.ID, Pause: true})
	must.NoError(t, err)
	must.Eq(t, structs.DeploymentStatusPaused, r.deployment(t, d.ID).Status)
	for i := 0; i < 10; i++ {
		r.live(t, probe)
	}
	placed := r.deployment(t, d.ID).TaskGroups["web"].PlacedAllocs
	must.Eq(t, 1, placed)

	resp, err := r.w.Pause(&structs.DeploymentPauseRequest{DeploymentID: d.ID, Pause: false})
	must.NoError(t, err)
	must.NotEq(t, "", resp.EvalID, must.Sprint("resuming evaluates the job"))
	r.liveUntil(t, probe, "a second alloc placed", func() bool {
		return r.deployment(t, d.ID).TaskGroups["web"].PlacedAllocs == 2
	})

	// Failed by the operator: the job goes back to version 0.
	resp, err = r.w.Fail(&structs.DeploymentFailRequest{DeploymentID: d.ID})
	must.NoError(t, err)
	must.NotNil(t, resp.RevertedJobVersion)
	must.Eq(t, uint64(0), *resp.RevertedJobVersion)
	failed := r.deployment(t, d.ID)
	must.Eq(t, structs.DeploymentStatusFailed, failed.Status)
	must.Eq(t, structs.DeploymentStatusDescriptionRollback(structs.DeploymentStatusDescriptionFailedByUser, 0), failed.StatusDescription)
	must.False(t, r.c.Job("default", "web").SpecChanged(v0))
	r.liveUntil(t, probe, "the revert deployed", r.settled(t))
	must.Eq(t, structs.DeploymentStatusSuccessful, r.latest(t).Status)
}

func TestWatcher_ManualHealth(t *testing.T) {
	r := newRig(t)
	probe := start(t, r.w)
	job := webJob()
	job.TaskGroups[0].Update.HealthCheck = structs.UpdateHealthCheckManual
	job.TaskGroups[0].Update.ProgressDeadline = 0
	r.c.Register(job)
	for i := 0; i < 10; i++ {
		r.live(t, probe)
	}
	d := r.latest(t)
	must.Eq(t, 0, d.TaskGroups["web"].HealthyAllocs, must.Sprint("manual groups are judged by operators only"))

	live := r.c.LiveAllocs(r.c.Job("default", "web"))
	must.Len(t, 3, live)
	_, err := r.w.SetAllocHealth(&structs.DeploymentAllocHealthRequest{DeploymentID: d.ID})
	must.ErrorContains(t, err, "no allocs")
	_, err = r.w.SetAllocHealth(&structs.DeploymentAllocHealthRequest{DeploymentID: d.ID,
		HealthyAllocationIDs: []string{live[0].ID, live[1].ID}})
	must.NoError(t, err)
	must.Eq(t, 2, r.deployment(t, d.ID).TaskGroups["web"].HealthyAllocs)

	// An unhealthy verdict fails a group without a progress deadline.
	resp, err := r.w.SetAllocHealth(&structs.DeploymentAllocHealthRequest{DeploymentID: d.ID,
		UnhealthyAllocationIDs: []string{live[2].ID}})
	must.NoError(t, err)
	must.NotEq(t, "", resp.EvalID)
	failed := r.deployment(t, d.ID)
	must.Eq(t, structs.DeploymentStatusFailed, failed.Status)
	must.Eq(t, structs.DeploymentStatusDescriptionFailedAllocations, failed.StatusDescription)
}

// A pass re-reads only the deployments that changed since the pass that
// found them quiet; the others keep what that pass read.
func TestWatcher_QuietDeploymentsSkipped(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	s, steady := steadyFixture(t, now, 2, 1)
	deployments := []string{steady[0].d.ID, steady[1].d.ID}
	firstAlloc := steady[0].allocs[0]
	write := func(fn func(tx *state.Txn) error) {
		t.Helper()
		latest, err := s.LatestIndex()
		must.NoError(t, err)
		must.NoError(t, s.WithWriteTxn(latest+1, fn))
	}
	w, err := New(Config{State: func() *state.StateStore { return s }, Raft: NewStateRaft(func() *state.StateStore { return s })})
	must.NoError(t, err)

	_, _, err = w.pass(memdb.NewWatchSet(), now)
	must.NoError(t, err)
	must.MapLen(t, 2, w.quiet)
	before := map[string]*quietDeployment{deployments[0]: w.quiet[deployments[0]], deployments[1]: w.quiet[deployments[1]]}

	// The first deployment's alloc changes: only it is read again.
	write(func(tx *state.Txn) error {
		return tx.UpdateAllocsFromClient([]*structs.Allocation{{ID: firstAlloc.ID, ClientStatus: structs.AllocClientStatusFailed}})
	})
	_, _, err = w.pass(memdb.NewWatchSet(), now)
	must.NoError(t, err)
	must.True(t, w.quiet[deployments[1]] == before[deployments[1]], must.Sprint("the unchanged deployment was read again"))
	must.False(t, w.quiet[deployments[0]] == before[deployments[0]], must.Sprint("the changed deployment was skipped"))

	// Losing leadership forgets everything.
	w.SetEnabled(false)
	must.MapEmpty(t, w.quiet)
}

// entryCounter counts the UpsertEvals entries a watcher writes.
type entryCounter struct {
	*StateRaft
	evalEntries []int // evals per UpsertEvals entry
}

func (c *entryCounter) UpsertEvals(evals []*structs.Evaluation) (uint64, error) {
	c.evalEntries = append(c.evalEntries, len(evals))
	return c.StateRaft.UpsertEvals(evals)
}

// Client health reports that each ask an eval of their deployment are
// answered in one entry per pass (of at most maxEvalsPerEntry evals),
// not one per deployment; the next pass finds every deployment quiet.
func TestWatcher_EvalsOfAPassShareAnEntry(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		deployments int
		entries     []int
	}{
		{deployments: 1, entries: []int{1}},
		{deployments: 3, entries: []int{3}},
		{deployments: maxEvalsPerEntry + 2, entries: []int{maxEvalsPerEntry, 2}},
	} {
		s, steady := steadyFixture(t, now, tc.deployments, 1)
		// Without the eval that saw the clients' healthy reports, every
		// deployment needs one.
		var evalIDs []string
		for _, sd := range steady {
			evals, err := s.EvalsByJob(nil, sd.d.Namespace, sd.d.JobID)
			must.NoError(t, err)
			for _, e := range evals {
				evalIDs = append(evalIDs, e.ID)
			}
		}
		latest, err := s.LatestIndex()
		must.NoError(t, err)
		must.NoError(t, s.DeleteEvals(latest+1, evalIDs, nil))

		raft := &entryCounter{StateRaft: NewStateRaft(func() *state.StateStore { return s })}
		w, err := New(Config{State: func() *state.StateStore { return s }, Raft: raft})
		must.NoError(t, err)
		_, _, err = w.pass(memdb.NewWatchSet(), now)
		must.NoError(t, err)
		must.Eq(t, tc.entries, raft.evalEntries)
		must.MapLen(t, tc.deployments, evalDeployments(t, raft.Evals()))

		_, _, err = w.pass(memdb.NewWatchSet(), now)
		must.NoError(t, err)
		must.Eq(t, tc.entries, raft.evalEntries, must.Sprint("the second pass wrote again"))
		must.MapLen(t, tc.deployments, w.quiet)
	}
}

// evalDeployments checks that every eval is the watcher's and returns
// the deployments they are for.
func evalDeployments(t *testing.T, evals []*structs.Evaluation) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range evals {
		must.Eq(t, structs.EvalTriggerDeploymentWatcher, e.TriggeredBy)
		seen[e.DeploymentID] = true
	}
	return seen
}
