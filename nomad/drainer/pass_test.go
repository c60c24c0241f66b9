package drainer

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/leadertest"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// world is the starting point of the pass tests: four nodes (n1 and n2
// get drained, n3 and n4 stay), and on them
//
//	svcA  service, count 4, migrate.max_parallel 1: a0,a1 on n1, a2 on n2, a3 on n3
//	svcB  service, count 3, migrate.max_parallel 2: b0,b1,b2 on n1
//	bat   batch, count 1: c0 on n1
//	sys   system: s1 on n1, s2 on n2
//
// Every alloc has been running (and healthy) for an hour.
type world struct {
	c                  *leadertest.Cluster
	n1, n2, n3, n4     *structs.Node
	svcA, svcB, bat, s *structs.Job
	a, b               []*structs.Allocation
	c0                 *structs.Allocation
	s1, s2             *structs.Allocation
}

func nodeID(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

func newWorld(t *testing.T) *world {
	w := &world{c: leadertest.New(t)}
	var nodes []*structs.Node
	for i := 1; i <= 4; i++ {
		n := mock.Node()
		n.ID, n.Name = nodeID(i), fmt.Sprintf("n%d", i)
		nodes = append(nodes, n)
	}
	w.n1, w.n2, w.n3, w.n4 = nodes[0], nodes[1], nodes[2], nodes[3]
	w.c.AddNodes(nodes...)

	w.svcA = mock.Job(mock.JobID("svc-a"), mock.Count(4))
	w.svcA.TaskGroups[0].Migrate.MaxParallel = 1
	w.svcB = mock.Job(mock.JobID("svc-b"), mock.Count(3))
	w.svcB.TaskGroups[0].Migrate.MaxParallel = 2
	w.bat = mock.BatchJob(mock.JobID("bat"), mock.Count(1))
	w.s = mock.SystemJob(mock.JobID("sys"))
	for _, j := range []*structs.Job{w.svcA, w.svcB, w.bat, w.s} {
		w.c.Write(func(tx *state.Txn) error { return tx.UpsertJob(j) })
	}
	w.svcA, w.svcB = w.c.Job("default", "svc-a"), w.c.Job("default", "svc-b")
	w.bat, w.s = w.c.Job("default", "bat"), w.c.Job("default", "sys")

	place := func(j *structs.Job, idx int, n *structs.Node) *structs.Allocation {
		return w.runningAlloc(j, idx, n, w.c.Now().Add(-time.Hour))
	}
	w.a = []*structs.Allocation{place(w.svcA, 0, w.n1), place(w.svcA, 1, w.n1), place(w.svcA, 2, w.n2), place(w.svcA, 3, w.n3)}
	w.b = []*structs.Allocation{place(w.svcB, 0, w.n1), place(w.svcB, 1, w.n1), place(w.svcB, 2, w.n1)}
	w.c0 = place(w.bat, 0, w.n1)
	w.s1, w.s2 = place(w.s, 0, w.n1), place(w.s, 0, w.n2)
	return w
}

// runningAlloc writes an alloc of j's first group running on n since since.
func (w *world) runningAlloc(j *structs.Job, idx int, n *structs.Node, since time.Time) *structs.Allocation {
	a := mock.Alloc(mock.ForJob(j, idx), mock.OnNode(n), mock.ClientStatus(structs.AllocClientStatusRunning))
	a.CreateTime = since.UnixNano()
	a.TaskStates = map[string]*structs.TaskState{}
	for _, t := range j.TaskGroups[0].Tasks {
		a.TaskStates[t.Name] = &structs.TaskState{State: structs.TaskStateRunning, StartedAt: since}
	}
	w.c.Write(func(tx *state.Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) })
	return a
}

// update rewrites allocs after change edits copies of them.
func (w *world) update(change func(a *structs.Allocation), allocs ...*structs.Allocation) {
	var server, client []*structs.Allocation
	for _, a := range allocs {
		stored, _ := w.c.Store.AllocByID(nil, a.ID)
		cp := stored.Copy()
		change(cp)
		server = append(server, cp)
		client = append(client, cp.Copy())
	}
	w.c.Write(func(tx *state.Txn) error {
		if err := tx.UpsertAllocs(server); err != nil {
			return err
		}
		// UpsertAllocs keeps client fields: write them as the client.
		return tx.UpdateAllocsFromClient(client)
	})
}

