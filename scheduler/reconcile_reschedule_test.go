package scheduler

import (
	"slices"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// Which failed or unhealthy allocs are replaced, and when, inside and
// outside a deployment (see reconciler.rescheduleTime for the rule).
func TestReconcileReschedulesInDeployments(t *testing.T) {
	node := mock.Node(mock.Unreserved())
	yes, no := true, false

	// rollout is version 1 of a job of count 3 rolled one at a time with a
	// 10m progress deadline (0: none), its running deployment, and its
	// allocs, all placed by the deployment and healthy.
	rollout := func(progressDeadline time.Duration) (*structs.Job, *structs.Deployment, []*structs.Allocation) {
		job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 1, 20)
		tg := job.TaskGroups[0]
		tg.Count = 3
		tg.Update = &structs.UpdateStrategy{MaxParallel: 1, ProgressDeadline: progressDeadline}
		tg.ReschedulePolicy = &structs.ReschedulePolicy{Attempts: 2, Interval: time.Hour,
			Delay: 30 * time.Second, DelayFunction: structs.RescheduleDelayConstant}
		d := structs.NewDeployment(job, 50, testNow.Add(-time.Hour))
		d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 3, ProgressDeadline: progressDeadline}
		as := allocsOn(job, node, 3)
		for _, a := range as {
			a.DeploymentID = d.ID
			a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &yes, Timestamp: testNow.Add(-time.Hour)}
		}
		return job, d, as
	}
	// unhealthy gives the alloc an unhealthy verdict reached ago.
	unhealthy := func(a *structs.Allocation, ago time.Duration) *structs.Allocation {
		a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &no, Timestamp: testNow.Add(-ago)}
		return a
	}

	type want struct {
		place []string // names placed, the group prefix left out
		// followupAt is when the one follow-up eval fires; zero: none.
		followupAt time.Time
		du         structs.DesiredUpdates
	}
	cases := []struct {
		name  string
		setup func() (*structs.Job, []*structs.Allocation, *structs.Deployment)
		want  want
	}{
		{
			name: "a running alloc judged unhealthy is replaced once its delay passed",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job, d, as := rollout(10 * time.Minute)
				unhealthy(as[1], time.Minute) // verdict 60s ago, delay 30s
				return job, as, d
			},
			want: want{place: []string{"[1]"}, du: structs.DesiredUpdates{Place: 1, RescheduleNow: 1, Ignore: 2}},
		},
		{
			name: "the delay counts from the verdict",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job, d, as := rollout(10 * time.Minute)
				unhealthy(as[1], 10*time.Second) // due in 20s
				return job, as, d
			},
			want: want{followupAt: testNow.Add(20 * time.Second), du: structs.DesiredUpdates{RescheduleLater: 1, Ignore: 3}},
		},
		{
			name: "an alloc that failed on its client is replaced once judged",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job, d, as := rollout(10 * time.Minute)
				mock.MarkFailed(as[0], testNow.Add(-time.Minute))
				unhealthy(as[0], time.Minute)
				return job, as, d
			},
			want: want{place: []string{"[0]"}, du: structs.DesiredUpdates{Place: 1, RescheduleNow: 1, Ignore: 2}},
		},
		{
			name: "a failed alloc of a running deployment waits for its verdict",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job, d, as := rollout(10 * time.Minute)
				mock.MarkFailed(as[0], testNow.Add(-time.Minute))
				as[0].DeploymentStatus = nil
				return job, as, d
			},
			want: want{du: structs.DesiredUpdates{Ignore: 3}},
		},
		{
			name: "without a progress deadline the deployment fails instead",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job, d, as := rollout(0)
				mock.MarkFailed(as[0], testNow.Add(-time.Minute))
				unhealthy(as[0], time.Minute)
				unhealthy(as[1], time.Minute)
				return job, as, d
			},
			want: want{du: structs.DesiredUpdates{Ignore: 3}},
		},
		{
			name: "the watcher's Reschedule mark is honoured",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job, d, as := rollout(0)
				mock.MarkFailed(as[2], testNow.Add(-time.Minute))
				as[2].DesiredTransition.Reschedule = &yes
				return job, as, d
			},
			want: want{place: []string{"[2]"}, du: structs.DesiredUpdates{Place: 1, RescheduleNow: 1, Ignore: 2}},
		},
		{
			name: "a paused deployment still replaces",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job, d, as := rollout(10 * time.Minute)
				d.Status = structs.DeploymentStatusPaused
				unhealthy(as[1], time.Minute)
				return job, as, d
			},
			want: want{place: []string{"[1]"}, du: structs.DesiredUpdates{Place: 1, RescheduleNow: 1, Ignore: 2}},
		},
		{
			name: "a failed deployment replaces nothing of its own",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job, d, as := rollout(10 * time.Minute)
				d.Status = structs.DeploymentStatusFailed
				mock.MarkFailed(as[0], testNow.Add(-time.Minute))
				unhealthy(as[0], time.Minute)
				unhealthy(as[1], time.Minute)
				return job, as, d
			},
			want: want{du: structs.DesiredUpdates{Ignore: 3}},
		},
		{
			name: "outside a live deployment only failed allocs are replaced",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job, d, as := rollout(10 * time.Minute)
				d.Status = structs.DeploymentStatusSuccessful
				unhealthy(as[1], time.Minute)
				mock.MarkFailed(as[2], testNow.Add(-time.Minute))
				return job, as, d
			},
			want: want{place: []string{"[2]"}, du: structs.DesiredUpdates{Place: 1, RescheduleNow: 1, Ignore: 2}},
		},
		{
			name: "an alloc of an older deployment follows its policy alone",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job, d, as := rollout(10 * time.Minute)
				as[0].DeploymentID = "an-older-deployment"
				mock.MarkFailed(as[0], testNow.Add(-time.Minute))
				return job, as, d
			},
			want: want{place: []string{"[0]"}, du: structs.DesiredUpdates{Place: 1, RescheduleNow: 1, Ignore: 2}},
		},
		{
			name: "no attempts left, no replacement",
			setup: func() (*structs.Job, []*structs.Allocation, *structs.Deployment) {
				job, d, as := rollout(10 * time.Minute)
				unhealthy(as[1], time.Minute)
				as[1].RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{
					{RescheduleTime: testNow.Add(-20 * time.Minute).UnixNano(), Delay: 30 * time.Second},
					{RescheduleTime: testNow.Add(-10 * time.Minute).UnixNano(), Delay: 30 * time.Second},
				}}
				return job, as, d
			},
			want: want{du: structs.DesiredUpdates{Ignore: 3}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, allocs, d := tc.setup()
			r := runReconcile(t, job, allocs, nil, d)
			var wantPlace []string
			for _, p := range tc.want.place {
				wantPlace = append(wantPlace, job.ID+".web"+p)
			}
			if got := names(r.place); !slices.Equal(got, wantPlace) {
				t.Errorf("place %v want %v", got, wantPlace)
			}
			for _, p := range r.place {
				if !p.reschedule || p.stopPrevious != structs.AllocRescheduled || p.previous == nil {
					t.Errorf("%s: not a reschedule: %+v", p.name, p)
				}
			}
			switch {
			case tc.want.followupAt.IsZero() && len(r.followupEvals) != 0:
				t.Errorf("unexpected follow-up evals: %d", len(r.followupEvals))
			case !tc.want.followupAt.IsZero() &&
				(len(r.followupEvals) != 1 || !r.followupEvals[0].WaitUntil.Equal(tc.want.followupAt)):
				t.Errorf("follow-ups %+v, want one at %v", r.followupEvals, tc.want.followupAt)
			}
			if du := r.desiredTGUpdates["web"]; *du != tc.want.du {
				t.Errorf("desired updates\n got %+v\nwant %+v", *du, tc.want.du)
			}
		})
	}
}

