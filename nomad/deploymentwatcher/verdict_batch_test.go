package deploymentwatcher

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// verdictFixture writes n running deployments of one alloc each whose
// tasks have run since start, without a verdict: a pass at start+1m
// finds every alloc healthy (min_healthy_time 10s), and has nothing else
// to write about its deployment.
func verdictFixture(t *testing.T, start time.Time, n int) (*state.StateStore, []steadyDeployment) {
	t.Helper()
	return deploymentsFixture(t, start, n, 1, func(a *structs.Allocation) {
		a.TaskStates = map[string]*structs.TaskState{}
		for _, task := range a.Job.LookupTaskGroup(a.TaskGroup).Tasks {
			a.TaskStates[task.Name] = &structs.TaskState{State: structs.TaskStateRunning, StartedAt: start}
		}
	})
}

// healthCounter counts the health entries a watcher writes; before, when
// set, runs before each batch entry is applied.
type healthCounter struct {
	*StateRaft
	batches []int // requests per batch entry, refused ones included
	singles int   // single health entries, refused ones included
	before  func()
}

func (c *healthCounter) UpdateDeploymentAllocHealthBatch(reqs []*structs.ApplyDeploymentAllocHealthRequest) (uint64, error) {
	c.batches = append(c.batches, len(reqs))
	if c.before != nil {
		c.before()
	}
	return c.StateRaft.UpdateDeploymentAllocHealthBatch(reqs)
}

func (c *healthCounter) UpdateDeploymentAllocHealth(req *structs.ApplyDeploymentAllocHealthRequest) (uint64, error) {
	c.singles++
	return c.StateRaft.UpdateDeploymentAllocHealth(req)
}

// healthyAllocs counts the deployments' allocs the store holds healthy.
func healthyAllocs(t *testing.T, s *state.StateStore, deployments []steadyDeployment) int {
	t.Helper()
	n := 0
	for _, sd := range deployments {
		for _, a := range sd.allocs {
			stored, err := s.AllocByID(nil, a.ID)
			must.NoError(t, err)
			if stored.DeploymentStatus.IsHealthy() {
				n++
			}
		}
	}
	return n
}

// The verdicts a pass reaches about many deployments, each with its
// eval, share DeploymentAllocHealthBatch entries of at most
// maxHealthRequestsPerEntry requests while every server applies them, and go
// one entry per deployment otherwise. Either way every alloc is healthy,
// every deployment has its eval and the next pass writes nothing.
func TestWatcher_VerdictsOfAPassShareAnEntry(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	now := start.Add(time.Minute)
	for _, tc := range []struct {
		name        string
		deployments int
		gate        func() bool
		batches     []int
		singles     int
	}{
		{name: "one", deployments: 1, gate: func() bool { return true }, batches: []int{1}},
		{name: "three", deployments: 3, gate: func() bool { return true }, batches: []int{3}},
		{name: "over the bound", deployments: maxHealthRequestsPerEntry + 2, gate: func() bool { return true },
			batches: []int{maxHealthRequestsPerEntry, 2}},
		{name: "an old server", deployments: 3, gate: func() bool { return false }, singles: 3},
		{name: "no gate", deployments: 3, singles: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, deployments := verdictFixture(t, start, tc.deployments)
			raft := &healthCounter{StateRaft: NewStateRaft(func() *state.StateStore { return s })}
			w, err := New(Config{State: func() *state.StateStore { return s }, Raft: raft, AllocHealthBatch: tc.gate})
			must.NoError(t, err)
			_, _, err = w.pass(memdb.NewWatchSet(), now)
			must.NoError(t, err)
			must.Eq(t, tc.batches, raft.batches)
			must.Eq(t, tc.singles, raft.singles)
			must.Eq(t, tc.deployments, healthyAllocs(t, s, deployments))
			must.MapLen(t, tc.deployments, evalDeployments(t, raft.Evals()))

			_, _, err = w.pass(memdb.NewWatchSet(), now)
			must.NoError(t, err)
			must.Eq(t, tc.batches, raft.batches, must.Sprint("the second pass wrote again"))
			must.Eq(t, tc.singles, raft.singles, must.Sprint("the second pass wrote again"))
			must.MapLen(t, tc.deployments, w.quiet)
		})
	}
}

