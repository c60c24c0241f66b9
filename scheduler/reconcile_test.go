package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// versioned returns a job at a version and modify index, as the state
// store would have stamped it.
func versioned(j *structs.Job, version, index uint64) *structs.Job {
	j.Version, j.JobModifyIndex, j.ModifyIndex, j.CreateIndex = version, index, index, 1
	return j
}

// testUpdateFn is the decision the scheduler makes, minus the node check.
func testUpdateFn(existing *structs.Allocation, job *structs.Job, tg *structs.TaskGroup) (bool, bool, *structs.Allocation) {
	if existing.Job.JobModifyIndex == job.JobModifyIndex {
		return true, false, nil
	}
	if changed, _ := tasksUpdated(existing.Job, job, tg.Name); changed {
		return false, true, nil
	}
	u := existing.CopySkipJob()
	u.Job = job
	return false, false, u
}

// allocsOn builds n running allocs of the job's first group, indexes
// 0..n-1, on the node.
func allocsOn(job *structs.Job, node *structs.Node, n int) []*structs.Allocation {
	var out []*structs.Allocation
	for i := range n {
		out = append(out, mock.Alloc(mock.ForJob(job, i), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning)))
	}
	return out
}

func names(ps []placeRequest) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.name)
	}
	return out
}

func stopNames(ss []stopRequest) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.alloc.Name+":"+s.desc)
	}
	return out
}

// runReconcile reconciles and fails the test if the reconciler wrote
// into any of its inputs: they stand for objects read from state.
func runReconcile(t *testing.T, job *structs.Job, allocs []*structs.Allocation, tainted map[string]*structs.Node, d *structs.Deployment) *reconcileResult {
	t.Helper()
	inputs := newReadRecorder(nil)
	inputs.record(job)
	inputs.record(d)
	for _, a := range allocs {
		inputs.record(a)
	}
	for _, n := range tainted {
		inputs.record(n)
	}
	r := reconcile(reconcileInput{
		job: job, jobID: job.ID, namespace: job.Namespace, batch: job.Type == structs.JobTypeBatch,
		evalID: "eval-1", evalPriority: 50, now: testNow, allocs: allocs, tainted: tainted,
		deployment: d, update: testUpdateFn,
	})
	inputs.verify(t)
	return r
}

