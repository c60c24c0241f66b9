package scheduler

import (
	"slices"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// An alloc marked for migration (DesiredTransition.Migrate) is stopped
// and replaced under its name, on any node: the drainer marks allocs of
// draining nodes, and the Alloc.Stop endpoint marks an alloc on a node
// that is not draining at all. The stop is a plain stop of its own.
func TestReconcileMigrations(t *testing.T) {
	ready := mock.Node(mock.Unreserved())
	draining := mock.Node(mock.Unreserved(), mock.Draining())
	down := mock.Node(mock.Unreserved(), mock.NodeStatus(structs.NodeStatusDown))
	disconnected := mock.Node(mock.Unreserved(), mock.NodeStatus(structs.NodeStatusDisconnected))
	yes := true
	mark := func(a *structs.Allocation) *structs.Allocation {
		a.DesiredTransition.Migrate = &yes
		return a
	}
	type want struct {
		place []string // names placed (the group prefix left out)
		// migrating lists the placements that replace a migrated alloc.
		migrating []string
		stop      []string // "<name>:<description>"
		du        structs.DesiredUpdates
	}
	cases := []struct {
		name  string
		setup func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment)
		want  want
	}{
		{
			name: "marked by the drainer on a draining node",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 2
				as := allocsOn(job, draining, 2)
				mark(as[1])
				return job, as, map[string]*structs.Node{draining.ID: draining}, nil
			},
			want: want{place: []string{"[1]"}, migrating: []string{"[1]"}, stop: []string{"[1]:" + structs.AllocMigrating},
				du: structs.DesiredUpdates{Migrate: 1, Ignore: 1}},
		},
		{
			name: "stopped by an operator on a ready node",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 2
				as := allocsOn(job, ready, 2)
				mark(as[0])
				return job, as, nil, nil
			},
			want: want{place: []string{"[0]"}, migrating: []string{"[0]"}, stop: []string{"[0]:" + structs.AllocMigrating},
				du: structs.DesiredUpdates{Migrate: 1, Ignore: 1}},
		},
		{
			name: "batch work is moved too",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.BatchJob(mock.GroupName("web"), mock.Count(10)), 0, 10)
				job.TaskGroups[0].Count = 1
				return job, []*structs.Allocation{mark(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(ready), mock.ClientStatus(structs.AllocClientStatusRunning)))}, nil, nil
			},
			want: want{place: []string{"[0]"}, migrating: []string{"[0]"}, stop: []string{"[0]:" + structs.AllocMigrating},
				du: structs.DesiredUpdates{Migrate: 1}},
		},
		{
			name: "an unmarked alloc on a draining node stays",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 1
				return job, allocsOn(job, draining, 1), map[string]*structs.Node{draining.ID: draining}, nil
			},
			want: want{du: structs.DesiredUpdates{Ignore: 1}},
		},
		{
			name: "on a down node the alloc is lost, mark or not",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 1
				return job, []*structs.Allocation{mark(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(down), mock.ClientStatus(structs.AllocClientStatusRunning)))}, map[string]*structs.Node{down.ID: down}, nil
			},
			want: want{place: []string{"[0]"}, stop: []string{"[0]:" + structs.AllocLost},
				du: structs.DesiredUpdates{Place: 1, Stop: 1}},
		},
		{
			name: "on a disconnected node the disconnect rules apply first",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				grace := 5 * time.Minute
				job.TaskGroups[0].MaxClientDisconnect = &grace
				job.TaskGroups[0].Count = 1
				return job, []*structs.Allocation{mark(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(disconnected), mock.ClientStatus(structs.AllocClientStatusRunning)))},
					map[string]*structs.Node{disconnected.ID: disconnected}, nil
			},
			want: want{place: []string{"[0]"}, du: structs.DesiredUpdates{Place: 1, Disconnect: 1}},
		},
		{
			name: "a finished alloc has nothing to move",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.BatchJob(mock.GroupName("web"), mock.Count(10)), 0, 10)
				job.TaskGroups[0].Count = 1
				a := mark(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(ready), mock.ClientStatus(structs.AllocClientStatusRunning)))
				mock.MarkComplete(a, testNow)
				return job, []*structs.Allocation{a}, nil, nil
			},
			want: want{du: structs.DesiredUpdates{Ignore: 1}},
		},
		{
			name: "a migrating alloc beyond the count is stopped, not replaced",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 1
				as := allocsOn(job, draining, 2)
				mark(as[0])
				mark(as[1])
				return job, as, map[string]*structs.Node{draining.ID: draining}, nil
			},
			want: want{place: []string{"[0]"}, migrating: []string{"[0]"},
				stop: []string{"[1]:" + structs.AllocNotNeeded, "[0]:" + structs.AllocMigrating},
				du:   structs.DesiredUpdates{Migrate: 1, Stop: 1}},
		},
		{
			name: "an unpromoted canary is stopped and a new canary placed",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				old := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				old.TaskGroups[0].Count = 2
				old.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1}
				as := allocsOn(old, ready, 2)
				job := versioned(old.Copy(), 1, 20)
				job.TaskGroups[0].Tasks[0].Env["FOO"] = "baz"
				d := structs.NewDeployment(job, 50, testNow)
				c := mark(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(draining), mock.ClientStatus(structs.AllocClientStatusRunning)))
				c.DeploymentID = d.ID
				c.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
				d.TaskGroups["web"] = &structs.DeploymentState{DesiredTotal: 2, DesiredCanaries: 1, PlacedCanaries: []string{c.ID}}
				return job, append(as, c), map[string]*structs.Node{draining.ID: draining}, d
			},
			want: want{place: []string{"[0]"}, stop: []string{"[0]:" + structs.AllocMigrating},
				du: structs.DesiredUpdates{Canary: 1, Ignore: 2}},
		},
		{
			name: "a failed alloc follows the reschedule policy, not the mark",
			setup: func() (*structs.Job, []*structs.Allocation, map[string]*structs.Node, *structs.Deployment) {
				job := versioned(mock.Job(mock.Count(10), mock.NoPorts()), 0, 10)
				job.TaskGroups[0].Count = 1
				job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Attempts: 1, Interval: time.Hour,
					Delay: 5 * time.Second, DelayFunction: structs.RescheduleDelayConstant}
				a := mark(mock.Alloc(mock.ForJob(job, 0), mock.OnNode(draining), mock.ClientStatus(structs.AllocClientStatusRunning)))
				mock.MarkFailed(a, testNow.Add(-time.Minute))
				return job, []*structs.Allocation{a}, map[string]*structs.Node{draining.ID: draining}, nil
			},
			want: want{place: []string{"[0]"}, du: structs.DesiredUpdates{Place: 1, RescheduleNow: 1}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, allocs, tainted, d := tc.setup()
			r := runReconcile(t, job, allocs, tainted, d)
			prefix := job.ID + ".web"
			var wantPlace, wantMigrating, wantStop []string
			for _, p := range tc.want.place {
				wantPlace = append(wantPlace, prefix+p)
			}
			for _, p := range tc.want.migrating {
				wantMigrating = append(wantMigrating, prefix+p)
			}
			for _, s := range tc.want.stop {
				wantStop = append(wantStop, prefix+s)
			}
			var migrating []string
			for _, p := range r.place {
				if p.migrating {
					migrating = append(migrating, p.name)
					if p.stopPrevious != "" || p.previous == nil || !slices.ContainsFunc(r.stop, func(s stopRequest) bool {
						return s.alloc == p.previous && s.desc == structs.AllocMigrating
					}) {
						t.Errorf("%s: a migration is a stop of its own plus a placement linked to it: %+v", p.name, p)
					}
				}
			}
			if got := names(r.place); !slices.Equal(got, wantPlace) {
				t.Errorf("place %v want %v", got, wantPlace)
			}
			if !slices.Equal(migrating, wantMigrating) {
				t.Errorf("migrating %v want %v", migrating, wantMigrating)
			}
			if got := stopNames(r.stop); !slices.Equal(got, wantStop) {
				t.Errorf("stop %v want %v", got, wantStop)
			}
			if du := r.desiredTGUpdates["web"]; *du != tc.want.du {
				t.Errorf("desired updates\n got %+v\nwant %+v", *du, tc.want.du)
			}
		})
	}
}
