package nomad

import (
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

// errHeartbeatNotLeader refuses a heartbeat on a server that cannot keep
// its timer.
var errHeartbeatNotLeader = errors.New("failed to reset heartbeat since server is not leader")

// heartbeatTTL returns the TTL a client is given: the larger of the
// minimum and the time it takes the leader to hear every node once at the
// target rate, plus up to as much again as jitter (r in [0,1)), so that
// clients that registered together do not heartbeat together.
//
//	base = max(minTTL, nodes / maxPerSecond seconds)
//	ttl  = base + r*base
func heartbeatTTL(nodes int, minTTL time.Duration, maxPerSecond float64, r float64) time.Duration {
	base := time.Duration(float64(nodes) / maxPerSecond * float64(time.Second))
	if base < minTTL {
		base = minTTL
	}
	return base + time.Duration(r*float64(base))
}

// heartbeater keeps one timer per live node on the leader. A node that
// does not heartbeat before its timer fires is marked down, which
// re-evaluates its jobs so its allocations are replaced. Timers run on
// the server's clock.
type heartbeater struct {
	srv *Server

	mu     sync.Mutex
	timers map[string]*nodeTimer
}

// nodeTimer is a node's pending expiry. Expiry compares the timer it
// fired for with the node's current one, so a heartbeat that re-armed
// the node just as the old timer fired wins.
type nodeTimer struct {
	timer clock.Timer
}

func newHeartbeater(s *Server) *heartbeater {
	return &heartbeater{srv: s, timers: make(map[string]*nodeTimer)}
}

// initialize arms every live node with the failover TTL when this server
// becomes leader: clients heartbeated the old leader, and must get time to
// find this one before they are declared down.
func (h *heartbeater) initialize() error {
	nodes, err := h.srv.State().Nodes(nil)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range nodes {
		if n.TerminalStatus() {
			continue
		}
		h.armLocked(n.ID, h.srv.config.FailoverHeartbeatTTL)
	}
	h.gaugeLocked()
	return nil
}

// reset re-arms a node's timer after a heartbeat and returns the TTL the
// client must heartbeat within. The server waits HeartbeatGrace longer.
func (h *heartbeater) reset(nodeID string) (time.Duration, error) {
	if !h.srv.IsLeader() {
		return 0, errHeartbeatNotLeader
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	cfg := h.srv.config
	ttl := heartbeatTTL(len(h.timers), cfg.MinHeartbeatTTL, cfg.MaxHeartbeatsPerSecond, rand.Float64())
	h.armLocked(nodeID, ttl+cfg.HeartbeatGrace)
	h.gaugeLocked()
	return ttl, nil
}

// armLocked replaces the node's timer with one firing after d.
func (h *heartbeater) armLocked(nodeID string, d time.Duration) {
	if old := h.timers[nodeID]; old != nil {
		old.timer.Stop()
	}
	nt := &nodeTimer{}
	h.timers[nodeID] = nt
	nt.timer = h.srv.clock.AfterFunc(d, func() { h.expire(nodeID, nt) })
}

// clear forgets a node's timer (it went down or was removed).
func (h *heartbeater) clear(nodeID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.timers[nodeID]; t != nil {
		t.timer.Stop()
		delete(h.timers, nodeID)
	}
	h.gaugeLocked()
}

// clearAll forgets every timer (leadership lost).
func (h *heartbeater) clearAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, t := range h.timers {
		t.timer.Stop()
		delete(h.timers, id)
	}
	h.gaugeLocked()
}

// count returns the number of nodes with a timer.
func (h *heartbeater) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.timers)
}

// expire marks a node down whose heartbeat is overdue, through the same
// endpoint a client heartbeat uses, with the "Node heartbeat missed"
// event; the endpoint re-evaluates the node's jobs in the same Raft entry.
// It runs on the clock's goroutine.
func (h *heartbeater) expire(nodeID string, fired *nodeTimer) {
	h.mu.Lock()
	if h.timers[nodeID] != fired {
		h.mu.Unlock()
		return
	}
	delete(h.timers, nodeID)
	h.gaugeLocked()
	h.mu.Unlock()

	metrics.IncrCounter([]string{"nomad", "heartbeat", "invalidate"}, 1)
	h.srv.logger.Warn("node heartbeat missed; marking it down", "node_id", nodeID)
	req := &structs.NodeUpdateStatusRequest{
		NodeID: nodeID,
		Status: structs.NodeStatusDown,
		NodeEvent: structs.NewNodeEvent(structs.NodeEventSubsystemCluster,
			structs.NodeEventMsgHeartbeatMissed, h.srv.now()),
		WriteRequest: structs.WriteRequest{Region: h.srv.config.Region},
	}
	var resp structs.NodeUpdateResponse
	if err := h.srv.RPC("Node.UpdateStatus", req, &resp); err != nil {
		h.srv.logger.Error("failed to mark node down after a missed heartbeat", "node_id", nodeID, "error", err)
	}
}

// gaugeLocked publishes how many nodes are tracked.
func (h *heartbeater) gaugeLocked() {
	metrics.SetGauge([]string{"nomad", "heartbeat", "active"}, float32(len(h.timers)))
}