func TestReconcile(t *testing.T) {
	node := mock.Node(mock.Unreserved())
	down := mock.Node(mock.Unreserved(), mock.NodeStatus(structs.NodeStatusDown))
	draining := mock.Node(mock.Unreserved(), mock.Draining())
	disconnected := mock.Node(mock.Unreserved(), mock.NodeStatus(structs.NodeStatusDisconnected))
	yes := true

	type want struct {
		place       []string
		stop        []string
		destructive int
		inplace     int
		followups   int
		du          structs.DesiredUpdates
		deployment  bool
		// otherGroup: the stops are of another group, checked by inspect.
		otherGroup bool
	}
	cases := []struct {
		name    string
		setup   func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment)
		want    want
		inspect func(t *testing.T, r *reconcileResult)
	}{
		{
			name: "place a new job",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 3
				return job, nil, nil, nil
			},
			want: want{place: []string{"[0]", "[1]", "[2]"}, du: structs.DesiredUpdates{Place: 3}},
		},
		{
			name: "ignore allocs of the current version",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 3
				return job, allocsOn(job, node, 3), nil, nil
			},
			want: want{du: structs.DesiredUpdates{Ignore: 3}},
		},
		{
			name: "fill gaps in names",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 4
				as := allocsOn(job, node, 4)
				return job, []*structs.Allocation{as[0], as[2]}, nil, nil
			},
			want: want{place: []string{"[1]", "[3]"}, du: structs.DesiredUpdates{Place: 2, Ignore: 2}},
		},
		{
			name: "stop the highest names when the count shrinks",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 1
				return job, allocsOn(job, node, 3), nil, nil
			},
			want: want{stop: []string{"[2]:" + structs.AllocNotNeeded, "[1]:" + structs.AllocNotNeeded},
				du: structs.DesiredUpdates{Stop: 2, Ignore: 1}},
		},
		{
			name: "stop everything of a stopped job",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				as := allocsOn(job, node, 2)
				stopped := job.Copy()
				stopped.Stop = true
				return stopped, as, nil, nil
			},
			want: want{stop: []string{"[0]:" + structs.AllocNotNeeded, "[1]:" + structs.AllocNotNeeded},
				du: structs.DesiredUpdates{Stop: 2}},
		},
		{
			name: "stop a removed group",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				old := job.Copy()
				old.TaskGroups[0].Name = "gone"
				a := mock.Alloc(mock.ForGroup(old, "gone", 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))
				job.TaskGroups[0].Count = 0
				return job, []*structs.Allocation{a}, nil, nil
			},
			want: want{otherGroup: true},
			inspect: func(t *testing.T, r *reconcileResult) {
				if len(r.stop) != 1 || r.stop[0].alloc.TaskGroup != "gone" || r.desiredTGUpdates["gone"].Stop != 1 {
					t.Errorf("gone: %+v", r.desiredTGUpdates["gone"])
				}
			},
		},
		{
			name: "update in place when only the count changed",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				as := allocsOn(old, node, 2)
				job := versioned(old.Copy(), 1, 20)
				job.TaskGroups[0].Count = 2
				return job, as, nil, nil
			},
			want: want{inplace: 2, du: structs.DesiredUpdates{InPlaceUpdate: 2}},
		},
		{
			name: "replace everything at once without an update block",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				old.TaskGroups[0].Count = 3
				as := allocsOn(old, node, 3)
				job := versioned(old.Copy(), 1, 20)
				job.TaskGroups[0].Tasks[0].Config["command"] = "/bin/true"
				return job, as, nil, nil
			},
			want: want{destructive: 3, du: structs.DesiredUpdates{DestructiveUpdate: 3}},
		},
		{
			name: "max_parallel limits destructive updates and starts a deployment",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				old.TaskGroups[0].Count = 5
				old.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 2}
				as := allocsOn(old, node, 5)
				job := versioned(old.Copy(), 1, 20)
				job.TaskGroups[0].Tasks[0].Env["FOO"] = "baz"
				return job, as, nil, nil
			},
			want: want{destructive: 2, deployment: true, du: structs.DesiredUpdates{DestructiveUpdate: 2, Ignore: 3}},
			inspect: func(t *testing.T, r *reconcileResult) {
				if r.destructive[0].name != r.destructive[0].alloc.Name || r.destructive[0].alloc.Index() != 0 || r.destructive[1].alloc.Index() != 1 {
					t.Errorf("destructive updates must go in name order")
				}
				if ds := r.deployment.TaskGroups["web"]; ds.DesiredTotal != 5 {
					t.Errorf("DesiredTotal %d", ds.DesiredTotal)
				}
			},
		},
		{
			name: "no destructive updates while deployment allocs are unhealthy",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				old.TaskGroups[0].Count = 3
				old.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1}
				as := allocsOn(old, node, 3)
				job := versioned(old.Copy(), 1, 20)
				job.TaskGroups[0].Tasks[0].Env["FOO"] = "baz"
				d := structs.NewDeployment(job, 50, testNow)
				d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 3}
				// One alloc of the new version placed, not yet healthy.
				as[0] = mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))
				as[0].DeploymentID = d.ID
				return job, as, nil, d
			},
			want: want{du: structs.DesiredUpdates{Ignore: 3}},
		},
		{
			name: "replace allocs lost on a down node",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 2
				as := []*structs.Allocation{mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning)), mock.Alloc(mock.ForJob(job, 1), mock.OnNode(down), mock.ClientStatus(structs.AllocClientStatusRunning))}
				return job, as, map[string]*structs.Node{down.ID: down}, nil
			},
			want: want{place: []string{"[1]"}, stop: []string{"[1]:" + structs.AllocLost},
				du: structs.DesiredUpdates{Place: 1, Stop: 1, Ignore: 1}},
			inspect: func(t *testing.T, r *reconcileResult) {
				if r.stop[0].clientStatus != structs.AllocClientStatusLost || r.place[0].previous == nil {
					t.Errorf("lost alloc: %+v %+v", r.stop[0], r.place[0])
				}
			},
		},
		{
			name: "treat a missing node like a down one",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 1
				a := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(down), mock.ClientStatus(structs.AllocClientStatusRunning))
				return job, []*structs.Allocation{a}, map[string]*structs.Node{down.ID: nil}, nil
			},
			want: want{place: []string{"[0]"}, stop: []string{"[0]:" + structs.AllocLost}, du: structs.DesiredUpdates{Place: 1, Stop: 1}},
		},
		{
			name: "migrate allocs the drainer marked",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 2
				as := allocsOn(job, draining, 2)
				as[0].DesiredTransition.Migrate = &yes
				return job, as, map[string]*structs.Node{draining.ID: draining}, nil
			},
			want: want{place: []string{"[0]"}, stop: []string{"[0]:" + structs.AllocMigrating},
				du: structs.DesiredUpdates{Migrate: 1, Ignore: 1}},
			inspect: func(t *testing.T, r *reconcileResult) {
				if p := r.place[0]; !p.migrating || p.stopPrevious != "" || p.previous != r.stop[0].alloc {
					t.Errorf("a migration is a plain stop plus a replacement: %+v", p)
				}
			},
		},
		{
			name: "reschedule a failed alloc now",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 2
				job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Attempts: 3, Interval: time.Hour,
					Delay: 5 * time.Second, DelayFunction: structs.RescheduleDelayConstant}
				as := allocsOn(job, node, 2)
				mock.MarkFailed(as[1], testNow.Add(-10*time.Second))
				return job, as, nil, nil
			},
			want: want{place: []string{"[1]"}, du: structs.DesiredUpdates{Place: 1, RescheduleNow: 1, Ignore: 1}},
			inspect: func(t *testing.T, r *reconcileResult) {
				if !r.place[0].reschedule || r.place[0].stopPrevious != structs.AllocRescheduled {
					t.Errorf("reschedule: %+v", r.place[0])
				}
			},
		},
		{
			name: "reschedule a failed alloc later with a follow-up eval",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 3
				job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Attempts: 3, Interval: time.Hour,
					Delay: 30 * time.Second, DelayFunction: structs.RescheduleDelayConstant}
				as := allocsOn(job, node, 3)
				// Two failures 2s apart share one eval; the third is due
				// 20s later and gets its own.
				mock.MarkFailed(as[0], testNow.Add(-time.Second))
				mock.MarkFailed(as[1], testNow.Add(time.Second))
				mock.MarkFailed(as[2], testNow.Add(20*time.Second))
				return job, as, nil, nil
			},
			want: want{followups: 2, du: structs.DesiredUpdates{RescheduleLater: 3, Ignore: 3}},
			inspect: func(t *testing.T, r *reconcileResult) {
				ev := r.followupEvals[0]
				if ev.TriggeredBy != structs.EvalTriggerAllocReschedule || !ev.WaitUntil.Equal(testNow.Add(29*time.Second)) {
					t.Errorf("follow-up %s at %v", ev.TriggeredBy, ev.WaitUntil)
				}
				if len(r.attributeUpdates) != 3 || r.attributeUpdates[0].FollowupEvalID != ev.ID ||
					r.attributeUpdates[1].FollowupEvalID != ev.ID || r.attributeUpdates[2].FollowupEvalID == ev.ID {
					t.Errorf("follow-up ids not batched by window")
				}
			},
		},
		{
			name: "leave a failed alloc alone once its attempts are used up",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.BatchJob(mock.GroupName("web"), mock.Count(10)), 0, 10)
				job.TaskGroups[0].Count = 1
				as := allocsOn(job, node, 1)
				mock.MarkFailed(as[0], testNow.Add(-time.Minute))
				as[0].RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{
					{RescheduleTime: testNow.Add(-time.Hour).UnixNano(), Delay: 5 * time.Second}}}
				return job, as, nil, nil
			},
			want: want{du: structs.DesiredUpdates{Ignore: 1}},
		},
		{
			name: "never re-run batch allocs that completed",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.BatchJob(mock.GroupName("web"), mock.Count(10)), 0, 10)
				job.TaskGroups[0].Count = 2
				as := allocsOn(job, node, 2)
				mock.MarkComplete(as[0], testNow)
				mock.MarkComplete(as[1], testNow)
				return job, as, nil, nil
			},
			want: want{du: structs.DesiredUpdates{Ignore: 2}},
		},
		{
			name: "replace a completed service alloc",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 1
				as := allocsOn(job, node, 1)
				mock.MarkComplete(as[0], testNow)
				return job, as, nil, nil
			},
			want: want{place: []string{"[0]"}, du: structs.DesiredUpdates{Place: 1}},
		},
		{
			name: "mark allocs of a disconnected node unknown and replace them",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				grace := 10 * time.Minute
				job.TaskGroups[0].MaxClientDisconnect = &grace
				job.TaskGroups[0].Count = 1
				return job, allocsOn(job, disconnected, 1), map[string]*structs.Node{disconnected.ID: disconnected}, nil
			},
			want: want{place: []string{"[0]"}, followups: 1, du: structs.DesiredUpdates{Place: 1, Disconnect: 1}},
			inspect: func(t *testing.T, r *reconcileResult) {
				u := r.attributeUpdates[0]
				if u.ClientStatus != structs.AllocClientStatusUnknown || u.FollowupEvalID != r.followupEvals[0].ID {
					t.Errorf("disconnect update %+v", u)
				}
				if r.followupEvals[0].TriggeredBy != structs.EvalTriggerMaxDisconnectTimeout ||
					!r.followupEvals[0].WaitUntil.Equal(testNow.Add(10*time.Minute)) {
					t.Errorf("follow-up %+v", r.followupEvals[0])
				}
			},
		},
		{
			name: "without max_client_disconnect a disconnected node's allocs are lost",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 1
				return job, allocsOn(job, disconnected, 1), map[string]*structs.Node{disconnected.ID: disconnected}, nil
			},
			want: want{place: []string{"[0]"}, stop: []string{"[0]:" + structs.AllocLost}, du: structs.DesiredUpdates{Place: 1, Stop: 1}},
		},
		{
			name: "stop the replacement when the original reconnects",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				grace := 10 * time.Minute
				job.TaskGroups[0].MaxClientDisconnect = &grace
				job.TaskGroups[0].Count = 1
				orig := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))
				orig.ClientStatus = structs.AllocClientStatusUnknown
				repl := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(mock.Node(mock.Unreserved())), mock.ClientStatus(structs.AllocClientStatusRunning))
				return job, []*structs.Allocation{orig, repl}, nil, nil
			},
			want: want{stop: []string{"[0]:" + allocReconnected}, du: structs.DesiredUpdates{Stop: 1, Reconnect: 1, Ignore: 1}},
		},
		{
			name: "place canaries before replacing anything",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				old.TaskGroups[0].Count = 3
				old.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1}
				as := allocsOn(old, node, 3)
				job := versioned(old.Copy(), 1, 20)
				job.TaskGroups[0].Tasks[0].Env["FOO"] = "baz"
				return job, as, nil, nil
			},
			want: want{place: []string{"[0]"}, deployment: true, du: structs.DesiredUpdates{Canary: 1, Ignore: 3}},
			inspect: func(t *testing.T, r *reconcileResult) {
				if !r.place[0].canary || r.deployment.TaskGroups["web"].DesiredCanaries != 1 {
					t.Errorf("canary: %+v", r.place[0])
				}
			},
		},
		{
			name: "after promotion old allocs sharing a canary's name are stopped",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				old.TaskGroups[0].Count = 2
				old.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1}
				as := allocsOn(old, node, 2)
				job := versioned(old.Copy(), 1, 20)
				job.TaskGroups[0].Tasks[0].Env["FOO"] = "baz"
				d := structs.NewDeployment(job, 50, testNow)
				d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 2, DesiredCanaries: 1, Promoted: true}
				c := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))
				c.DeploymentID = d.ID
				healthy := true
				c.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true, Healthy: &healthy}
				return job, append(as, c), nil, d
			},
			want: want{stop: []string{"[0]:" + structs.AllocNotNeeded}, destructive: 1,
				du: structs.DesiredUpdates{Stop: 1, DestructiveUpdate: 1, Ignore: 1}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, allocs, tainted, d := tc.setup()
			r := runReconcile(t, job, allocs, tainted, d)
			if tc.inspect != nil {
				defer tc.inspect(t, r)
			}
			prefix := job.ID + ".web"
			var wantPlace, wantStop []string
			for _, p := range tc.want.place {
				wantPlace = append(wantPlace, prefix+p)
			}
			for _, s := range tc.want.stop {
				wantStop = append(wantStop, prefix+s)
			}
			if got := names(r.place); !slices.Equal(got, wantPlace) {
				t.Errorf("place %v want %v", got, wantPlace)
			}
			if got := stopNames(r.stop); !tc.want.otherGroup && !slices.Equal(got, wantStop) {
				t.Errorf("stop %v want %v", got, wantStop)
			}
			if len(r.destructive) != tc.want.destructive || len(r.inplace) != tc.want.inplace {
				t.Errorf("destructive %d inplace %d, want %d %d", len(r.destructive), len(r.inplace), tc.want.destructive, tc.want.inplace)
			}
			if len(r.followupEvals) != tc.want.followups {
				t.Errorf("followups %d want %d", len(r.followupEvals), tc.want.followups)
			}
			if (r.deployment != nil) != tc.want.deployment {
				t.Errorf("deployment created = %v", r.deployment != nil)
			}
			if du := r.desiredTGUpdates["web"]; du != nil && *du != tc.want.du {
				t.Errorf("desired updates\n got %+v\nwant %+v", *du, tc.want.du)
			}
		})
	}
}

