package client

import (
	"time"

	"github.com/opennomad/nomad/structs"
)

// Alloc watch timings.
const (
	// allocWatchWait is how long one blocking query for the node's
	// allocations may wait for a change.
	allocWatchWait = 5 * time.Minute
	// allocFetchWait bounds the wait of a server that is behind on the
	// allocations it just listed (stale reads).
	allocFetchWait = 30 * time.Second
)

// watchAllocs keeps the alloc runners in line with the servers: a
// blocking Node.GetClientAllocs returns the node's allocation IDs with
// their AllocModifyIndex; only the new or changed ones are fetched in
// full (Alloc.GetAllocs) and handed to the set, which starts, updates,
// stops and removes runners. The first query reads the leader's state;
// later ones may be answered by any server, since an older answer only
// delays, never reverts, what the client sees.
func (c *Client) watchAllocs() {
	var index uint64
	failures := 0
	for !c.stopping() {
		node := c.Node()
		req := &structs.NodeSpecificRequest{
			NodeID:   node.ID,
			SecretID: node.SecretID,
			QueryOptions: structs.QueryOptions{
				Region:        c.cfg.Region,
				MinQueryIndex: index,
				MaxQueryTime:  allocWatchWait,
				AllowStale:    index > 0,
			},
		}
		var resp structs.NodeClientAllocsResponse
		err := c.servers.call("Node.GetClientAllocs", req, &resp)
		if err == nil && resp.Index > index {
			var changed []*structs.Allocation
			if changed, err = c.fetchAllocs(resp.Allocs); err == nil {
				c.applyAllocs(resp.Allocs, changed)
				index = resp.Index
			}
		}
		if err != nil {
			failures++
			wait := c.retryWait(failures)
			c.logger.Error("watching the node's allocations failed", "error", err, "retry_in", wait)
			if !c.sleep(wait) {
				return
			}
			continue
		}
		failures = 0
	}
}

// fetchAllocs fetches in full the allocations the set lacks or has at an
// older AllocModifyIndex.
func (c *Client) fetchAllocs(serverIndex map[string]uint64) ([]*structs.Allocation, error) {
	ids := c.allocs.Stale(serverIndex)
	if len(ids) == 0 {
		return nil, nil
	}
	// Block until the answering server has at least the newest of them;
	// the result's index is the newest ModifyIndex, never below an
	// AllocModifyIndex.
	var newest uint64
	for _, id := range ids {
		newest = max(newest, serverIndex[id])
	}
	req := &structs.AllocsGetRequest{
		AllocIDs: ids,
		QueryOptions: structs.QueryOptions{
			// The node's secret is its credential: with ACLs on, servers
			// answer a node its own allocations.
			AuthToken:     c.Node().SecretID,
			Region:        c.cfg.Region,
			MinQueryIndex: newest - 1,
			MaxQueryTime:  allocFetchWait,
			AllowStale:    true,
		},
	}
	var resp structs.AllocsGetResponse
	if err := c.servers.call("Alloc.GetAllocs", req, &resp); err != nil {
		return nil, err
	}
	return resp.Allocs, nil
}

// applyAllocs hands the servers' view to the alloc runners, unless the
// client is stopping.
func (c *Client) applyAllocs(serverIndex map[string]uint64, changed []*structs.Allocation) {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	if c.stopped {
		return
	}
	c.allocs.Apply(serverIndex, changed)
	if len(changed) > 0 {
		c.triggerGC()
	}
	// A new job version may change the services of a running alloc.
	for _, a := range changed {
		c.services.mark(a.ID)
	}
}