// An unhealthy, unpromoted canary is replaced by a canary of the same
// name, and no further canary is placed beside it.
func TestReconcileReplacesAnUnhealthyCanary(t *testing.T) {
	node := mock.Node(mock.Unreserved())
	no := false
	old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
	tg := old.TaskGroups[0]
	tg.Count = 3
	tg.Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1, ProgressDeadline: 10 * time.Minute}
	tg.ReschedulePolicy = &structs.ReschedulePolicy{Unlimited: true, Delay: 5 * time.Second,
		DelayFunction: structs.RescheduleDelayConstant}
	as := allocsOn(old, node, 3)
	job := versioned(old.Copy(), 1, 20)
	job.TaskGroups[0].Tasks[0].Env["FOO"] = "baz"
	d := structs.NewDeployment(job, 50, testNow)
	c := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))
	c.DeploymentID = d.ID
	c.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true, Healthy: &no, Timestamp: testNow.Add(-time.Minute)}
	d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1, PlacedCanaries: []string{c.ID},
		ProgressDeadline: 10 * time.Minute}

	r := runReconcile(t, job, append(as, c), nil, d)
	if len(r.place) != 1 {
		t.Fatalf("place %v, want only the canary's replacement", names(r.place))
	}
	p := r.place[0]
	if !p.canary || !p.reschedule || p.previous != c || p.name != c.Name {
		t.Fatalf("replacement %+v", p)
	}
	if du := r.desiredTGUpdates["web"]; *du != (structs.DesiredUpdates{RescheduleNow: 1, Ignore: 3}) {
		t.Fatalf("desired updates %+v", *du)
	}
}

// Replacements made in a pass count against max_parallel like the
// destructive updates it starts.
func TestReconcileReplacementsCountAgainstMaxParallel(t *testing.T) {
	node := mock.Node(mock.Unreserved())
	yes := true
	old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
	tg := old.TaskGroups[0]
	tg.Count = 4
	tg.Update = &structs.UpdateStrategy{MaxParallel: 2, ProgressDeadline: 10 * time.Minute}
	tg.ReschedulePolicy = &structs.ReschedulePolicy{Unlimited: true, Delay: 5 * time.Second,
		DelayFunction: structs.RescheduleDelayConstant}
	as := allocsOn(old, node, 4)
	job := versioned(old.Copy(), 1, 20)
	job.TaskGroups[0].Tasks[0].Env["FOO"] = "baz"
	d := structs.NewDeployment(job, 50, testNow)
	d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 4, ProgressDeadline: 10 * time.Minute}
	// [0] is already of version 1 and healthy; [1] of version 1 failed.
	as[0] = mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))
	as[0].DeploymentID = d.ID
	as[0].DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &yes}
	as[1] = mock.MarkFailed(mock.Alloc(mock.ForJob(job, 1), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning)), testNow.Add(-time.Minute))
	as[1].DeploymentID = d.ID
	no := false
	as[1].DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &no, Timestamp: testNow.Add(-time.Minute)}

	r := runReconcile(t, job, as, nil, d)
	// max_parallel 2 - 1 replacement = 1 destructive update of [2], [3].
	if len(r.place) != 1 || len(r.destructive) != 1 || r.destructive[0].alloc != as[2] {
		t.Fatalf("place %v destructive %d", names(r.place), len(r.destructive))
	}
	want := structs.DesiredUpdates{Place: 1, RescheduleNow: 1, DestructiveUpdate: 1, Ignore: 2}
	if du := r.desiredTGUpdates["web"]; *du != want {
		t.Fatalf("desired updates\n got %+v\nwant %+v", *du, want)
	}
}
