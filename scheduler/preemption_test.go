package scheduler

import (
	"math"
	"slices"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestChooseVictims(t *testing.T) {
	node := mock.Node(mock.Unreserved())
	mk := func(priority, cpu int) *structs.Allocation {
		j := mock.Job(mock.Count(10), mock.NoPorts())
		j.Priority = priority
		j.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: cpu, MemoryMB: 100}
		return mock.Alloc(mock.ForJob(j, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))
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
		// nearest the need: 1500 is |1200-1500|/1200 = 0.25 away, 500 is
		// (1200-500)/1200 = 0.58 away.
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
		got := chooseVictims(tc.need, tc.priority, me, all, nil)
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
	node := mock.Node(mock.Unreserved())
	j := mock.Job(mock.Count(10), mock.NoPorts())
	j.Priority = 10
	a := mock.Alloc(mock.ForJob(j, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))
	if got := chooseVictims(demand{cpu: 100}, 90, j.NamespacedID(), []*structs.Allocation{a}, nil); got != nil {
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

func TestResourceDistance(t *testing.T) {
	cases := []struct {
		name       string
		need, give demand
		want       float64
	}{
		// Only dimensions still needed count: (1000-1000)/1000 = 0.
		{"exact fit", demand{cpu: 1000}, demand{cpu: 1000, mem: 512}, 0},
		// (1000-500)/1000 = 0.5.
		{"half the need", demand{cpu: 1000}, demand{cpu: 500}, 0.5},
		// (1000-3000)/1000 = -2: too big is as far as too small.
		{"three times the need", demand{cpu: 1000}, demand{cpu: 3000}, 2},
		// cpu (1000-500)/1000 = 0.5, memory (400-100)/400 = 0.75:
		// sqrt(0.25 + 0.5625) = 0.9014.
		{"two dimensions", demand{cpu: 1000, mem: 400}, demand{cpu: 500, mem: 100}, 0.9014},
		// cpu 0, memory 1, disk (100-0)/100 = 1: sqrt(2).
		{"three dimensions", demand{cpu: 10, mem: 10, disk: 100}, demand{cpu: 10}, math.Sqrt2},
	}
	for _, tc := range cases {
		if got := resourceDistance(tc.need, tc.give); !near(got, tc.want) {
			t.Errorf("%s: got %.4f want %.4f", tc.name, got, tc.want)
		}
	}
}

func TestParallelPenalty(t *testing.T) {
	cases := []struct {
		maxParallel, evicted int
		want                 float64
	}{
		{0, 5, 0},   // no migrate max_parallel: no penalty
		{2, 0, 0},   // the first and
		{2, 1, 0},   // second of a max_parallel 2 group are free
		{2, 2, 50},  // the third: (2+1-2) * 50
		{2, 3, 100}, // the fourth: (3+1-2) * 50
		{1, 1, 50},  // max_parallel 1, the second: (1+1-1) * 50
	}
	for _, tc := range cases {
		if got := parallelPenalty(tc.maxParallel, tc.evicted); got != tc.want {
			t.Errorf("max_parallel %d, %d evicted: got %v want %v", tc.maxParallel, tc.evicted, got, tc.want)
		}
	}
}

// Among allocs of one priority, a group that already gave max_parallel
// allocs to the plan is chosen only when nothing else covers the need:
// its distance carries 50 per alloc over the bound.
func TestChooseVictimsSpreadsOverGroups(t *testing.T) {
	node := mock.Node(mock.Unreserved())
	mk := func(group string, maxParallel, cpu int) *structs.Allocation {
		j := mock.Job(mock.Count(10), mock.NoPorts())
		j.Priority = 20
		tg := j.TaskGroups[0]
		tg.Name = group
		tg.Migrate = &structs.MigrateStrategy{MaxParallel: maxParallel}
		tg.Tasks[0].Resources = &structs.Resources{CPU: cpu, MemoryMB: 100}
		return mock.Alloc(mock.ForGroup(j, group, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))
	}
	me := structs.NamespacedID{ID: "me", Namespace: "default"}
	// a fits the need exactly (distance 0), b is half of it (0.5).
	a, b, b2 := mk("a", 1, 1000), mk("b", 1, 500), mk("b2", 1, 500)
	cases := []struct {
		name    string
		evicted map[groupKey]int
		want    []*structs.Allocation
	}{
		// Nothing evicted yet: a at 0 beats b at 0.5.
		{"best fit", nil, []*structs.Allocation{a}},
		// a's group already lost one (max_parallel 1): 0 + (1+1-1)*50 =
		// 50 against 0.5 for b, then (1000-500-500)... b2 at
		// (500-500)/500 = 0 covers the rest.
		{"a's group at its bound", map[groupKey]int{allocGroup(a): 1}, []*structs.Allocation{b, b2}},
		// Every group at its bound: 50 + distance, and a is nearest.
		{"every group at its bound", map[groupKey]int{allocGroup(a): 1, allocGroup(b): 1, allocGroup(b2): 1},
			[]*structs.Allocation{a}},
	}
	for _, tc := range cases {
		got := chooseVictims(demand{cpu: 1000}, 50, me, []*structs.Allocation{a, b, b2},
			func(k groupKey) int { return tc.evicted[k] })
		if !slices.Equal(got, tc.want) {
			var names []string
			for _, v := range got {
				names = append(names, v.TaskGroup)
			}
			t.Errorf("%s: got %v", tc.name, names)
		}
	}
}

// Victims chosen for one placement count for the next choice of the same
// placement, not only those of earlier placements.
func TestChooseVictimsCountsItsOwnChoices(t *testing.T) {
	node := mock.Node(mock.Unreserved())
	j := mock.Job(mock.Count(10), mock.NoPorts())
	j.Priority = 20
	j.TaskGroups[0].Migrate = &structs.MigrateStrategy{MaxParallel: 1}
	j.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 350, MemoryMB: 100}
	o := mock.Job(mock.Count(10), mock.NoPorts())
	o.Priority = 20
	o.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 1400, MemoryMB: 100}
	s1, s2, big := mock.Alloc(mock.ForJob(j, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning)), mock.Alloc(mock.ForJob(j, 1), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning)), mock.Alloc(mock.ForJob(o, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))
	me := structs.NamespacedID{ID: "me", Namespace: "default"}
	// Need 700. First s1: (700-350)/700 = 0.5 against big's
	// |700-1400|/700 = 1. Then 350 left: s2 would fit exactly (0) but is
	// the second of a max_parallel 1 group, 0 + 50; big is
	// |350-1400|/350 = 3 and wins. big alone covers the need, so s1 is
	// given back: one victim instead of two of the same group.
	got := chooseVictims(demand{cpu: 700}, 50, me, []*structs.Allocation{s1, s2, big}, nil)
	if !slices.Equal(got, []*structs.Allocation{big}) {
		var cpus []int64
		for _, v := range got {
			cpus = append(cpus, allocDemand(v).cpu)
		}
		t.Fatalf("victims of %v MHz, want the 1400 MHz one alone", cpus)
	}
}

