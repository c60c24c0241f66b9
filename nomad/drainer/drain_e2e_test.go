package drainer

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/leadertest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// These tests drive a drain end to end, step by step on the fake clock:
// a drainer pass, the real scheduler over the evals it created, the
// clients starting and stopping what they were told, five seconds.

// e2e is a small cluster running two service jobs, a batch job and a
// system job.
type e2e struct {
	c        *leadertest.Cluster
	d        *Drainer
	raft     *StateRaft
	web, api *structs.Job // service: count 6 max_parallel 2, count 4 max_parallel 1
	worker   *structs.Job // batch, count 2
	agent    *structs.Job // system
}

func newE2E(t *testing.T) *e2e {
	c := leadertest.New(t)
	var nodes []*structs.Node
	for i := 1; i <= 6; i++ {
		n := mock.Node()
		n.ID, n.Name = nodeID(i), fmt.Sprintf("n%d", i)
		nodes = append(nodes, n)
	}
	c.AddNodes(nodes...)
	e := &e2e{c: c, raft: NewStateRaft(c.State)}
	var err error
	e.d, err = New(Config{State: c.State, Raft: e.raft, Clock: c.Clock, MinPassInterval: 0})
	must.NoError(t, err)

	web := mock.Job(mock.JobID("web"), mock.Count(6))
	web.TaskGroups[0].Migrate.MaxParallel = 2
	api := mock.Job(mock.JobID("api"), mock.Count(4))
	api.TaskGroups[0].Migrate.MaxParallel = 1
	e.web, e.api = c.Register(web), c.Register(api)
	e.worker = c.Register(mock.BatchJob(mock.JobID("worker"), mock.Count(2)))
	e.agent = c.Register(mock.SystemJob(mock.JobID("agent")))
	c.Schedule()
	c.StartAllocs()
	c.Clock.Advance(time.Minute) // everything healthy
	return e
}

// busiest returns the IDs of the n nodes holding the most service and
// batch allocs.
func (e *e2e) busiest(n int) []string {
	count := map[string]int{}
	for _, j := range []*structs.Job{e.web, e.api, e.worker} {
		for _, a := range e.c.LiveAllocs(j) {
			count[a.NodeID]++
		}
	}
	var ids []string
	for id := range count {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if count[a] != count[b] {
			return count[b] - count[a]
		}
		return compareStrings(a, b)
	})
	return ids[:n]
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pass runs one drainer pass synchronously.
func (e *e2e) pass(t *testing.T) {
	t.Helper()
	_, _, err := e.d.pass(memdb.NewWatchSet(), e.c.Now())
	must.NoError(t, err)
}

// unhealthy counts the instances of a service group not served by a
// healthy (running for 10s), unmarked alloc.
func (e *e2e) unhealthy(job *structs.Job) int {
	healthy := 0
	for _, a := range e.c.LiveAllocs(job) {
		if a.DesiredTransition.ShouldMigrate() || a.ClientStatus != structs.AllocClientStatusRunning {
			continue
		}
		running := true
		for _, ts := range a.TaskStates {
			if ts.State != structs.TaskStateRunning || e.c.Now().Sub(ts.StartedAt) < 10*time.Second {
				running = false
			}
		}
		if running {
			healthy++
		}
	}
	return job.TaskGroups[0].Count - healthy
}

func drainDone(c *leadertest.Cluster, ids []string) bool {
	for _, id := range ids {
		if c.Node(id).DrainStrategy != nil {
			return false
		}
	}
	return true
}

// assertDrained checks what a completed drain leaves behind.
func (e *e2e) assertDrained(t *testing.T, ids []string) {
	t.Helper()
	for _, id := range ids {
		n := e.c.Node(id)
		must.Nil(t, n.DrainStrategy)
		must.NotNil(t, n.LastDrain)
		must.Eq(t, structs.DrainStatusComplete, n.LastDrain.Status)
		must.Eq(t, structs.NodeSchedulingIneligible, n.SchedulingEligibility)
		must.Eq(t, structs.NodeEventMsgDrainComplete, n.Events[len(n.Events)-1].Message)
		must.Len(t, 0, e.c.AllocsOn(id), must.Sprintf("node %s still runs allocs", id))
	}
	for _, j := range []*structs.Job{e.web, e.api} {
		live := e.c.LiveAllocs(j)
		must.Len(t, j.TaskGroups[0].Count, live, must.Sprintf("job %s", j.ID))
		for _, a := range live {
			must.SliceNotContains(t, ids, a.NodeID)
			must.Eq(t, structs.AllocClientStatusRunning, a.ClientStatus)
		}
	}
}

