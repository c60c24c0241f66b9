// Package leadertest is a deterministic stand-in for a cluster, for
// testing the leader's duties (drainer, deployment watcher, periodic
// dispatcher) end to end without Raft, network or sleeps: a real state
// store, a fake clock, the real schedulers run on demand over the pending
// evaluations, and simulated clients that start and stop allocations when
// told to.
//
// It is imported by tests only.
package leadertest

import (
	"cmp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/planjudge"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// Start is the fake clock's reading when a Cluster is created.
var Start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// Cluster is a state store, a fake clock and the means to move the
// cluster forward step by step. Its methods fail the test on error and
// may be called while leader components write to the same store.
type Cluster struct {
	t     testing.TB
	Store *state.StateStore
	Clock *clock.Fake

	mu sync.Mutex // serialises the cluster's own writes
}

// New returns an empty cluster at Start.
func New(t testing.TB) *Cluster {
	s, err := state.NewStateStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Cluster{t: t, Store: s, Clock: clock.NewFake(Start)}
}

// State returns the store; it is the State function leader components
// are configured with.
func (c *Cluster) State() *state.StateStore { return c.Store }

// Now is the fake clock's time.
func (c *Cluster) Now() time.Time { return c.Clock.Now() }

// Write applies fn in one transaction at the index after the latest and
// returns that index.
func (c *Cluster) Write(fn func(tx *state.Txn) error) uint64 {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	latest, err := c.Store.LatestIndex()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.Store.WithWriteTxn(latest+1, fn); err != nil {
		c.t.Fatalf("state write at index %d: %v", latest+1, err)
	}
	return latest + 1
}

// AddNodes registers ready nodes.
func (c *Cluster) AddNodes(nodes ...*structs.Node) {
	c.t.Helper()
	c.Write(func(tx *state.Txn) error {
		for _, n := range nodes {
			if err := tx.UpsertNode(n); err != nil {
				return err
			}
		}
		return nil
	})
}

// Register writes a job and, unless it is a template, its job-register
// eval, as the Job.Register endpoint does. It returns the stored job.
func (c *Cluster) Register(job *structs.Job) *structs.Job {
	c.t.Helper()
	if job.SubmitTime == 0 {
		job.SubmitTime = c.Now().UnixNano()
	}
	c.Write(func(tx *state.Txn) error {
		if err := tx.UpsertJob(job); err != nil {
			return err
		}
		if !job.RequiresEval() {
			return nil
		}
		stored, err := tx.JobByID(job.Namespace, job.ID)
		if err != nil {
			return err
		}
		return tx.UpsertEvals([]*structs.Evaluation{c.eval(stored, structs.EvalTriggerJobRegister)})
	})
	return c.Job(job.Namespace, job.ID)
}

// Stop stops a job (a new, stopped version) with a job-deregister eval.
func (c *Cluster) Stop(namespace, id string) {
	c.t.Helper()
	job := c.Job(namespace, id).Copy()
	job.Stop = true
	c.Write(func(tx *state.Txn) error {
		if err := tx.UpsertJob(job); err != nil {
			return err
		}
		return tx.UpsertEvals([]*structs.Evaluation{c.eval(job, structs.EvalTriggerJobDeregister)})
	})
}

func (c *Cluster) eval(job *structs.Job, trigger string) *structs.Evaluation {
	now := c.Now().UnixNano()
	return &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
		TriggeredBy: trigger, JobID: job.ID, JobModifyIndex: job.JobModifyIndex,
		Status: structs.EvalStatusPending, CreateTime: now, ModifyTime: now,
	}
}

// Drain sets a drain on a node, as Node.UpdateDrain does: deadline < 0
// forces, 0 waits forever, > 0 bounds the drain.
func (c *Cluster) Drain(nodeID string, deadline time.Duration, ignoreSystem bool) {
	c.t.Helper()
	now := c.Now()
	d := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: deadline, IgnoreSystemJobs: ignoreSystem}, StartedAt: now}
	if deadline > 0 {
		d.ForceDeadline = now.Add(deadline)
	}
	c.Write(func(tx *state.Txn) error {
		return tx.UpdateNodeDrain(nodeID, d, false, now.Unix(),
			structs.NewNodeEvent(structs.NodeEventSubsystemDrain, structs.NodeEventMsgDrainStarted, now), nil)
	})
}

// CancelDrain removes a node's drain, as Node.UpdateDrain with no strategy.
func (c *Cluster) CancelDrain(nodeID string, markEligible bool) {
	c.t.Helper()
	now := c.Now()
	c.Write(func(tx *state.Txn) error {
		return tx.UpdateNodeDrain(nodeID, nil, markEligible, now.Unix(),
			structs.NewNodeEvent(structs.NodeEventSubsystemDrain, structs.NodeEventMsgDrainCanceled, now), nil)
	})
}

