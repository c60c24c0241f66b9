package nodesim

import (
	"container/heap"
	"math/rand/v2"
	"sync"
	"time"
)

// fallbackTTL is used when the servers return no heartbeat TTL.
const fallbackTTL = 10 * time.Second

// firstHeartbeat is the wait before a newly ready node's next heartbeat:
// a random point between a tenth of the TTL and the TTL, so that nodes
// registered together do not heartbeat together ever after.
func firstHeartbeat(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		ttl = fallbackTTL
	}
	return ttl/10 + rand.N(ttl-ttl/10+1)
}

// nextHeartbeat is the wait after a heartbeat: between 80% and 100% of
// the TTL, early enough that a worker running late does not let the node
// expire, with jitter that keeps the heartbeats spread.
func nextHeartbeat(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		ttl = fallbackTTL
	}
	return ttl - rand.N(ttl/5+1)
}

// heartbeater sends every node's heartbeats from one timer heap and a few
// workers: a goroutine per node would mostly sleep, and the heap keeps
// the order of due heartbeats whatever the number of nodes.
type heartbeater struct {
	sim *Simulator

	mu   sync.Mutex
	due  dueHeap
	kick chan struct{}
	work chan *simNode
}

func newHeartbeater(s *Simulator) *heartbeater {
	return &heartbeater{sim: s, kick: make(chan struct{}, 1), work: make(chan *simNode)}
}

// start runs the dispatch loop and the workers until the simulator stops.
func (h *heartbeater) start() {
	h.sim.loops.Add(1 + h.sim.cfg.HeartbeatWorkers)
	go func() {
		defer h.sim.loops.Done()
		h.dispatch()
	}()
	for range h.sim.cfg.HeartbeatWorkers {
		go func() {
			defer h.sim.loops.Done()
			h.worker()
		}()
	}
}

// schedule sets n's next heartbeat at at.
func (h *heartbeater) schedule(n *simNode, at time.Time) {
	h.mu.Lock()
	heap.Push(&h.due, dueNode{at: at, node: n})
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// dispatch hands due nodes to the workers in due order.
func (h *heartbeater) dispatch() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		h.mu.Lock()
		var next *simNode
		wait := time.Hour
		if len(h.due) > 0 {
			if d := time.Until(h.due[0].at); d <= 0 {
				next = heap.Pop(&h.due).(dueNode).node
			} else {
				wait = d
			}
		}
		h.mu.Unlock()
		if next != nil {
			select {
			case h.work <- next:
				continue
			case <-h.sim.stopCh:
				return
			}
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-h.kick:
			if !timer.Stop() {
				<-timer.C
			}
		case <-h.sim.stopCh:
			return
		}
	}
}

// worker heartbeats the nodes it is handed and schedules each one's next
// heartbeat; a node the servers no longer know registers again.
func (h *heartbeater) worker() {
	s := h.sim
	for {
		var n *simNode
		select {
		case n = <-h.work:
		case <-s.stopCh:
			return
		}
		ttl, err := s.heartbeat(n)
		switch {
		case err == nil:
			h.schedule(n, time.Now().Add(nextHeartbeat(ttl)))
		case unknownNode(err):
			s.stats.reregistrations.Add(1)
			s.logger.Warn("the servers forgot a node; registering it again", "node", n.name)
			s.registerUntilDone(n, false)
		default:
			s.stats.heartbeatErrors.Add(1)
			s.logger.Warn("heartbeat failed", "node", n.name, "error", err)
			h.schedule(n, time.Now().Add(time.Second))
		}
	}
}

// dueNode is a node and the time of its next heartbeat.
type dueNode struct {
	at   time.Time
	node *simNode
}

// dueHeap is a min-heap of nodes by heartbeat time.
type dueHeap []dueNode

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueNode)) }
func (h *dueHeap) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	*h = old[:n-1]
	return x
}