func TestReconcileDeploymentLifecycle(t *testing.T) {
	node := mock.Node(mock.Unreserved())
	job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 1, 20)
	job.TaskGroups[0].Count = 2
	job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1}
	allocs := allocsOn(job, node, 2)

	t.Run("cancel the deployment of an older version", func(t *testing.T) {
		old := versioned(job.Copy(), 0, 10)
		d := structs.NewDeployment(old, 50, testNow)
		r := runReconcile(t, job, allocs, nil, d)
		if len(r.deploymentUpdates) != 1 || r.deploymentUpdates[0].Status != structs.DeploymentStatusCancelled ||
			r.deploymentUpdates[0].StatusDescription != structs.DeploymentStatusDescriptionNewerJob {
			t.Fatalf("updates %+v", r.deploymentUpdates)
		}
	})
	t.Run("cancel when the job stops", func(t *testing.T) {
		d := structs.NewDeployment(job, 50, testNow)
		stopped := job.Copy()
		stopped.Stop = true
		r := runReconcile(t, stopped, allocs, nil, d)
		if len(r.deploymentUpdates) != 1 || r.deploymentUpdates[0].StatusDescription != structs.DeploymentStatusDescriptionStoppedJob {
			t.Fatalf("updates %+v", r.deploymentUpdates)
		}
	})
	t.Run("mark a finished deployment successful", func(t *testing.T) {
		d := structs.NewDeployment(job, 50, testNow)
		d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 2, HealthyAllocs: 2}
		r := runReconcile(t, job, allocs, nil, d)
		if len(r.deploymentUpdates) != 1 || r.deploymentUpdates[0].Status != structs.DeploymentStatusSuccessful {
			t.Fatalf("updates %+v", r.deploymentUpdates)
		}
	})
	t.Run("a paused deployment places nothing new", func(t *testing.T) {
		d := structs.NewDeployment(job, 50, testNow)
		d.Status = structs.DeploymentStatusPaused
		d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 3}
		bigger := job.Copy()
		bigger.TaskGroups[0].Count = 3
		r := runReconcile(t, bigger, allocs, nil, d)
		if len(r.place) != 0 {
			t.Fatalf("placed %v", names(r.place))
		}
	})
}