// MarkMigrate marks allocs to migrate and writes one eval per job with
// the trigger, in one write: what the drainer does (node-drain) and what
// the Alloc.Stop endpoint does for one alloc (alloc-stop).
func (c *Cluster) MarkMigrate(trigger string, allocIDs ...string) {
	c.t.Helper()
	yes := true
	transitions := map[string]*structs.DesiredTransition{}
	evals := map[structs.NamespacedID]*structs.Evaluation{}
	for _, id := range allocIDs {
		a, err := c.Store.AllocByID(nil, id)
		if err != nil || a == nil {
			c.t.Fatalf("alloc %s: %v (found: %v)", id, err, a != nil)
		}
		transitions[id] = &structs.DesiredTransition{Migrate: &yes}
		key := structs.NamespacedID{Namespace: a.Namespace, ID: a.JobID}
		if evals[key] == nil {
			evals[key] = c.eval(c.Job(a.Namespace, a.JobID), trigger)
		}
	}
	var list []*structs.Evaluation
	for _, e := range evals {
		list = append(list, e)
	}
	c.Write(func(tx *state.Txn) error { return tx.UpdateAllocsDesiredTransitions(transitions, list) })
}

// SetAllocHealth writes health verdicts on allocs of a deployment, timed
// now, with a deployment-watcher eval of its job in the same write: what
// the deployment watcher does with the verdicts it reaches.
func (c *Cluster) SetAllocHealth(deploymentID string, healthy, unhealthy []string) {
	c.t.Helper()
	d, err := c.Store.DeploymentByID(nil, deploymentID)
	if err != nil || d == nil {
		c.t.Fatalf("deployment %s: %v (found: %v)", deploymentID, err, d != nil)
	}
	eval := c.eval(c.Job(d.Namespace, d.JobID), structs.EvalTriggerDeploymentWatcher)
	eval.DeploymentID = d.ID
	req := &structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{
			DeploymentID: d.ID, HealthyAllocationIDs: healthy, UnhealthyAllocationIDs: unhealthy,
		},
		Timestamp: c.Now(),
		Eval:      eval,
	}
	c.Write(func(tx *state.Txn) error { return tx.UpdateDeploymentAllocHealth(req) })
}

// Schedule runs the real scheduler over every pending eval that is due,
// oldest first, until none is left, and returns how many it processed.
// Plans are committed whole: the scheduler already fitted them against
// the state it read, and nothing else places allocs meanwhile.
func (c *Cluster) Schedule() int {
	c.t.Helper()
	processed := 0
	for {
		evals, err := c.Store.EvalsByStatus(nil, structs.EvalStatusPending)
		if err != nil {
			c.t.Fatal(err)
		}
		now := c.Now()
		evals = slices.DeleteFunc(evals, func(e *structs.Evaluation) bool { return e.WaitUntil.After(now) })
		if len(evals) == 0 {
			return processed
		}
		slices.SortFunc(evals, func(a, b *structs.Evaluation) int { return cmp.Compare(a.CreateIndex, b.CreateIndex) })
		ev := evals[0].Copy()
		p := &planner{c: c}
		s, err := scheduler.NewScheduler(ev.Type, &scheduler.Config{Now: c.Now}, c.Store.Snapshot().SchedulerView(), p)
		if err != nil {
			c.t.Fatalf("eval %s: %v", ev.ID, err)
		}
		if err := s.Process(ev); err != nil {
			c.t.Fatalf("eval %s (%s, job %s): %v", ev.ID, ev.TriggeredBy, ev.JobID, err)
		}
		processed++
		if processed > 1000 {
			c.t.Fatal("scheduling does not converge")
		}
	}
}

// RunClients plays every client: StartAllocs, then FinishStopped. It
// returns how many allocs changed.
func (c *Cluster) RunClients() int {
	c.t.Helper()
	return c.StartAllocs() + c.FinishStopped()
}

// StartAllocs starts the allocs the servers want running that have not
// started: client status running, every task running since now. Allocs
// on down nodes are left alone. It returns how many started.
func (c *Cluster) StartAllocs() int {
	c.t.Helper()
	return c.updateAllocs(func(a *structs.Allocation) *structs.Allocation {
		if a.ServerTerminalStatus() || a.ClientStatus != structs.AllocClientStatusPending {
			return nil
		}
		return clientUpdate(a, structs.AllocClientStatusRunning, structs.TaskStateRunning, c.Now())
	})
}

// FinishStopped finishes the allocs the servers stopped that still run on
// their client: client status complete, tasks dead. Allocs on down nodes
// are left alone. It returns how many finished.
func (c *Cluster) FinishStopped() int {
	c.t.Helper()
	return c.updateAllocs(func(a *structs.Allocation) *structs.Allocation {
		if !a.ServerTerminalStatus() || a.ClientTerminalStatus() {
			return nil
		}
		return clientUpdate(a, structs.AllocClientStatusComplete, structs.TaskStateDead, c.Now())
	})
}

// CompleteAllocs makes the running allocs that keep reports finish
// successfully on their client (batch work done).
func (c *Cluster) CompleteAllocs(keep func(*structs.Allocation) bool) int {
	c.t.Helper()
	return c.updateAllocs(func(a *structs.Allocation) *structs.Allocation {
		if a.ClientStatus != structs.AllocClientStatusRunning || !keep(a) {
			return nil
		}
		return clientUpdate(a, structs.AllocClientStatusComplete, structs.TaskStateDead, c.Now())
	})
}

