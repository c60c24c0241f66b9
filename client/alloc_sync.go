package client

import (
	"errors"
	"maps"
	"slices"

	"github.com/opennomad/nomad/structs"
)

// allocUpdated queues an alloc runner's status change for the next sync.
// Alloc runners call it from their goroutines; only the newest change of
// each allocation is kept.
func (c *Client) allocUpdated(update *structs.Allocation) {
	c.syncMu.Lock()
	c.pending[update.ID] = update
	c.syncMu.Unlock()
	c.services.mark(update.ID)
}

// syncLoop sends queued status changes to the servers every
// AllocSyncInterval, all in one Node.UpdateAlloc. A failed batch is
// queued again (behind any newer change of the same allocation) and
// retried with backoff. It starts once the node is registered, since the
// servers refuse updates from unknown nodes.
func (c *Client) syncLoop() {
	defer c.loops.Done()
	select {
	case <-c.registered:
	case <-c.shutdownCh:
		return
	}
	failures := 0
	for {
		wait := c.cfg.AllocSyncInterval
		if failures > 0 {
			wait = c.retryWait(failures)
		}
		if !c.sleep(wait) {
			return
		}
		batch := c.takePending()
		if len(batch) == 0 {
			continue
		}
		err := c.sendUpdates(batch)
		var invalid *structs.ValidationError
		switch {
		case err == nil:
			failures = 0
		case errors.As(err, &invalid):
			// Sending it again would be refused again.
			failures = 0
			c.logger.Error("the servers refused alloc updates; dropping them", "allocs", len(batch), "error", err)
		default:
			failures++
			c.requeue(batch)
			c.logger.Error("sending alloc updates failed", "allocs", len(batch), "error", err)
		}
	}
}

// sendUpdates sends one batch.
func (c *Client) sendUpdates(batch []*structs.Allocation) error {
	req := &structs.AllocUpdateRequest{
		Alloc:        batch,
		WriteRequest: structs.WriteRequest{Region: c.cfg.Region},
	}
	var resp structs.GenericResponse
	return c.servers.call("Node.UpdateAlloc", req, &resp)
}

// takePending empties the queue, in alloc ID order.
func (c *Client) takePending() []*structs.Allocation {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	if len(c.pending) == 0 {
		return nil
	}
	batch := make([]*structs.Allocation, 0, len(c.pending))
	for _, id := range slices.Sorted(maps.Keys(c.pending)) {
		batch = append(batch, c.pending[id])
	}
	clear(c.pending)
	return batch
}

// requeue puts back the updates of a failed batch that no newer change
// replaced meanwhile.
func (c *Client) requeue(batch []*structs.Allocation) {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	for _, a := range batch {
		if _, newer := c.pending[a.ID]; !newer {
			c.pending[a.ID] = a
		}
	}
}