// evals writes a completed eval of each job, created now.
func (w *world) evals(jobs ...*structs.Job) {
	var evals []*structs.Evaluation
	for _, j := range jobs {
		evals = append(evals, &structs.Evaluation{
			ID: structs.GenerateUUID(), Namespace: j.Namespace, JobID: j.ID, Type: j.Type, Priority: j.Priority,
			TriggeredBy: structs.EvalTriggerNodeDrain, Status: structs.EvalStatusComplete,
			CreateTime: w.c.Now().UnixNano(), ModifyTime: w.c.Now().UnixNano(),
		})
	}
	w.c.Write(func(tx *state.Txn) error { return tx.UpsertEvals(evals) })
}

func migrating(a *structs.Allocation) {
	yes := true
	a.DesiredTransition.Migrate = &yes
}

func stoppedByServer(a *structs.Allocation) {
	migrating(a)
	a.DesiredStatus = structs.AllocDesiredStatusStop
}

func complete(a *structs.Allocation) {
	stoppedByServer(a)
	a.ClientStatus = structs.AllocClientStatusComplete
}

func (w *world) plan(t *testing.T) *passPlan {
	t.Helper()
	p, err := planPass(&w.c.Store.Snapshot().StateStore, nil, w.c.Now())
	must.NoError(t, err)
	return p
}

func ids(allocs []*structs.Allocation) []string {
	out := make([]string, 0, len(allocs))
	for _, a := range allocs {
		out = append(out, a.ID)
	}
	slices.Sort(out)
	return out
}

