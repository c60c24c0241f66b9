package nodesim

import (
	"fmt"
	"sync/atomic"
)

// counters are the simulator's running totals, updated atomically by its
// goroutines.
type counters struct {
	registrations   atomic.Int64
	registerErrors  atomic.Int64
	reregistrations atomic.Int64
	ready           atomic.Int64
	heartbeats      atomic.Int64
	heartbeatErrors atomic.Int64
	watchCalls      atomic.Int64
	watchErrors     atomic.Int64
	allocsSeen      atomic.Int64
	allocsRunning   atomic.Int64
	allocsComplete  atomic.Int64
	allocsHealthy   atomic.Int64
	updateCalls     atomic.Int64
	updateErrors    atomic.Int64
	updatesSent     atomic.Int64
}

// Stats is a snapshot of the simulator's totals.
type Stats struct {
	Nodes int
	// Ready counts nodes registered and heartbeated ready at least once.
	Ready           int64
	Registrations   int64
	RegisterErrors  int64
	Reregistrations int64
	Heartbeats      int64
	HeartbeatErrors int64
	// WatchCalls counts answered Node.GetClientAllocs queries.
	WatchCalls  int64
	WatchErrors int64
	// AllocsSeen counts distinct allocations the nodes were given;
	// AllocsRunning and AllocsComplete the statuses reported, and
	// AllocsHealthy the allocations reported healthy to a deployment.
	AllocsSeen     int64
	AllocsRunning  int64
	AllocsComplete int64
	AllocsHealthy  int64
	// UpdateCalls counts Node.UpdateAlloc calls, UpdatesSent the
	// allocation updates they carried successfully.
	UpdateCalls  int64
	UpdateErrors int64
	UpdatesSent  int64
}

// Stats returns the current totals.
func (s *Simulator) Stats() Stats {
	c := &s.stats
	return Stats{
		Nodes:           len(s.nodes),
		Ready:           c.ready.Load(),
		Registrations:   c.registrations.Load(),
		RegisterErrors:  c.registerErrors.Load(),
		Reregistrations: c.reregistrations.Load(),
		Heartbeats:      c.heartbeats.Load(),
		HeartbeatErrors: c.heartbeatErrors.Load(),
		WatchCalls:      c.watchCalls.Load(),
		WatchErrors:     c.watchErrors.Load(),
		AllocsSeen:      c.allocsSeen.Load(),
		AllocsRunning:   c.allocsRunning.Load(),
		AllocsComplete:  c.allocsComplete.Load(),
		AllocsHealthy:   c.allocsHealthy.Load(),
		UpdateCalls:     c.updateCalls.Load(),
		UpdateErrors:    c.updateErrors.Load(),
		UpdatesSent:     c.updatesSent.Load(),
	}
}

// String renders the totals on one line.
func (st Stats) String() string {
	return fmt.Sprintf("nodes=%d ready=%d heartbeats=%d heartbeat_errors=%d reregistrations=%d watch_calls=%d watch_errors=%d allocs_seen=%d running=%d complete=%d healthy=%d updates_sent=%d update_calls=%d update_errors=%d",
		st.Nodes, st.Ready, st.Heartbeats, st.HeartbeatErrors, st.Reregistrations, st.WatchCalls, st.WatchErrors,
		st.AllocsSeen, st.AllocsRunning, st.AllocsComplete, st.AllocsHealthy, st.UpdatesSent, st.UpdateCalls, st.UpdateErrors)
}
