package scheduler

import (
	"math"
	"testing"

	"github.com/opennomad/nomad/scheduler/schedtest"
	"github.com/opennomad/nomad/structs"
)

func TestChooseVictims(t *testing.T) {
	node := schedtest.Node()
	mk := func(priority, cpu int) *structs.Allocation {
		j := schedtest.Job()
		j.Priority = priority
		j.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: cpu, MemoryMB: 100}
		return schedtest.Alloc(j, node, 0)
	}
	p20a, p20b, p30, p45, p60 := mk(20, 500), mk(20, 1500), mk(30, 2000), mk(45, 3000), mk(60, 3000)
	all := []*structs.Allocation{p60, p45, p30, p20b, p20a}
	me := structs.NamespacedID{ID: "me", Namespace: "default"}
	cases := []struct {
		name     string
		need     demand
		priority int
		want     []*structs.Allocation
	}{
		// 1200 MHz: the lowest priority level first, and in it the alloc
		// covering most of the need (1500 alone) rather than 500 + more.
		{"fewest of the lowest priority", demand{cpu: 1200}, 50, []*structs.Allocation{p20b}},
		// 1800 MHz: 1500 + 500 from priority 20 cover it; priority 30 is
		// not touched.
		{"whole lowest level before the next", demand{cpu: 1800}, 50, []*structs.Allocation{p20b, p20a}},
		// 2500 MHz: priority 20 gives 2000, then 2000 from priority 30; the
		// 500 alloc is given back as the rest suffices (1500 + 2000).
		{"give back what is not needed", demand{cpu: 2500}, 50, []*structs.Allocation{p20b, p30}},
		// Priority 45 is only 5 below 50: never a victim.
		{"priority gap of ten", demand{cpu: 8000}, 50, nil},
		// With priority 70, 45 and 60 (10 below) qualify.
		{"higher preemptor reaches further", demand{cpu: 6000}, 70, []*structs.Allocation{p20b, p30, p45}},
		{"nothing needed", demand{}, 50, nil},
	}
	for _, tc := range cases {
		got := chooseVictims(tc.need, tc.priority, me, all)
		if tc.need.covered() {
			if len(got) != 0 {
				t.Errorf("%s: got %d victims", tc.name, len(got))
			}
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: got %d victims, want %d", tc.name, len(got), len(tc.want))
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: victim %d is priority %d cpu %d", tc.name, i, got[i].Job.Priority,
					got[i].AllocatedResources.Tasks["web"].Cpu.CpuShares)
			}
		}
	}
}

func TestChooseVictimsSkipsOwnJob(t *testing.T) {
	node := schedtest.Node()
	j := schedtest.Job()
	j.Priority = 10
	a := schedtest.Alloc(j, node, 0)
	if got := chooseVictims(demand{cpu: 100}, 90, j.NamespacedID(), []*structs.Allocation{a}); got != nil {
		t.Fatal("a job never preempts itself")
	}
}

func TestPreemptionScore(t *testing.T) {
	mk := func(p int) *structs.Allocation {
		return &structs.Allocation{Job: &structs.Job{Priority: p}}
	}
	cases := []struct {
		victims []*structs.Allocation
		net     float64
	}{
		// net = max + sum/max = 20 + 20/20 = 21
		{[]*structs.Allocation{mk(20)}, 21},
		// net = 40 + (20+40)/40 = 41.5
		{[]*structs.Allocation{mk(20), mk(40)}, 41.5},
	}
	for _, tc := range cases {
		want := 1 / (1 + math.Exp(0.0048*(tc.net-2048)))
		if got := preemptionScore(tc.victims); !near(got, want) {
			t.Errorf("net %v: got %v want %v", tc.net, got, want)
		}
	}
	if preemptionScore([]*structs.Allocation{mk(20)}) <= preemptionScore([]*structs.Allocation{mk(20), mk(40)}) {
		t.Error("fewer, lower-priority victims must score higher")
	}
}