// FailAllocs makes the running allocs that keep reports fail on their client.
func (c *Cluster) FailAllocs(keep func(*structs.Allocation) bool) int {
	c.t.Helper()
	return c.updateAllocs(func(a *structs.Allocation) *structs.Allocation {
		if a.ClientStatus != structs.AllocClientStatusRunning || !keep(a) {
			return nil
		}
		u := clientUpdate(a, structs.AllocClientStatusFailed, structs.TaskStateDead, c.Now())
		for _, ts := range u.TaskStates {
			ts.Failed = true
		}
		return u
	})
}

// updateAllocs writes, as client updates, what change returns for each
// alloc on a node that is not down (nil: no update).
func (c *Cluster) updateAllocs(change func(*structs.Allocation) *structs.Allocation) int {
	c.t.Helper()
	allocs, err := c.Store.Allocs(nil, structs.AllNamespaces)
	if err != nil {
		c.t.Fatal(err)
	}
	var updates []*structs.Allocation
	for _, a := range allocs {
		if n, _ := c.Store.NodeByID(nil, a.NodeID); n == nil || n.Status == structs.NodeStatusDown {
			continue
		}
		if u := change(a); u != nil {
			updates = append(updates, u)
		}
	}
	if len(updates) > 0 {
		c.Write(func(tx *state.Txn) error { return tx.UpdateAllocsFromClient(updates) })
	}
	return len(updates)
}

func clientUpdate(a *structs.Allocation, status, taskState string, now time.Time) *structs.Allocation {
	u := &structs.Allocation{ID: a.ID, ClientStatus: status, ModifyTime: now.UnixNano(), TaskStates: map[string]*structs.TaskState{}}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return u
	}
	for _, t := range tg.Tasks {
		ts := &structs.TaskState{State: taskState, StartedAt: now}
		if prev := a.TaskStates[t.Name]; prev != nil && !prev.StartedAt.IsZero() {
			ts.StartedAt = prev.StartedAt
		}
		if taskState == structs.TaskStateDead {
			ts.FinishedAt = now
		}
		u.TaskStates[t.Name] = ts
	}
	return u
}

// Job returns the stored job or fails.
func (c *Cluster) Job(namespace, id string) *structs.Job {
	c.t.Helper()
	j, err := c.Store.JobByID(nil, namespace, id)
	if err != nil || j == nil {
		c.t.Fatalf("job %s/%s: %v (found: %v)", namespace, id, err, j != nil)
	}
	return j
}

// Node returns the stored node or fails.
func (c *Cluster) Node(id string) *structs.Node {
	c.t.Helper()
	n, err := c.Store.NodeByID(nil, id)
	if err != nil || n == nil {
		c.t.Fatalf("node %s: %v (found: %v)", id, err, n != nil)
	}
	return n
}

// LiveAllocs returns the job's allocs the servers want running.
func (c *Cluster) LiveAllocs(job *structs.Job) []*structs.Allocation {
	c.t.Helper()
	allocs, err := c.Store.AllocsByJob(nil, job.Namespace, job.ID, false)
	if err != nil {
		c.t.Fatal(err)
	}
	return slices.DeleteFunc(allocs, func(a *structs.Allocation) bool { return a.ServerTerminalStatus() })
}

// AllocsOn returns the allocs on a node that have not stopped on their
// client.
func (c *Cluster) AllocsOn(nodeID string) []*structs.Allocation {
	c.t.Helper()
	allocs, err := c.Store.AllocsByNode(nil, nodeID)
	if err != nil {
		c.t.Fatal(err)
	}
	return slices.DeleteFunc(allocs, func(a *structs.Allocation) bool { return a.ClientTerminalStatus() })
}

// planner commits a scheduler's plans and evals to the cluster's store.
type planner struct{ c *Cluster }

var _ scheduler.Planner = (*planner)(nil)

func (p *planner) SubmitPlan(plan *structs.Plan) (*structs.PlanResult, scheduler.State, error) {
	result := &structs.PlanResult{
		NodeUpdate: plan.NodeUpdate, NodeAllocation: plan.NodeAllocation, NodePreemptions: plan.NodePreemptions,
		Deployment: plan.Deployment, DeploymentUpdates: plan.DeploymentUpdates,
	}
	// Everything fits: the cluster's tests are about what the leader's
	// duties do with committed allocs, not about racing schedulers.
	req := planjudge.BuildRequest(p.c.Store.Snapshot().SchedulerView(), plan, result, p.c.Now())
	result.AllocIndex = p.c.Write(func(tx *state.Txn) error { return tx.UpsertPlanResults(req) })
	return result, nil, nil
}

func (p *planner) UpdateEval(e *structs.Evaluation) error  { return p.upsert(e) }
func (p *planner) CreateEval(e *structs.Evaluation) error  { return p.upsert(e) }
func (p *planner) ReblockEval(e *structs.Evaluation) error { return p.upsert(e) }

func (p *planner) upsert(e *structs.Evaluation) error {
	p.c.Write(func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) })
	return nil
}
