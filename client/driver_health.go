package client

import (
	"maps"
	"time"

	"github.com/opennomad/nomad/client/fingerprint"
	"github.com/opennomad/nomad/structs"
)

// driverCheckInterval is how often drivers are asked for their health
// again: a driver that turns healthy (or stops being so) changes where
// the servers may place tasks.
const driverCheckInterval = 30 * time.Second

// driverHealthLoop re-fingerprints the drivers and registers the node
// again when their health or attributes changed, or at once when its
// dynamic meta changed. A registration that fails is tried again at the
// next check.
func (c *Client) driverHealthLoop() {
	defer c.loops.Done()
	select {
	case <-c.registered:
	case <-c.shutdownCh:
		return
	}
	dirty := false
	for {
		timer := c.clock.After(driverCheckInterval)
		select {
		case <-c.shutdownCh:
			return
		case <-c.nodeChanged:
			dirty = true
		case <-timer:
			if c.refreshDrivers() {
				dirty = true
			}
		}
		if !dirty {
			continue
		}
		if _, err := c.register(); err != nil {
			c.logger.Error("registering the node's new driver health failed", "error", err)
			continue
		}
		dirty = false
	}
}

// refreshDrivers asks every driver for its health and rebuilds the node
// when something the servers see changed. It reports whether it did.
func (c *Client) refreshDrivers() bool {
	drivers := c.drivers.Fingerprint(c.clock.Now())
	c.nodeMu.Lock()
	defer c.nodeMu.Unlock()
	if !driversChanged(c.node.Drivers, drivers) {
		return false
	}
	old := c.node
	c.node = fingerprint.BuildNode(old.ID, old.SecretID, c.cfg.fingerprintConfig(), c.machine, drivers)
	c.applyDynamicMeta(c.node)
	c.applyDynamicVolumes(c.node)
	c.logger.Info("driver health changed", "drivers", healthyDrivers(c.node))
	return true
}

// driversChanged compares what placement reads of two driver sets; the
// time of the check does not count.
func driversChanged(a, b map[string]*structs.DriverInfo) bool {
	if len(a) != len(b) {
		return true
	}
	for name, x := range a {
		y, ok := b[name]
		if !ok || (x == nil) != (y == nil) {
			return true
		}
		if x == nil {
			continue
		}
		if x.Detected != y.Detected || x.Healthy != y.Healthy || x.HealthDescription != y.HealthDescription ||
			!maps.Equal(x.Attributes, y.Attributes) {
			return true
		}
	}
	return false
}
