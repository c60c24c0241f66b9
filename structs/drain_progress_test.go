package structs

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestNodeDrainProgress(t *testing.T) {
	yes := true
	service := &Job{ID: "web", Type: JobTypeService}
	system := &Job{ID: "agent", Type: JobTypeSystem}
	sysbatch := &Job{ID: "scan", Type: JobTypeSysBatch}
	alloc := func(job *Job, desired, client string, migrate bool) *Allocation {
		a := &Allocation{NodeID: "n1", Job: job, JobID: job.ID, DesiredStatus: desired, ClientStatus: client}
		if migrate {
			a.DesiredTransition.Migrate = &yes
		}
		return a
	}
	run, stop := AllocDesiredStatusRun, AllocDesiredStatusStop
	allocs := []*Allocation{
		alloc(service, run, AllocClientStatusRunning, false),                 // waiting for its turn
		alloc(service, run, AllocClientStatusRunning, true),                  // marked, scheduler not run yet
		alloc(service, stop, AllocClientStatusRunning, true),                 // told to stop, still running
		alloc(service, stop, AllocClientStatusComplete, true),                // gone
		alloc(service, run, AllocClientStatusFailed, false),                  // gone
		alloc(system, run, AllocClientStatusRunning, false),                  // system, stopped last
		alloc(sysbatch, run, AllocClientStatusPending, false),                // sysbatch counts as system
		{NodeID: "n2", Job: service, ClientStatus: AllocClientStatusRunning}, // another node
	}
	cases := []struct {
		name   string
		node   *Node
		allocs []*Allocation
		want   DrainProgress
	}{
		{
			name:   "drain with system jobs",
			node:   &Node{ID: "n1", Status: NodeStatusReady, DrainStrategy: &DrainStrategy{}},
			allocs: allocs,
			want:   DrainProgress{Remaining: 5, Migrating: 2, System: 2},
		},
		{
			name:   "drain ignoring system jobs",
			node:   &Node{ID: "n1", Status: NodeStatusReady, DrainStrategy: &DrainStrategy{DrainSpec: DrainSpec{IgnoreSystemJobs: true}}},
			allocs: allocs,
			want:   DrainProgress{Remaining: 3, Migrating: 2, Ignored: 2},
		},
		{
			// The stopped-but-running alloc's client is gone for good.
			name:   "down node: server-stopped allocs count as gone",
			node:   &Node{ID: "n1", Status: NodeStatusDown, DrainStrategy: &DrainStrategy{}},
			allocs: allocs,
			want:   DrainProgress{Remaining: 4, Migrating: 1, System: 2},
		},
		{
			name:   "nothing left",
			node:   &Node{ID: "n1", Status: NodeStatusReady, DrainStrategy: &DrainStrategy{}},
			allocs: allocs[3:5],
			want:   DrainProgress{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := NodeDrainProgress(tc.node, tc.allocs)
			must.Eq(t, tc.want, got)
			must.Eq(t, tc.want.Remaining == 0, got.Done())
		})
	}
}