// A deployment cancelled after the pass read it makes the state store
// refuse its verdicts, and so the batch entry holding them: the entry
// writes nothing, and the pass writes the requests one entry each, so the
// other deployments get their verdicts; the cancelled one's write fails
// and the pass reports it. The next pass skips the cancelled deployment.
func TestWatcher_RefusedVerdictBatchFallsBackToOneEntryEach(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	now := start.Add(time.Minute)
	s, deployments := verdictFixture(t, start, 4)
	cancelled := deployments[2].d
	raft := &healthCounter{StateRaft: NewStateRaft(func() *state.StateStore { return s })}
	raft.before = func() {
		latest, err := s.LatestIndex()
		must.NoError(t, err)
		must.NoError(t, s.WithWriteTxn(latest+1, func(tx *state.Txn) error {
			return tx.UpdateDeploymentStatus(statusUpdate(cancelled, structs.DeploymentStatusCancelled, "cancelled meanwhile"))
		}))
		raft.before = nil
	}
	w, err := New(Config{State: func() *state.StateStore { return s }, Raft: raft, AllocHealthBatch: func() bool { return true }})
	must.NoError(t, err)
	_, _, err = w.pass(memdb.NewWatchSet(), now)
	must.ErrorContains(t, err, cancelled.ID)
	must.Eq(t, []int{4}, raft.batches)
	must.Eq(t, 4, raft.singles)
	must.Len(t, 3, raft.HealthUpdates())
	must.Eq(t, 3, healthyAllocs(t, s, deployments))
	must.Eq(t, 0, healthyAllocs(t, s, deployments[2:3]))

	_, _, err = w.pass(memdb.NewWatchSet(), now)
	must.NoError(t, err)
	must.Eq(t, []int{4}, raft.batches)
	must.Eq(t, 4, raft.singles)
}

// noLeaderRaft refuses every write: this server no longer leads.
type noLeaderRaft struct {
	*StateRaft
	calls int
}

func (r *noLeaderRaft) UpdateDeploymentAllocHealthBatch([]*structs.ApplyDeploymentAllocHealthRequest) (uint64, error) {
	r.calls++
	return 0, structs.ErrNoLeader
}

func (r *noLeaderRaft) UpdateDeploymentAllocHealth(*structs.ApplyDeploymentAllocHealthRequest) (uint64, error) {
	r.calls++
	return 0, structs.ErrNoLeader
}

// Without a leader the refused batch is not written again one request at
// a time: nothing could be.
func TestWatcher_VerdictBatchWithoutLeaderNotRetried(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	s, _ := verdictFixture(t, start, maxHealthRequestsPerEntry+1)
	raft := &noLeaderRaft{StateRaft: NewStateRaft(func() *state.StateStore { return s })}
	w, err := New(Config{State: func() *state.StateStore { return s }, Raft: raft, AllocHealthBatch: func() bool { return true }})
	must.NoError(t, err)
	_, _, err = w.pass(memdb.NewWatchSet(), start.Add(time.Minute))
	must.True(t, errors.Is(err, structs.ErrNoLeader))
	must.Eq(t, 1, raft.calls)
}

// An entry takes up to maxHealthRequestsPerEntry requests and, past its
// first request, no more than maxAllocVerdictsPerEntry alloc verdicts.
func TestNextVerdictEntry(t *testing.T) {
	reqs := func(verdicts ...int) []*structs.ApplyDeploymentAllocHealthRequest {
		out := make([]*structs.ApplyDeploymentAllocHealthRequest, len(verdicts))
		for i, v := range verdicts {
			out[i] = &structs.ApplyDeploymentAllocHealthRequest{}
			out[i].HealthyAllocationIDs = make([]string, v/2)
			out[i].UnhealthyAllocationIDs = make([]string, v-v/2)
		}
		return out
	}
	many := make([]int, maxHealthRequestsPerEntry+5)
	for i := range many {
		many[i] = 1
	}
	for _, tc := range []struct {
		name     string
		verdicts []int
		want     int
	}{
		{"one", []int{1}, 1},
		{"a few", []int{1, 3, 2}, 3},
		{"over the request bound", many, maxHealthRequestsPerEntry},
		{"up to the verdict bound", []int{maxAllocVerdictsPerEntry - 1, 1, 1}, 2},
		{"a first request over the verdict bound", []int{maxAllocVerdictsPerEntry + 1, 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, nextVerdictEntry(reqs(tc.verdicts...)))
		})
	}
}
