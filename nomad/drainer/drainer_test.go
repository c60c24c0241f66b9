package drainer

import (
	"errors"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/leadertest"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// These tests run the drainer's own goroutine: it must wake on every
// change it depends on and on its deadlines, and stop cleanly.

// running starts d with a probe on its passes.
func running(t *testing.T, d *Drainer) *leadertest.Probe {
	t.Helper()
	probe := leadertest.NewProbe(t)
	d.loop.SetOnPass(probe.Record)
	d.SetEnabled(true)
	t.Cleanup(func() { d.SetEnabled(false) })
	return probe
}

// step brings the drainer up to date, runs the scheduler and the
// clients, brings the drainer up to date again, and moves the clock.
func step(c *leadertest.Cluster, d *Drainer, probe *leadertest.Probe, by time.Duration) {
	probe.Sync(c, d.loop.Poke)
	c.Schedule()
	c.RunClients()
	probe.Sync(c, d.loop.Poke)
	probe.Advance(c, by)
}

func TestDrainer_ConfigErrors(t *testing.T) {
	_, err := New(Config{Raft: NewStateRaft(nil)})
	must.ErrorContains(t, err, "State is required")
	_, err = New(Config{State: func() *state.StateStore { return nil }})
	must.ErrorContains(t, err, "Raft is required")
}

func TestDrainer_WakesOnChangesAndDeadline(t *testing.T) {
	c := leadertest.New(t)
	n1, n2 := mock.Node(), mock.Node()
	c.AddNodes(n1, n2)
	batch := c.Register(mock.BatchJob(mock.Count(1)))
	c.Schedule()
	c.StartAllocs()
	alloc := c.LiveAllocs(batch)[0]
	raft := NewStateRaft(c.State)
	d, err := New(Config{State: c.State, Raft: raft, Clock: c.Clock, MinPassInterval: 0})
	must.NoError(t, err)
	probe := running(t, d)
	must.True(t, d.Enabled())
	must.NoError(t, probe.Next().Err) // the first pass: nothing to do

	// A drain is a change to the node list: the drainer wakes by itself,
	// and leaves the batch alloc to finish until the deadline.
	c.Drain(alloc.NodeID, time.Hour, false)
	must.NoError(t, probe.Next().Err)
	must.Len(t, 0, raft.TransitionRequests())

	// At the deadline its timer wakes it: the batch alloc is marked.
	probe.Advance(c, time.Hour)
	a, _ := c.Store.AllocByID(nil, alloc.ID)
	must.True(t, a.DesiredTransition.ShouldMigrate())
	must.Len(t, 1, raft.TransitionRequests())

	// The scheduler replaces it, its client stops it: a change to an
	// alloc of the draining node wakes the drainer, the drain completes.
	must.NoError(t, probe.Next().Err) // woken by its own write
	c.Schedule()
	c.RunClients()
	for c.Node(alloc.NodeID).DrainStrategy != nil {
		must.NoError(t, probe.Next().Err)
	}
	n := c.Node(alloc.NodeID)
	must.Nil(t, n.DrainStrategy)
	must.Eq(t, structs.DrainStatusComplete, n.LastDrain.Status)
	must.Eq(t, structs.NodeSchedulingIneligible, n.SchedulingEligibility)

	d.SetEnabled(false)
	must.False(t, d.Enabled())
	d.SetEnabled(false) // harmless
}

func TestDrainer_CancelMidDrain(t *testing.T) {
	c := leadertest.New(t)
	nodes := []*structs.Node{mock.Node(), mock.Node(), mock.Node()}
	c.AddNodes(nodes...)
	job := mock.Job(mock.Count(6))
	job.TaskGroups[0].Migrate.MaxParallel = 1
	job = c.Register(job)
	c.Schedule()
	c.StartAllocs()
	c.Clock.Advance(time.Minute)
	busy := busiest(c, job)
	before := len(c.AllocsOn(busy))
	must.Greater(t, 1, before)

	raft := NewStateRaft(c.State)
	d, err := New(Config{State: c.State, Raft: raft, Clock: c.Clock})
	must.NoError(t, err)
	probe := running(t, d)
	c.Drain(busy, 0, false)
	probe.Sync(c, d.loop.Poke)
	must.Len(t, 1, raft.TransitionRequests(), must.Sprint("max_parallel 1: one alloc marked"))

	// The operator cancels before the migration happened.
	c.CancelDrain(busy, true)
	step(c, d, probe, time.Minute)
	probe.Sync(c, d.loop.Poke)
	must.Len(t, 1, raft.TransitionRequests(), must.Sprint("nothing more is marked"))
	must.Len(t, 0, raft.DrainRequests(), must.Sprint("a canceled drain is not completed"))
	n := c.Node(busy)
	must.Nil(t, n.DrainStrategy)
	must.Eq(t, structs.DrainStatusCanceled, n.LastDrain.Status)
	must.Eq(t, structs.NodeSchedulingEligible, n.SchedulingEligibility)
	// The mark outlives the drain, as in Nomad: the scheduler moves the
	// marked alloc on the eval written with the mark, draining or not.
	for id := range raft.TransitionRequests()[0].Allocs {
		a, err := c.Store.AllocByID(nil, id)
		must.NoError(t, err)
		must.Eq(t, structs.AllocMigrating, a.DesiredDescription)
	}
	must.Len(t, 6, c.LiveAllocs(job))

	// Drained again later, the stale mark gets an eval, and the drain
	// runs to its end.
	c.Drain(busy, 0, false)
	for i := 0; i < 40 && c.Node(busy).DrainStrategy != nil; i++ {
		step(c, d, probe, 10*time.Second)
	}
	must.Nil(t, c.Node(busy).DrainStrategy)
	must.Len(t, 0, c.AllocsOn(busy))
}

// busiest returns the node running the most of the job's allocs.
func busiest(c *leadertest.Cluster, job *structs.Job) string {
	count := map[string]int{}
	best := ""
	for _, a := range c.LiveAllocs(job) {
		count[a.NodeID]++
		if best == "" || count[a.NodeID] > count[best] || (count[a.NodeID] == count[best] && a.NodeID < best) {
			best = a.NodeID
		}
	}
	return best
}

// A new leader's drainer resumes from state: what the old one marked is
// counted as in flight, and the drain goes on from there.
func TestDrainer_LeaderChangeResumesFromState(t *testing.T) {
	c := leadertest.New(t)
	nodes := []*structs.Node{mock.Node(), mock.Node(), mock.Node()}
	c.AddNodes(nodes...)
	job := mock.Job(mock.Count(4))
	job.TaskGroups[0].Migrate.MaxParallel = 1
	job = c.Register(job)
	c.Schedule()
	c.StartAllocs()
	c.Clock.Advance(time.Minute)
	busy := busiest(c, job)
	onBusy := len(c.AllocsOn(busy))
	must.Greater(t, 1, onBusy)

	raft := NewStateRaft(c.State)
	old, err := New(Config{State: c.State, Raft: raft, Clock: c.Clock})
	must.NoError(t, err)
	probe := running(t, old)
	c.Drain(busy, 0, false)
	probe.Sync(c, old.loop.Poke)
	must.Len(t, 1, raft.TransitionRequests())
	old.SetEnabled(false) // leadership lost

	// While nobody leads, the migration goes on and finishes.
	c.Schedule()
	c.RunClients()
	c.Clock.Advance(time.Minute)
	must.Len(t, 1, raft.TransitionRequests(), must.Sprint("a disabled drainer writes nothing"))

	// The new leader's drainer picks up with the next alloc, and so on
	// to the end, one alloc at a time.
	d, err := New(Config{State: c.State, Raft: raft, Clock: c.Clock})
	must.NoError(t, err)
	probe = running(t, d)
	for i := 0; i < 40 && c.Node(busy).DrainStrategy != nil; i++ {
		step(c, d, probe, 10*time.Second)
	}
	must.Nil(t, c.Node(busy).DrainStrategy)
	must.Len(t, onBusy, raft.TransitionRequests(), must.Sprint("one alloc per write, each marked once"))
	for _, req := range raft.TransitionRequests() {
		must.MapLen(t, 1, req.Allocs)
	}
	must.Len(t, 0, c.AllocsOn(busy))
}

// failingRaft fails every write.
type failingRaft struct{ calls chan struct{} }

func (f *failingRaft) AllocUpdateDesiredTransition(map[string]*structs.DesiredTransition, []*structs.Evaluation) (uint64, error) {
	f.calls <- struct{}{}
	return 0, errors.New("not the leader")
}

func (f *failingRaft) NodesDrainComplete([]string, *structs.NodeEvent) (uint64, error) {
	f.calls <- struct{}{}
	return 0, errors.New("not the leader")
}

func TestDrainer_RetriesFailedWrites(t *testing.T) {
	c := leadertest.New(t)
	n := mock.Node()
	c.AddNodes(n)
	c.Drain(n.ID, 0, false)
	raft := &failingRaft{calls: make(chan struct{}, 10)}
	d, err := New(Config{State: c.State, Raft: raft, Clock: c.Clock, RetryInterval: time.Minute})
	must.NoError(t, err)
	probe := running(t, d)
	must.ErrorContains(t, probe.Next().Err, "not the leader")
	<-raft.calls
	c.Clock.Advance(time.Minute) // the retry timer, armed before Record
	must.ErrorContains(t, probe.Next().Err, "not the leader")
	<-raft.calls
}
