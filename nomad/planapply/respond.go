package planapply

import (
	"fmt"
	"sync"
	"time"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

// judgedPlan is a queued plan the applier has judged: its result and,
// when that has something to commit, the Raft future of the commit. It
// waits in the responder until its answer can go out.
type judgedPlan struct {
	queued *QueuedPlan
	result *structs.PlanResult
	// future is nil for a result with nothing to commit.
	future     RaftFuture
	seq        uint64
	dispatched time.Time
}

// planResponder answers judged plans in the order they were judged, each
// once its Raft commit (if any) is done, and reports every commit's
// outcome back to the applier. It runs in a goroutine of its own so that
// waiting on Raft never holds up judging the next plan.
//
// Answering in order is what makes RefreshIndex honest: a plan judged on
// top of pending results may have been rejected because of their allocs,
// so a scheduler told to refresh must see them; answered after them, the
// plan's RefreshIndex is raised to the newest index committed so far.
type planResponder struct {
	clock clock.Clock
	done  chan<- planCompletion

	mu     sync.Mutex
	queue  []*judgedPlan
	closed bool
	wake   chan struct{}
	exited chan struct{}

	// lastIndex is the newest Raft index committed; responder goroutine
	// only.
	lastIndex uint64
}

func newPlanResponder(c clock.Clock, done chan<- planCompletion) *planResponder {
	return &planResponder{
		clock:  c,
		done:   done,
		wake:   make(chan struct{}, 1),
		exited: make(chan struct{}),
	}
}

// push queues a response; it never blocks.
func (r *planResponder) push(resp *judgedPlan) {
	r.mu.Lock()
	r.queue = append(r.queue, resp)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// close lets run return once the queue is empty, and waits for that.
func (r *planResponder) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	<-r.exited
}

// run answers queued plans until closed and drained.
func (r *planResponder) run() {
	defer close(r.exited)
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			closed := r.closed
			r.mu.Unlock()
			if closed {
				return
			}
			<-r.wake
			continue
		}
		resp := r.queue[0]
		r.queue[0] = nil
		r.queue = r.queue[1:]
		r.mu.Unlock()
		r.answer(resp)
	}
}

func (r *planResponder) answer(resp *judgedPlan) {
	res := resp.result
	if resp.future != nil {
		index, err := resp.future.Wait()
		clock.EmitDuration(metricPlanApply, r.clock.Now().Sub(resp.dispatched), nil)
		r.done <- planCompletion{seq: resp.seq, err: err}
		if err != nil {
			resp.queued.Respond(nil, fmt.Errorf("plan for eval %q: applying the result: %w", resp.queued.Plan.EvalID, err))
			return
		}
		r.lastIndex = max(r.lastIndex, index)
		res.AllocIndex = index
	}
	if res.RefreshIndex != 0 {
		res.RefreshIndex = max(res.RefreshIndex, r.lastIndex)
	}
	resp.queued.Respond(res, nil)
}
