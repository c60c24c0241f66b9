package leadertest_test

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/leadertest"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// These tests drive the real scheduler through the writes the leader's
// duties and the endpoints make, with clients acting on what it decides.

// A forced drain on a cluster without room for replacements still
// empties the node: the stops stand, the replacements wait blocked.
func TestMigrate_ForcedDrainOnAFullCluster(t *testing.T) {
	c := leadertest.New(t)
	// Each node has room for one alloc: 4000 - 100 reserved MHz, 3000 asked.
	n1, n2 := mock.Node(), mock.Node()
	c.AddNodes(n1, n2)
	job := c.Register(mock.Job(mock.Count(2), mock.TaskResources(3000, 256)))
	c.Schedule()
	c.StartAllocs()
	must.Len(t, 1, c.AllocsOn(n1.ID))

	// The deadline passed (or -force): the drainer marks everything left.
	c.Drain(n1.ID, -time.Second, false)
	c.MarkMigrate(structs.EvalTriggerNodeDrain, c.AllocsOn(n1.ID)[0].ID)
	c.Schedule()
	c.RunClients()

	must.Len(t, 0, c.AllocsOn(n1.ID), must.Sprint("the drained node runs nothing"))
	must.Len(t, 1, c.LiveAllocs(job))
	blocked, err := c.Store.EvalsByStatus(nil, structs.EvalStatusBlocked)
	must.NoError(t, err)
	must.Len(t, 1, blocked, must.Sprint("the replacement waits for room"))
	must.MapContainsKey(t, blocked[0].FailedTGAllocs, "web")
}

// Stopping an alloc through the API on a healthy node replaces it.
func TestMigrate_AllocStopOnAReadyNode(t *testing.T) {
	c := leadertest.New(t)
	c.AddNodes(mock.Node(), mock.Node(), mock.Node())
	job := c.Register(mock.Job(mock.Count(3)))
	c.Schedule()
	c.StartAllocs()
	victim := c.LiveAllocs(job)[0]

	c.MarkMigrate(structs.EvalTriggerAllocStop, victim.ID)
	c.Schedule()
	c.RunClients()

	stopped, err := c.Store.AllocByID(nil, victim.ID)
	must.NoError(t, err)
	must.Eq(t, structs.AllocMigrating, stopped.DesiredDescription)
	must.Eq(t, structs.AllocClientStatusComplete, stopped.ClientStatus)
	live := c.LiveAllocs(job)
	must.Len(t, 3, live)
	replaced := false
	for _, a := range live {
		must.Eq(t, structs.AllocClientStatusRunning, a.ClientStatus)
		if a.PreviousAllocation == victim.ID {
			replaced = true
			must.Eq(t, victim.Name, a.Name)
		}
	}
	must.True(t, replaced)
}
