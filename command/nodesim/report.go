package nodesim

import (
	"errors"
	"sync"

	"github.com/opennomad/nomad/structs"
)

// maxConcurrentUpdates bounds the Node.UpdateAlloc calls of one sync
// round in flight at once.
const maxConcurrentUpdates = 4

// reporter sends the nodes' alloc status updates. A real client sends its
// own updates every sync interval; here one loop sends every node's in a
// few calls per interval, which the servers batch into one Raft entry
// either way, and which costs the simulator one goroutine instead of one
// per node.
type reporter struct {
	sim *Simulator

	mu      sync.Mutex
	pending map[string]*structs.Allocation
}

func newReporter(s *Simulator) *reporter {
	return &reporter{sim: s, pending: make(map[string]*structs.Allocation)}
}

// add queues an update; a newer update of the same allocation replaces
// an unsent one.
func (r *reporter) add(u *structs.Allocation) {
	r.mu.Lock()
	r.pending[u.ID] = u
	r.mu.Unlock()
}

// take empties the queue.
func (r *reporter) take() []*structs.Allocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pending) == 0 {
		return nil
	}
	out := make([]*structs.Allocation, 0, len(r.pending))
	for _, u := range r.pending {
		out = append(out, u)
	}
	clear(r.pending)
	return out
}

// requeue puts back updates of a failed call that no newer update
// replaced meanwhile.
func (r *reporter) requeue(batch []*structs.Allocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, u := range batch {
		if _, newer := r.pending[u.ID]; !newer {
			r.pending[u.ID] = u
		}
	}
}

// run sends the queue every sync interval until the simulator stops.
func (r *reporter) run() {
	s := r.sim
	failures := 0
	for {
		wait := s.cfg.SyncInterval
		if failures > 0 {
			wait = backoff(failures)
		}
		if !s.sleep(wait) {
			return
		}
		if r.flush() {
			failures = 0
		} else {
			failures++
		}
	}
}

// flush sends what is queued, in calls of at most MaxUpdatesPerCall
// allocations, and reports whether every call succeeded. Updates of a
// failed call are queued again, unless the servers refused them as
// invalid.
func (r *reporter) flush() bool {
	batch := r.take()
	if len(batch) == 0 {
		return true
	}
	s := r.sim
	per := s.cfg.MaxUpdatesPerCall
	var wg sync.WaitGroup
	var okMu sync.Mutex
	ok := true
	sem := make(chan struct{}, maxConcurrentUpdates)
	for start := 0; start < len(batch); start += per {
		chunk := batch[start:min(start+per, len(batch))]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := r.send(chunk); err != nil {
				var invalid *structs.ValidationError
				if errors.As(err, &invalid) {
					s.logger.Error("the servers refused alloc updates; dropping them", "allocs", len(chunk), "error", err)
					return
				}
				s.logger.Warn("sending alloc updates failed", "allocs", len(chunk), "error", err)
				r.requeue(chunk)
				okMu.Lock()
				ok = false
				okMu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ok
}

// send makes one Node.UpdateAlloc call.
func (r *reporter) send(chunk []*structs.Allocation) error {
	s := r.sim
	req := &structs.AllocUpdateRequest{
		// The endpoint owns the request; keep our slice for a retry.
		Alloc:        append([]*structs.Allocation(nil), chunk...),
		WriteRequest: structs.WriteRequest{Region: s.cfg.Region},
	}
	var resp structs.GenericResponse
	s.stats.updateCalls.Add(1)
	if err := s.servers.write("Node.UpdateAlloc", req, &resp); err != nil {
		s.stats.updateErrors.Add(1)
		return err
	}
	s.stats.updatesSent.Add(int64(len(chunk)))
	return nil
}
