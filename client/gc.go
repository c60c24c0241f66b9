package client

import (
	"slices"
	"time"

	"github.com/opennomad/nomad/client/allocrunner"
)

// triggerGC asks the collector for a pass soon (new allocations arrived).
func (c *Client) triggerGC() {
	select {
	case c.gcNow <- struct{}{}:
	default:
	}
}

// gcLoop collects finished allocations every GCInterval and whenever new
// allocations arrive.
func (c *Client) gcLoop() {
	defer c.loops.Done()
	for {
		select {
		case <-c.shutdownCh:
			return
		case <-c.clock.After(c.cfg.GCInterval):
		case <-c.gcNow:
		}
		if n := c.collectGarbage(); n > 0 {
			c.logger.Debug("collected finished allocations", "count", n)
		}
		c.forgetCPUSamples()
	}
}

// collectGarbage keeps the number of allocations on the client within
// GCMaxAllocs by destroying the directories of finished ones, oldest
// finish first. Running allocations are never touched, so a client with
// more running allocations than the limit keeps them all. It returns how
// many it collected.
func (c *Client) collectGarbage() int {
	runners := c.allocs.Runners()
	excess := len(runners) - c.cfg.GCMaxAllocs
	if excess <= 0 {
		return 0
	}
	type finished struct {
		id string
		at time.Time
	}
	var done []finished
	for _, ar := range runners {
		select {
		case <-ar.WaitCh():
			done = append(done, finished{ar.ID(), finishedAt(ar)})
		default:
		}
	}
	slices.SortFunc(done, func(a, b finished) int { return a.at.Compare(b.at) })
	n := 0
	for _, f := range done {
		if n == excess {
			break
		}
		if c.allocs.Collect(f.id) {
			n++
		}
	}
	return n
}

// finishedAt is when the last task of a finished allocation ended.
func finishedAt(ar *allocrunner.AllocRunner) time.Time {
	var last time.Time
	for _, st := range ar.Alloc().TaskStates {
		if st.FinishedAt.After(last) {
			last = st.FinishedAt
		}
	}
	return last
}
