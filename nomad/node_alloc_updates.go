package nomad

import (
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/structs"
)

// UpdateAlloc takes a client's alloc status updates. Updates from all
// clients are gathered for AllocUpdateBatchInterval and written in one
// Raft entry, with a reschedule eval (alloc-failure) for each job whose
// newly failed alloc its reschedule policy allows to be replaced. The
// call returns once that entry is applied.
func (n *NodeEndpoint) UpdateAlloc(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.forward("Node.UpdateAlloc", args, args, reply); done {
		return err
	}
	defer metrics.MeasureSince([]string{"nomad", "client", "update_alloc"}, time.Now())
	if err := validateAllocUpdates(args.Alloc); err != nil {
		return err
	}
	store := n.srv.State()
	now := n.srv.now()
	var evals []*structs.Evaluation
	for _, u := range args.Alloc {
		stored, err := store.AllocByID(nil, u.ID)
		if err != nil {
			return err
		}
		if stored == nil {
			// Collected meanwhile; the state store skips it too.
			continue
		}
		if u.NodeID != "" && u.NodeID != stored.NodeID {
			return fmt.Errorf("alloc %q: update from node %q, but it runs on node %q", u.ID, u.NodeID, stored.NodeID)
		}
		node, err := store.NodeByID(nil, stored.NodeID)
		if err != nil {
			return err
		}
		if node == nil {
			return fmt.Errorf("alloc %q: node %q: %w", u.ID, stored.NodeID, structs.ErrUnknownNode)
		}
		if node.Status == structs.NodeStatusDown {
			return fmt.Errorf("node %q is down: it must heartbeat before updating its allocs", node.ID)
		}
		u.ModifyTime = now.UnixNano()
		if u.ClientStatus != structs.AllocClientStatusFailed || stored.FollowupEvalID != "" {
			continue
		}
		job, err := store.JobByID(nil, stored.Namespace, stored.JobID)
		if err != nil {
			return err
		}
		tg := job.LookupTaskGroup(stored.TaskGroup)
		if tg == nil || !stored.RescheduleEligible(tg.ReschedulePolicy, now) {
			continue
		}
		evals = append(evals, newJobEval(job, structs.EvalTriggerRetryFailedAlloc, 0, now))
	}

	index, err := n.srv.allocUpdates.add(args.Alloc, evals).wait()
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// validateAllocUpdates lists every problem of a batch of client updates.
func validateAllocUpdates(allocs []*structs.Allocation) error {
	if len(allocs) == 0 {
		return &structs.ValidationError{Problems: []string{"must update at least one allocation"}}
	}
	var problems []string
	for i, a := range allocs {
		switch {
		case a == nil:
			problems = append(problems, fmt.Sprintf("allocation %d: missing", i))
		case a.ID == "":
			problems = append(problems, fmt.Sprintf("allocation %d: missing ID", i))
		case !validClientStatus(a.ClientStatus):
			problems = append(problems, fmt.Sprintf("allocation %q: invalid client status %q", a.ID, a.ClientStatus))
		}
	}
	if len(problems) > 0 {
		return &structs.ValidationError{Problems: problems}
	}
	return nil
}

// validClientStatus reports whether a client may report the status.
func validClientStatus(s string) bool {
	switch s {
	case structs.AllocClientStatusPending, structs.AllocClientStatusRunning,
		structs.AllocClientStatusComplete, structs.AllocClientStatusFailed,
		structs.AllocClientStatusLost, structs.AllocClientStatusUnknown:
		return true
	}
	return false
}

// allocUpdateBatcher gathers client alloc updates into one Raft entry per
// interval: thousands of clients reporting every few hundred
// milliseconds would otherwise each cost a commit.
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