// Across the placements of one plan, a group that gave its migrate
// max_parallel of allocs is spared while another group can cover.
func TestServicePreemptionSpreadsOverGroups(t *testing.T) {
	h := NewHarness(t)
	x, y := mock.Node(mock.Unreserved(), mock.CPUShares(4000)), mock.Node(mock.Unreserved(), mock.CPUShares(4000))
	h.UpsertNode(x, y)
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.PreemptionConfig.ServiceSchedulerEnabled = true
	h.SetSchedulerConfig(cfg)

	// Per node: an alloc of group a (1000 MHz, max_parallel 1), one of
	// group b (1200 MHz), and 1800 MHz of a job too important to evict.
	low := mock.Job(mock.Count(10), mock.NoPorts())
	low.Priority = 20
	a := low.TaskGroups[0]
	a.Name, a.Migrate = "a", &structs.MigrateStrategy{MaxParallel: 1}
	a.Tasks[0].Resources = &structs.Resources{CPU: 1000, MemoryMB: 64}
	b := a.Copy()
	b.Name, b.Tasks[0].Resources = "b", &structs.Resources{CPU: 1200, MemoryMB: 64}
	low.TaskGroups = append(low.TaskGroups, b)
	h.UpsertJob(low)
	fill := mock.Job(mock.Count(10), mock.NoPorts())
	fill.Priority = 90
	fill.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 1800, MemoryMB: 64}
	h.UpsertJob(fill)
	for _, n := range []*structs.Node{x, y} {
		h.UpsertAllocs(mock.Alloc(mock.ForGroup(low, "a", 0), mock.OnNode(n), mock.ClientStatus(structs.AllocClientStatusRunning)), mock.Alloc(mock.ForGroup(low, "b", 0), mock.OnNode(n), mock.ClientStatus(structs.AllocClientStatusRunning)), mock.Alloc(mock.ForJob(fill, 0), mock.OnNode(n), mock.ClientStatus(structs.AllocClientStatusRunning)))
	}

	high := mock.Job(mock.Count(10), mock.NoPorts())
	high.Priority = 70
	high.TaskGroups[0].Count = 2
	high.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 1000, MemoryMB: 64}
	h.UpsertJob(high)
	if err := h.Process(mock.Eval(mock.EvalForJob(high), mock.TriggeredBy(structs.EvalTriggerJobRegister))); err != nil {
		t.Fatal(err)
	}
	// The first placement takes an a (distance 0 against b's
	// |1000-1200|/1000 = 0.2); for the second, a is 0 + 50 and b wins.
	groups := map[string]int{}
	for _, victims := range h.Plans[0].NodePreemptions {
		for _, v := range victims {
			groups[h.alloc(v.ID).TaskGroup]++
		}
	}
	if groups["a"] != 1 || groups["b"] != 1 {
		t.Fatalf("preempted per group %v, want one of each", groups)
	}
	if len(h.liveAllocs(high)) != 2 || len(h.Overcommits) != 0 {
		t.Fatalf("placed %d, overcommits %v", len(h.liveAllocs(high)), h.Overcommits)
	}
}
