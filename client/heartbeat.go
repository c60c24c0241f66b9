package client

import (
	"math/rand/v2"
	"time"

	"github.com/opennomad/nomad/structs"
)

// Heartbeat timings.
const (
	// maxFirstHeartbeatStagger bounds the random wait before a new node's
	// first heartbeat, so that many clients started together do not all
	// turn ready at once.
	maxFirstHeartbeatStagger = 10 * time.Second
	// fallbackHeartbeatTTL is used when the servers return no TTL.
	fallbackHeartbeatTTL = 10 * time.Second
)

// firstHeartbeat is the wait before the first heartbeat after
// registering: none in dev mode, otherwise a random part of the TTL.
func (c *Client) firstHeartbeat(ttl time.Duration) time.Duration {
	if c.cfg.DevMode {
		return 0
	}
	bound := min(ttl, maxFirstHeartbeatStagger)
	if bound <= 0 {
		return 0
	}
	return rand.N(bound)
}

// heartbeatLoop heartbeats at the TTL the servers ask for until the
// client stops. A node the servers forgot registers again; other errors
// are retried with backoff (the server list has already moved on to the
// next server if this one could not answer).
func (c *Client) heartbeatLoop(wait time.Duration) {
	failures := 0
	for {
		if !c.sleep(wait) {
			return
		}
		ttl, err := c.heartbeat()
		switch {
		case err == nil:
			failures = 0
			wait = ttl
			if wait <= 0 {
				wait = fallbackHeartbeatTTL
			}
		case isUnknownNode(err):
			c.logger.Warn("the servers do not know this node; registering again")
			if _, ok := c.registerUntilDone(); !ok {
				return
			}
			failures, wait = 0, 0
		default:
			failures++
			wait = c.retryWait(failures)
			c.logger.Error("heartbeat failed", "error", err, "retry_in", wait)
		}
	}
}

// heartbeat tells the servers the node is ready and returns the next TTL.
func (c *Client) heartbeat() (time.Duration, error) {
	node := c.Node()
	req := &structs.NodeUpdateStatusRequest{
		NodeID:   node.ID,
		SecretID: node.SecretID,
		Status:   structs.NodeStatusReady,
		// Asked on every heartbeat until one is issued.
		ForceIdentityRenewal: c.wantsNodeIdentity(),
		WriteRequest:         structs.WriteRequest{Region: c.cfg.Region},
	}
	var resp structs.NodeUpdateResponse
	if err := c.servers.call("Node.UpdateStatus", req, &resp); err != nil {
		return 0, err
	}
	c.hbMu.Lock()
	c.lastHeartbeat = c.clock.Now()
	c.heartbeatTTL = resp.HeartbeatTTL
	c.hbMu.Unlock()
	c.learnServers(resp.Servers)
	c.keepNodeIdentity(resp.SignedIdentity)
	return resp.HeartbeatTTL, nil
}