func TestTasksUpdated(t *testing.T) {
	base := mock.Job(mock.Count(10), mock.NoPorts(), mock.TaskDriver("exec"))
	cases := []struct {
		name   string
		change func(j *structs.Job)
		want   bool
	}{
		{"nothing", func(j *structs.Job) {}, false},
		{"count", func(j *structs.Job) { j.TaskGroups[0].Count = 99 }, false},
		{"constraint", func(j *structs.Job) {
			j.Constraints = append(j.Constraints, &structs.Constraint{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="})
		}, false},
		{"priority", func(j *structs.Job) { j.Priority = 90 }, false},
		{"driver", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Driver = "raw_exec" }, true},
		{"config", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Config["args"] = []string{"x"} }, true},
		{"env", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env["X"] = "1" }, true},
		{"job meta", func(j *structs.Job) { j.Meta = map[string]string{"owner": "me"} }, true},
		{"cpu", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Resources.CPU++ }, true},
		{"memory", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Resources.MemoryMB++ }, true},
		{"disk", func(j *structs.Job) { j.TaskGroups[0].EphemeralDisk.SizeMB++ }, true},
		{"ports", func(j *structs.Job) {
			j.TaskGroups[0].Networks = structs.Networks{{DynamicPorts: []structs.Port{{Label: "http"}}}}
		}, true},
		{"new task", func(j *structs.Job) {
			j.TaskGroups[0].Tasks = append(j.TaskGroups[0].Tasks, &structs.Task{Name: "side", Driver: "exec"})
		}, true},
	}
	for _, tc := range cases {
		b := base.Copy()
		tc.change(b)
		if got, why := tasksUpdated(base, b, "web"); got != tc.want {
			t.Errorf("%s: tasksUpdated = %v (%s), want %v", tc.name, got, why, tc.want)
		}
	}
}

