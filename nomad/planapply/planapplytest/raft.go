// Package planapplytest holds in-memory twins of planapply.Raft for the
// tests of the plan applier and of what runs on top of it (the server's
// scheduling tests): they encode each request when it is handed over, as
// the real one must, and apply a decoded copy to a statetest.Store the way
// the FSM would, so nothing the applier keeps is shared with the store.
//
// ManualRaft holds every entry until the test commits or fails it;
// AutoRaft applies entries in the background, optionally with a group
// commit latency.
//
// It is imported by tests only.
package planapplytest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/planapply"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/nomad/state/statetest"
	"github.com/opennomad/nomad/structs"
)

// twinFuture completes once its entry is applied or failed.
type twinFuture struct {
	done  chan struct{}
	index uint64
	err   error
}

func (f *twinFuture) Wait() (uint64, error) {
	<-f.done
	return f.index, f.err
}

func (f *twinFuture) complete(index uint64, err error) {
	f.index, f.err = index, err
	close(f.done)
}

// twinEntry is one dispatched request, encoded.
type twinEntry struct {
	buf    []byte
	future *twinFuture
}

func newTwinEntry(tb testing.TB, req *structs.ApplyPlanResultsRequest) *twinEntry {
	buf, err := structs.Encode(structs.ApplyPlanResultsRequestType, req)
	if err != nil {
		tb.Errorf("encoding plan results: %v", err)
	}
	return &twinEntry{buf: buf, future: &twinFuture{done: make(chan struct{})}}
}

// decode returns the request the entry carries.
func (e *twinEntry) decode() (*structs.ApplyPlanResultsRequest, error) {
	var req structs.ApplyPlanResultsRequest
	err := structs.Decode(e.buf[1:], &req)
	return &req, err
}

// applyEntry is the FSM: it writes the entry to s at the next index and
// runs after (the leader's side effects) on success.
func applyEntry(s *statetest.Store, e *twinEntry, after func(uint64, *structs.ApplyPlanResultsRequest)) (uint64, error) {
	req, err := e.decode()
	if err != nil {
		return 0, err
	}
	index, err := s.Write(func(tx *state.Txn) error { return tx.UpsertPlanResults(req) })
	if err == nil && after != nil {
		after(index, req)
	}
	return index, err
}

// ManualRaft holds every entry until the test commits or fails it,
// oldest first.
type ManualRaft struct {
	t *testing.T
	s *statetest.Store

	mu         sync.Mutex
	queue      []*twinEntry
	dispatched []*twinEntry
	changed    chan struct{}
}

// NewManualRaft returns a twin that commits to s when told to.
func NewManualRaft(t *testing.T, s *statetest.Store) *ManualRaft {
	return &ManualRaft{t: t, s: s, changed: make(chan struct{})}
}

var _ planapply.Raft = (*ManualRaft)(nil)

// ApplyPlanResults queues the entry; it commits when the test says so.

func (r *ManualRaft) ApplyPlanResults(req *structs.ApplyPlanResultsRequest) planapply.RaftFuture {
	e := newTwinEntry(r.t, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queue = append(r.queue, e)
	r.dispatched = append(r.dispatched, e)
	close(r.changed)
	r.changed = make(chan struct{})
	return e.future
}

// WaitDispatched blocks until n entries in all were handed over.
func (r *ManualRaft) WaitDispatched(n int) {
	r.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		got, ch := len(r.dispatched), r.changed
		r.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			r.t.Fatalf("waited 10s for %d plan results to reach raft, got %d", n, got)
		}
	}
}

// Dispatched is how many entries were handed over so far.
func (r *ManualRaft) Dispatched() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.dispatched)
}

// Request decodes the i-th entry handed over.
func (r *ManualRaft) Request(i int) *structs.ApplyPlanResultsRequest {
	r.t.Helper()
	r.mu.Lock()
	e := r.dispatched[i]
	r.mu.Unlock()
	req, err := e.decode()
	must.NoError(r.t, err)
	return req
}

func (r *ManualRaft) pop() *twinEntry {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 {
		r.t.Fatal("no plan result in raft")
	}
	e := r.queue[0]
	r.queue = r.queue[1:]
	return e
}

// Commit applies the oldest entry and returns its index.
func (r *ManualRaft) Commit() uint64 {
	r.t.Helper()
	e := r.pop()
	index, err := applyEntry(r.s, e, nil)
	e.future.complete(index, err)
	must.NoError(r.t, err)
	return index
}

// Fail fails the oldest entry without applying it.
func (r *ManualRaft) Fail(err error) {
	r.t.Helper()
	r.pop().future.complete(0, err)
}

// FailQueued fails every entry not yet committed or failed with
// ErrShutdown, as Raft does at shutdown; a test calls it at its end so
// that the applier's Run can return.
func (r *ManualRaft) FailQueued() {
	r.mu.Lock()
	queued := r.queue
	r.queue = nil
	r.mu.Unlock()
	for _, e := range queued {
		e.future.complete(0, ErrShutdown)
	}
}

// AutoRaft applies entries in the background, in order. With a
// latency it behaves like Raft with group commit: whatever arrived while
// the previous batch was being made durable goes into the next batch,
// which costs one latency however many entries it holds.
type AutoRaft struct {
	tb      testing.TB
	s       *statetest.Store
	latency time.Duration
	after   func(uint64, *structs.ApplyPlanResultsRequest)

	mu    sync.Mutex
	queue []*twinEntry
	wake  chan struct{}
	stop  context.CancelFunc
	done  chan struct{}
}

// NewAutoRaft starts a twin that commits to s in the background, each
// batch after latency (none when 0), and runs after (the leader's side
// effects of the FSM; may be nil) for every entry committed. It stops at
// the end of the test, failing what it still holds.
func NewAutoRaft(tb testing.TB, s *statetest.Store, latency time.Duration, after func(uint64, *structs.ApplyPlanResultsRequest)) *AutoRaft {
	ctx, cancel := context.WithCancel(context.Background())
	r := &AutoRaft{
		tb: tb, s: s, latency: latency, after: after,
		wake: make(chan struct{}, 1), stop: cancel, done: make(chan struct{}),
	}
	go r.run(ctx)
	tb.Cleanup(func() {
		r.stop()
		<-r.done
	})
	return r
}

var _ planapply.Raft = (*AutoRaft)(nil)

// ApplyPlanResults queues the entry for the next batch.
func (r *AutoRaft) ApplyPlanResults(req *structs.ApplyPlanResultsRequest) planapply.RaftFuture {
	e := newTwinEntry(r.tb, req)
	r.mu.Lock()
	r.queue = append(r.queue, e)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return e.future
}

func (r *AutoRaft) run(ctx context.Context) {
	defer close(r.done)
	for {
		r.mu.Lock()
		batch := r.queue
		r.queue = nil
		r.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-r.wake:
				continue
			case <-ctx.Done():
				r.failQueued()
				return
			}
		}
		if r.latency > 0 {
			time.Sleep(r.latency) // stands for the fsync of the batch
		}
		for _, e := range batch {
			index, err := applyEntry(r.s, e, r.after)
			e.future.complete(index, err)
		}
	}
}

// failQueued fails what is left at shutdown, as Raft does.
func (r *AutoRaft) failQueued() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.queue {
		e.future.complete(0, ErrShutdown)
	}
	r.queue = nil
}

// ErrShutdown is what the twins answer for entries still queued when
// they stop, as Raft does.
var ErrShutdown = errors.New("raft is shutdown")