func TestDrain_EndToEnd_MaxParallelAndSystemLast(t *testing.T) {
	e := newE2E(t)
	drained := e.busiest(2)
	for _, id := range drained {
		e.c.Drain(id, 10*time.Minute, false)
	}

	// Per drained node, the last step at which a non-system alloc still
	// ran there, and the first at which its system alloc was marked.
	lastOther, firstSystem := map[string]int{}, map[string]int{}
	batchDone := false
	step := 0
	for ; step < 100 && !drainDone(e.c, drained); step++ {
		e.pass(t)
		// The budget holds after every pass, before the deadline.
		must.LessEq(t, 2, e.unhealthy(e.web), must.Sprintf("web at step %d", step))
		must.LessEq(t, 1, e.unhealthy(e.api), must.Sprintf("api at step %d", step))
		for _, id := range drained {
			for _, a := range e.c.AllocsOn(id) {
				if !a.Job.IsSystemLike() {
					lastOther[id] = step
				} else if _, seen := firstSystem[id]; !seen && a.DesiredTransition.ShouldMigrate() {
					firstSystem[id] = step
				}
			}
		}
		e.c.Schedule()
		e.c.RunClients()
		if step == 3 && !batchDone {
			// The batch work finishes on its own, before the deadline.
			e.c.CompleteAllocs(func(a *structs.Allocation) bool { return a.JobID == e.worker.ID })
			batchDone = true
		}
		e.c.Clock.Advance(5 * time.Second)
	}
	must.True(t, drainDone(e.c, drained), must.Sprintf("drain not done after %d steps", step))
	e.assertDrained(t, drained)
	for _, id := range drained {
		must.MapContainsKey(t, firstSystem, id)
		must.Greater(t, lastOther[id], firstSystem[id], must.Sprint("system allocs are marked only after the others stopped"))
	}
	// The batch allocs finished and were not replaced.
	for _, a := range e.c.LiveAllocs(e.worker) {
		must.Eq(t, structs.AllocClientStatusComplete, a.ClientStatus)
	}
	// One eval per job per marking write, all of type node-drain.
	for _, req := range e.raft.TransitionRequests() {
		for _, ev := range req.Evals {
			must.Eq(t, structs.EvalTriggerNodeDrain, ev.TriggeredBy)
		}
	}
	completed := 0
	for _, req := range e.raft.DrainRequests() {
		for id, u := range req.Updates {
			must.SliceContains(t, drained, id)
			must.Nil(t, u.DrainStrategy)
			must.False(t, u.MarkEligible)
			must.Eq(t, structs.NodeEventMsgDrainComplete, req.NodeEvents[id].Message)
			completed++
		}
	}
	must.Eq(t, len(drained), completed, must.Sprint("each drain completed once"))
}

func TestDrain_EndToEnd_DeadlineStopsWhatRemains(t *testing.T) {
	e := newE2E(t)
	drained := e.busiest(1)
	e.c.Drain(drained[0], time.Minute, false)

	// Replacements never start: no migration can finish, the budget stays
	// spent, and the batch work never ends. The deadline stops it all.
	deadline := e.c.Now().Add(time.Minute)
	step := 0
	for ; step < 40 && !drainDone(e.c, drained); step++ {
		e.pass(t)
		if e.c.Now().Before(deadline) {
			must.LessEq(t, 2, e.unhealthy(e.web))
			must.LessEq(t, 1, e.unhealthy(e.api))
		}
		e.c.Schedule()
		e.c.FinishStopped()
		e.c.Clock.Advance(5 * time.Second)
	}
	must.True(t, drainDone(e.c, drained))
	must.False(t, e.c.Now().Before(deadline), must.Sprint("the drain finished only because of its deadline"))
	n := e.c.Node(drained[0])
	must.Eq(t, structs.DrainStatusComplete, n.LastDrain.Status)
	must.Len(t, 0, e.c.AllocsOn(drained[0]))
	// Every alloc that was on the node was marked for migration, and the
	// service and batch ones were replaced elsewhere.
	for _, j := range []*structs.Job{e.web, e.api, e.worker} {
		for _, a := range e.c.LiveAllocs(j) {
			must.NotEq(t, drained[0], a.NodeID)
		}
	}
}

func TestDrain_EndToEnd_IgnoreSystemJobs(t *testing.T) {
	e := newE2E(t)
	drained := e.busiest(1)
	e.c.Drain(drained[0], 0, true)
	e.c.CompleteAllocs(func(a *structs.Allocation) bool { return a.JobID == e.worker.ID })
	for step := 0; step < 60 && !drainDone(e.c, drained); step++ {
		e.pass(t)
		e.c.Schedule()
		e.c.RunClients()
		e.c.Clock.Advance(5 * time.Second)
	}
	must.True(t, drainDone(e.c, drained))
	left := e.c.AllocsOn(drained[0])
	must.Len(t, 1, left, must.Sprint("the system alloc keeps running"))
	must.Eq(t, e.agent.ID, left[0].JobID)
	must.False(t, left[0].DesiredTransition.ShouldMigrate())
}