func TestReconcileNamesAreStable(t *testing.T) {
	// Replacements keep the name of what they replace, so a group's
	// names stay 0..count-1 across failures.
	node := mock.Node(mock.Unreserved())
	down := mock.Node(mock.Unreserved(), mock.NodeStatus(structs.NodeStatusDown))
	job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
	job.TaskGroups[0].Count = 5
	var allocs []*structs.Allocation
	for i := range 5 {
		n := node
		if i%2 == 1 {
			n = down
		}
		allocs = append(allocs, mock.Alloc(mock.ForJob(job, i), mock.OnNode(n), mock.ClientStatus(structs.AllocClientStatusRunning)))
	}
	r := runReconcile(t, job, allocs, map[string]*structs.Node{down.ID: down}, nil)
	got := names(r.place)
	want := []string{fmt.Sprintf("%s.web[1]", job.ID), fmt.Sprintf("%s.web[3]", job.ID)}
	if !slices.Equal(got, want) {
		t.Fatalf("place %v want %v", got, want)
	}
}

func TestReconcileRescheduleDelays(t *testing.T) {
	// The follow-up eval waits for the next delay of the chain: a failed
	// alloc that was itself the replacement of one replaced after delay
	// 10s and, before that, 10s.
	node := mock.Node(mock.Unreserved())
	cases := []struct {
		fn   string
		want time.Duration
	}{
		{structs.RescheduleDelayConstant, 10 * time.Second},    // always the base delay
		{structs.RescheduleDelayExponential, 20 * time.Second}, // last delay x 2
		{structs.RescheduleDelayFibonacci, 20 * time.Second},   // last two delays summed
	}
	for _, tc := range cases {
		t.Run(tc.fn, func(t *testing.T) {
			job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
			job.TaskGroups[0].Count = 1
			job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Delay: 10 * time.Second,
				DelayFunction: tc.fn, MaxDelay: time.Hour, Unlimited: true}
			a := mock.MarkFailed(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning)), testNow)
			a.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{
				{RescheduleTime: testNow.Add(-3 * time.Minute).UnixNano(), Delay: 10 * time.Second},
				{RescheduleTime: testNow.Add(-2 * time.Minute).UnixNano(), Delay: 10 * time.Second},
			}}
			r := runReconcile(t, job, []*structs.Allocation{a}, nil, nil)
			if len(r.followupEvals) != 1 {
				t.Fatalf("followups %d", len(r.followupEvals))
			}
			if got := r.followupEvals[0].WaitUntil.Sub(testNow); got != tc.want {
				t.Fatalf("waits %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReconcileForcedReschedule(t *testing.T) {
	node := mock.Node(mock.Unreserved())
	job := versioned(mock.BatchJob(mock.GroupName("web"), mock.Count(10)), 0, 10)
	job.TaskGroups[0].Count = 1
	a := mock.MarkFailed(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning)), testNow)
	// Attempts are used up, but an operator forces it.
	a.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{
		{RescheduleTime: testNow.Add(-time.Minute).UnixNano(), Delay: 5 * time.Second}}}
	yes := true
	a.DesiredTransition.ForceReschedule = &yes
	r := runReconcile(t, job, []*structs.Allocation{a}, nil, nil)
	if len(r.place) != 1 || !r.place[0].reschedule {
		t.Fatalf("place %+v", r.place)
	}
}
