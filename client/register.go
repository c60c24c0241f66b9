package client

import (
	"time"

	"github.com/opennomad/nomad/structs"
)

// register sends the node to the servers and returns the heartbeat TTL
// they expect. The servers keep a known node's status: only heartbeats
// change it.
func (c *Client) register() (time.Duration, error) {
	req := &structs.NodeRegisterRequest{
		Node:         c.Node(),
		WriteRequest: structs.WriteRequest{Region: c.cfg.Region},
	}
	var resp structs.NodeUpdateResponse
	if err := c.servers.call("Node.Register", req, &resp); err != nil {
		return 0, err
	}
	c.logger.Info("node registered", "node_id", req.Node.ID, "heartbeat_ttl", resp.HeartbeatTTL)
	c.learnServers(resp.Servers)
	c.keepNodeIdentity(resp.SignedIdentity)
	return resp.HeartbeatTTL, nil
}

// registerUntilDone registers, retrying with backoff, until it succeeds
// (true, with the TTL) or the client stops (false).
func (c *Client) registerUntilDone() (time.Duration, bool) {
	for failures := 1; ; failures++ {
		ttl, err := c.register()
		if err == nil {
			return ttl, true
		}
		wait := c.retryWait(failures)
		log := c.logger.Error
		if serverUnavailable(err) && failures <= 3 {
			// Expected while a server starting with the client elects
			// its leader.
			log = c.logger.Warn
		}
		log("registering the node failed", "error", err, "retry_in", wait)
		if !c.sleep(wait) {
			return 0, false
		}
	}
}