func TestPlanPass(t *testing.T) {
	hour := time.Hour
	cases := []struct {
		name string
		// setup drains and edits the world; want* name what the pass
		// decides, from the world's allocs.
		setup        func(w *world)
		wantMarks    func(w *world) []*structs.Allocation
		wantComplete func(w *world) []string
		wantWake     func(w *world) time.Time
		wantReeval   []string
	}{
		{
			// svcA: 4 healthy of count 4, in flight 0, budget 1-0 = 1:
			// the first waiting alloc in node order (a0 on n1).
			// svcB: 3 healthy of 3, budget 2-0 = 2: b0 and b1.
			// The batch alloc waits for the deadline, sys waits for the rest.
			name:      "max_parallel per group across nodes",
			setup:     func(w *world) { w.c.Drain(w.n1.ID, hour, false); w.c.Drain(w.n2.ID, hour, false) },
			wantMarks: func(w *world) []*structs.Allocation { return []*structs.Allocation{w.a[0], w.b[0], w.b[1]} },
			wantWake:  func(w *world) time.Time { return w.c.Now().Add(hour) },
		},
		{
			// a0 marked, not stopped yet: healthy 3 of 4, in flight 1,
			// budget 1-1 = 0. b0,b1 marked: healthy 1 of 3, in flight 2,
			// budget 2-2 = 0.
			name: "marked allocs count as in flight",
			setup: func(w *world) {
				w.c.Drain(w.n1.ID, hour, false)
				w.c.Drain(w.n2.ID, hour, false)
				w.update(migrating, w.a[0], w.b[0], w.b[1])
				w.evals(w.svcA, w.svcB) // came with the marks
			},
			wantMarks: func(w *world) []*structs.Allocation { return nil },
			wantWake:  func(w *world) time.Time { return w.c.Now().Add(hour) },
		},
		{
			// a0 and b0 were marked before the drain (an earlier drain,
			// since canceled): no eval saw them while n1 drains, so each
			// job gets one, and no new mark is due.
			name: "marks older than the drain get an eval",
			setup: func(w *world) {
				w.update(migrating, w.a[0], w.b[0], w.b[1])
				w.evals(w.svcA, w.svcB)
				w.c.Clock.Advance(time.Minute)
				w.c.Drain(w.n1.ID, hour, false)
			},
			wantMarks:  func(w *world) []*structs.Allocation { return nil },
			wantWake:   func(w *world) time.Time { return w.c.Now().Add(hour) },
			wantReeval: []string{"svc-a", "svc-b"},
		},
		{
			// a0 stopped and replaced by r0 on n4, still pending: healthy
			// 3 (a1, a2, a3), budget 0. The pass looks again at the deadline.
			name: "replacement not healthy yet",
			setup: func(w *world) {
				w.c.Drain(w.n1.ID, hour, false)
				w.update(stoppedByServer, w.a[0])
				r := mock.Alloc(mock.ForJob(w.svcA, 0), mock.OnNode(w.n4))
				r.PreviousAllocation = w.a[0].ID
				w.c.Write(func(tx *state.Txn) error { return tx.UpsertAllocs([]*structs.Allocation{r}) })
			},
			wantMarks: func(w *world) []*structs.Allocation { return []*structs.Allocation{w.b[0], w.b[1]} },
			wantWake:  func(w *world) time.Time { return w.c.Now().Add(hour) },
		},
		{
			// r0 running for 4s of the 10s min healthy time: budget 0,
			// and the pass wakes when r0 may turn healthy (now+6s).
			name: "replacement running, not yet for min_healthy_time",
			setup: func(w *world) {
				w.c.Drain(w.n1.ID, hour, false)
				w.update(complete, w.a[0])
				w.runningAlloc(w.svcA, 0, w.n4, w.c.Now().Add(-4*time.Second))
			},
			wantMarks: func(w *world) []*structs.Allocation { return []*structs.Allocation{w.b[0], w.b[1]} },
			wantWake:  func(w *world) time.Time { return w.c.Now().Add(6 * time.Second) },
		},
		{
			// r0 healthy: healthy 4 (a1, a2, a3, r0), budget 1: a1 goes.
			name: "replacement healthy frees the budget",
			setup: func(w *world) {
				w.c.Drain(w.n1.ID, hour, false)
				w.update(complete, w.a[0])
				w.runningAlloc(w.svcA, 0, w.n4, w.c.Now().Add(-time.Minute))
			},
			wantMarks: func(w *world) []*structs.Allocation { return []*structs.Allocation{w.a[1], w.b[0], w.b[1]} },
			wantWake:  func(w *world) time.Time { return w.c.Now().Add(hour) },
		},
		{
			// A client-reported verdict wins over the task states.
			name: "reported unhealthy replacement does not count",
			setup: func(w *world) {
				w.c.Drain(w.n1.ID, hour, false)
				w.update(complete, w.a[0])
				r := w.runningAlloc(w.svcA, 0, w.n4, w.c.Now().Add(-time.Minute))
				no := false
				w.update(func(a *structs.Allocation) {
					a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &no}
				}, r)
			},
			wantMarks: func(w *world) []*structs.Allocation { return []*structs.Allocation{w.b[0], w.b[1]} },
			wantWake:  func(w *world) time.Time { return w.c.Now().Add(hour) },
		},
		{
			name: "deadline passed: everything left goes at once",
			setup: func(w *world) {
				w.c.Drain(w.n1.ID, hour, false)
				w.update(migrating, w.a[0])
				w.c.Clock.Advance(hour)
			},
			wantMarks: func(w *world) []*structs.Allocation {
				return []*structs.Allocation{w.a[1], w.b[0], w.b[1], w.b[2], w.c0, w.s1}
			},
		},
		{
			// A strategy written without ForceDeadline counts from its start.
			name: "deadline from StartedAt when ForceDeadline is unset",
			setup: func(w *world) {
				w.c.Drain(w.n2.ID, hour, false)
				n := w.c.Node(w.n2.ID).Copy()
				n.DrainStrategy.ForceDeadline = time.Time{}
				w.c.Write(func(tx *state.Txn) error {
					return tx.UpdateNodeDrain(n.ID, n.DrainStrategy, false, w.c.Now().Unix(), nil, nil)
				})
			},
			wantMarks: func(w *world) []*structs.Allocation { return []*structs.Allocation{w.a[2]} },
			wantWake:  func(w *world) time.Time { return w.c.Now().Add(hour) },
		},
		{
			name:  "forced drain: everything at once, system too",
			setup: func(w *world) { w.c.Drain(w.n2.ID, -time.Second, false) },
			wantMarks: func(w *world) []*structs.Allocation {
				return []*structs.Allocation{w.a[2], w.s2}
			},
		},
		{
			name:  "forced drain ignoring system jobs",
			setup: func(w *world) { w.c.Drain(w.n2.ID, -time.Second, true) },
			wantMarks: func(w *world) []*structs.Allocation {
				return []*structs.Allocation{w.a[2]}
			},
		},
		{
			// Only the system alloc still runs on n2: its turn.
			name: "system allocs go once the rest has stopped",
			setup: func(w *world) {
				w.c.Drain(w.n2.ID, 0, false)
				w.update(complete, w.a[2])
			},
			wantMarks: func(w *world) []*structs.Allocation { return []*structs.Allocation{w.s2} },
		},
		{
			// a2 told to stop but still running: s2 waits.
			name: "system allocs wait for allocs still stopping",
			setup: func(w *world) {
				w.c.Drain(w.n2.ID, 0, false)
				w.update(stoppedByServer, w.a[2])
			},
			wantMarks: func(w *world) []*structs.Allocation { return nil },
		},
		{
			name: "ignored system allocs do not hold the drain",
			setup: func(w *world) {
				w.c.Drain(w.n2.ID, 0, true)
				w.update(complete, w.a[2])
			},
			wantComplete: func(w *world) []string { return []string{w.n2.ID} },
		},
		{
			name: "drain complete once every alloc stopped",
			setup: func(w *world) {
				w.c.Drain(w.n2.ID, 0, false)
				w.update(complete, w.a[2], w.s2)
			},
			wantComplete: func(w *world) []string { return []string{w.n2.ID} },
		},
		{
			name: "an empty node completes at once",
			setup: func(w *world) {
				w.c.Drain(w.n4.ID, 0, false)
			},
			wantComplete: func(w *world) []string { return []string{w.n4.ID} },
		},
		{
			// Stopped allocs on a down node will never hear from their
			// client; the live one waits for the scheduler to mark it lost.
			name: "down node: server-stopped allocs count as gone",
			setup: func(w *world) {
				w.c.Drain(w.n2.ID, 0, true)
				w.update(stoppedByServer, w.a[2])
				w.c.Write(func(tx *state.Txn) error {
					return tx.UpdateNodeStatus(w.n2.ID, structs.NodeStatusDown, w.c.Now().Unix(), nil)
				})
			},
			wantComplete: func(w *world) []string { return []string{w.n2.ID} },
		},
		{
			// svcB is stopped: the scheduler stops its allocs anyway, so
			// all three are marked without a budget.
			name: "allocs of a stopped job are marked without a budget",
			setup: func(w *world) {
				w.c.Drain(w.n1.ID, 0, false)
				w.c.Stop("default", "svc-b")
			},
			wantMarks: func(w *world) []*structs.Allocation { return []*structs.Allocation{w.a[0], w.b[0], w.b[1], w.b[2]} },
		},
		{
			// max_parallel 0 holds every migration until the deadline.
			name: "max_parallel 0 waits for the deadline",
			setup: func(w *world) {
				j := w.svcB.Copy()
				j.TaskGroups[0].Migrate.MaxParallel = 0
				w.c.Write(func(tx *state.Txn) error { return tx.UpsertJob(j) })
				w.c.Drain(w.n1.ID, hour, false)
			},
			wantMarks: func(w *world) []*structs.Allocation { return []*structs.Allocation{w.a[0]} },
			wantWake:  func(w *world) time.Time { return w.c.Now().Add(hour) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.setup(w)
			p := w.plan(t)
			var wantMarks []*structs.Allocation
			if tc.wantMarks != nil {
				wantMarks = tc.wantMarks(w)
			}
			must.Eq(t, ids(wantMarks), ids(p.marks))
			var wantComplete []string
			if tc.wantComplete != nil {
				wantComplete = tc.wantComplete(w)
			}
			must.Eq(t, wantComplete, p.complete)
			var wantWake time.Time
			if tc.wantWake != nil {
				wantWake = tc.wantWake(w)
			}
			must.True(t, p.wakeAt.Equal(wantWake), must.Sprintf("wake at %v, want %v", p.wakeAt, wantWake))
			var reeval []string
			for _, k := range p.reevaluate {
				reeval = append(reeval, k.ID)
				must.Eq(t, k.ID, p.jobs[k].ID)
			}
			must.Eq(t, tc.wantReeval, reeval)
			for _, a := range p.marks {
				job := p.jobs[a.NamespacedJobID()]
				must.NotNil(t, job)
				must.Eq(t, a.JobID, job.ID)
			}
		})
	}
}
