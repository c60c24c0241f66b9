package nomad

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
)

// Helpers of the tests that run the whole server: real Raft (in memory),
// FSM, broker, plan applier, workers running the builtin schedulers, and
// the leader's duties. Clients are simulated through Node.UpdateAlloc,
// the RPC real clients use.

// newPipelineServer starts a single server with n scheduling workers, all
// of them working while it leads (a leader would otherwise pause three
// quarters of them).
func newPipelineServer(t *testing.T, n int, cb func(*Config)) *Server {
	t.Helper()
	return newTestServer(t, func(c *Config) {
		c.NumSchedulers = n
		c.LeaderPausedFraction = 0
		// The fake clients do not heartbeat: on a loaded machine a run
		// can outlast the default TTL and grace (20 s), and a node marked
		// down refuses its clients' updates.
		c.MinHeartbeatTTL = time.Hour
		if cb != nil {
			cb(c)
		}
	})
}

// waitForState waits until cond holds on the server's state, re-checking
// whenever something cond watched changes; it fails the test after 20 s
// with cond's last explanation.
func waitForState(t testing.TB, s *Server, cond func(ws memdb.WatchSet, store *state.StateStore) (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		ws := memdb.NewWatchSet()
		store := s.State()
		ws.Add(store.AbandonCh())
		ok, why := cond(ws, store)
		if ok {
			return
		}
		if err := ws.WatchCtx(ctx); err != nil {
			t.Fatalf("state never got there: %s", why)
		}
	}
}

// liveAllocs returns the job's allocs that are not terminal.
func liveAllocs(t *testing.T, ws memdb.WatchSet, store *state.StateStore, job *structs.Job) []*structs.Allocation {
	t.Helper()
	allocs, err := store.AllocsByJob(ws, job.Namespace, job.ID, false)
	must.NoError(t, err)
	var live []*structs.Allocation
	for _, a := range allocs {
		if !a.TerminalStatus() {
			live = append(live, a)
		}
	}
	return live
}

// waitForLive waits until the job has exactly n live allocs and no eval
// of it is still to be processed, and returns the allocs.
func waitForLive(t *testing.T, s *Server, job *structs.Job, n int) []*structs.Allocation {
	t.Helper()
	var live []*structs.Allocation
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		live = liveAllocs(t, ws, store, job)
		open := openEvals(t, ws, store, job)
		return len(live) == n && open == 0, fmt.Sprintf("job %s: %d live allocs (want %d), %d open evals", job.ID, len(live), n, open)
	})
	return live
}

// openEvals counts the job's evals that are neither terminal nor blocked.
func openEvals(t *testing.T, ws memdb.WatchSet, store *state.StateStore, job *structs.Job) int {
	t.Helper()
	evals, err := store.EvalsByJob(ws, job.Namespace, job.ID)
	must.NoError(t, err)
	open := 0
	for _, e := range evals {
		if !e.TerminalStatus() && e.Status != structs.EvalStatusBlocked {
			open++
		}
	}
	return open
}

// runningUpdate is a client's report that an alloc runs, with every task
// started at startedAt.
func runningUpdate(a *structs.Allocation, startedAt time.Time) *structs.Allocation {
	u := &structs.Allocation{ID: a.ID, NodeID: a.NodeID, ClientStatus: structs.AllocClientStatusRunning,
		TaskStates: map[string]*structs.TaskState{}}
	if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil {
		for _, task := range tg.Tasks {
			u.TaskStates[task.Name] = &structs.TaskState{State: structs.TaskStateRunning, StartedAt: startedAt}
		}
	}
	return u
}

// finishedUpdate is a client's report that an alloc's tasks ended.
func finishedUpdate(a *structs.Allocation, now time.Time) *structs.Allocation {
	u := &structs.Allocation{ID: a.ID, NodeID: a.NodeID, ClientStatus: structs.AllocClientStatusComplete,
		TaskStates: map[string]*structs.TaskState{}}
	for name, ts := range a.TaskStates {
		c := ts.Copy()
		c.State, c.FinishedAt = structs.TaskStateDead, now
		u.TaskStates[name] = c
	}
	return u
}

// updateAllocs sends client updates through Node.UpdateAlloc.
func updateAllocs(t *testing.T, s *Server, updates ...*structs.Allocation) {
	t.Helper()
	var reply structs.GenericResponse
	must.NoError(t, s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: updates}, &reply))
}

// fakeClients play every node's client: allocs the servers want running
// are reported running (tasks started an hour ago, so healthy at once),
// allocs they stopped are reported complete, and, with finishBatch, batch
// allocs complete once running.
type fakeClients struct {
	t           *testing.T
	s           *Server
	finishBatch bool

	mu      sync.Mutex
	updates int
	errs    []error
}

// startFakeClients runs the clients until the test ends.
func startFakeClients(t *testing.T, s *Server, finishBatch bool) *fakeClients {
	c := &fakeClients{t: t, s: s, finishBatch: finishBatch}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, err := range c.errs {
			t.Errorf("client update: %v", err)
		}
	})
	return c
}

func (c *fakeClients) run(ctx context.Context) {
	for ctx.Err() == nil {
		ws := memdb.NewWatchSet()
		store := c.s.State()
		ws.Add(store.AbandonCh())
		allocs, err := store.Allocs(ws, structs.AllNamespaces)
		if err != nil {
			c.fail(err)
			return
		}
		now := time.Now()
		var updates []*structs.Allocation
		for _, a := range allocs {
			if u := c.next(a, now); u != nil {
				updates = append(updates, u)
			}
		}
		if len(updates) > 0 {
			var reply structs.GenericResponse
			err := c.s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: updates}, &reply)
			if err != nil && ctx.Err() == nil {
				c.fail(err)
				return
			}
			c.mu.Lock()
			c.updates += len(updates)
			c.mu.Unlock()
			continue
		}
		_ = ws.WatchCtx(ctx)
	}
}

// next is what the client of a's node reports about a now, nil for
// nothing new.
func (c *fakeClients) next(a *structs.Allocation, now time.Time) *structs.Allocation {
	if a.ClientTerminalStatus() {
		return nil
	}
	switch {
	case a.ServerTerminalStatus():
		return finishedUpdate(a, now)
	case a.ClientStatus == structs.AllocClientStatusPending:
		return runningUpdate(a, now.Add(-time.Hour))
	case c.finishBatch && a.Job != nil && a.Job.Type == structs.JobTypeBatch:
		return finishedUpdate(a, now)
	}
	return nil
}

func (c *fakeClients) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, err)
}
