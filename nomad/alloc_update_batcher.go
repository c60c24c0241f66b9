package nomad

import (
	"sync"

	"github.com/opennomad/nomad/structs"
)

// allocUpdateBatcher gathers client alloc updates into one Raft entry per
// interval: thousands of clients reporting every few hundred
// milliseconds would otherwise each cost a commit. Node.UpdateAlloc
// (package nomad/endpoints) adds to it through endpointServer's
// BatchAllocUpdates.
type allocUpdateBatcher struct {
	srv *Server

	mu      sync.Mutex
	updates []*structs.Allocation
	evals   []*structs.Evaluation
	// jobs holds the jobs that already have a reschedule eval in this
	// batch; one per job is enough.
	jobs  map[structs.NamespacedID]bool
	batch *allocBatch
}

// allocBatch is one pending Raft entry and its outcome.
type allocBatch struct {
	done  chan struct{}
	index uint64
	err   error
}

// wait blocks until the batch is written.
func (b *allocBatch) wait() (uint64, error) {
	<-b.done
	return b.index, b.err
}

func newAllocUpdateBatcher(s *Server) *allocUpdateBatcher {
	return &allocUpdateBatcher{srv: s}
}

// add puts updates and evals in the current batch, starting one (and its
// timer, on the server's clock) if none is open, and returns it.
func (b *allocUpdateBatcher) add(updates []*structs.Allocation, evals []*structs.Evaluation) *allocBatch {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.batch == nil {
		b.batch = &allocBatch{done: make(chan struct{})}
		b.jobs = make(map[structs.NamespacedID]bool)
		b.srv.clock.AfterFunc(b.srv.config.AllocUpdateBatchInterval, b.flush)
	}
	b.updates = append(b.updates, updates...)
	for _, e := range evals {
		if key := e.NamespacedJobID(); !b.jobs[key] {
			b.jobs[key] = true
			b.evals = append(b.evals, e)
		}
	}
	return b.batch
}

// flush writes the open batch and releases its waiters.
func (b *allocUpdateBatcher) flush() {
	b.mu.Lock()
	batch, updates, evals := b.batch, b.updates, b.evals
	b.batch, b.updates, b.evals, b.jobs = nil, nil, nil, nil
	b.mu.Unlock()
	if batch == nil {
		return
	}
	req := &structs.AllocUpdateRequest{Alloc: updates, Evals: evals}
	_, batch.index, batch.err = b.srv.raftApply(structs.AllocClientUpdateRequestType, req)
	if batch.err != nil {
		b.srv.logger.Error("failed to write client alloc updates", "allocs", len(updates), "error", batch.err)
	}
	close(batch.done)
}
