package scheduler

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newTestContext builds a pass over a state holding the nodes, the job
// and the allocs.
func newTestContext(t *testing.T, job *structs.Job, nodes []*structs.Node, allocs ...*structs.Allocation) *evalContext {
	t.Helper()
	h := NewHarness(t)
	h.UpsertNode(nodes...)
	h.UpsertJob(job)
	if len(allocs) > 0 {
		h.UpsertAllocs(allocs...)
	}
	eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))
	cfg := &Config{Now: func() time.Time { return testNow }}
	ctx, err := newEvalContext(h.Snapshot(), eval.MakePlan(job), eval, job, cfg, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	if ctx.cands, err = newCandidateSet(ctx, job, true); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// placeN places n allocs of the job's first group and returns the nodes
// chosen, in order; it stops at the first failure and returns its metric.
func placeN(t *testing.T, ctx *evalContext, n int) ([]*structs.Node, *structs.AllocMetric) {
	t.Helper()
	tg := ctx.job.TaskGroups[0]
	s := ctx.selector(tg)
	var out []*structs.Node
	for k := range n {
		sel, m := s.selectNode(selectOptions{preferred: -1})
		if sel == nil {
			return out, m
		}
		a := &structs.Allocation{
			ID: structs.GenerateUUID(), Namespace: ctx.job.Namespace, JobID: ctx.job.ID, Job: ctx.job,
			TaskGroup: tg.Name, Name: structs.AllocName(ctx.job.ID, tg.Name, k), NodeID: sel.node.ID,
			AllocatedResources: sel.resources, DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusPending, Metrics: m,
		}
		ctx.place(a, sel.index)
		out = append(out, sel.node)
	}
	return out, nil
}

func TestSelectExplainsFailureExactly(t *testing.T) {
	// Four nodes: two in rack r1, two in r2. The job may only use r1 and
	// each node fits one alloc (3000 of 4000 MHz), so the third placement
	// fails: 2 nodes filtered by the constraint, 2 exhausted on cpu.
	var nodes []*structs.Node
	for i := range 4 {
		nodes = append(nodes, mock.Node(mock.Unreserved(), mock.Meta("rack", fmt.Sprintf("r%d", i%2+1)), mock.NodeClass("small")))
	}
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "="}}
	job.TaskGroups[0].Tasks[0].Resources.CPU = 3000
	ctx := newTestContext(t, job, nodes)

	placed, m := placeN(t, ctx, 3)
	if len(placed) != 2 {
		t.Fatalf("placed %d, want 2", len(placed))
	}
	if placed[0].ID == placed[1].ID || placed[0].Meta["rack"] != "r1" || placed[1].Meta["rack"] != "r1" {
		t.Fatalf("placements must use both r1 nodes: %v %v", placed[0].Meta, placed[1].Meta)
	}
	want := structs.AllocMetric{
		NodesEvaluated:     4,
		NodesFiltered:      2,
		ConstraintFiltered: map[string]int{"${meta.rack} = r1": 2},
		ClassFiltered:      map[string]int{"small": 2},
		NodesExhausted:     2,
		ClassExhausted:     map[string]int{"small": 2},
		DimensionExhausted: map[string]int{"cpu": 2},
		NodesInPool:        4,
		NodePool:           "default",
	}
	assertMetric(t, m, &want)
	if m.NodesAvailable["dc1"] != 4 {
		t.Errorf("NodesAvailable %v", m.NodesAvailable)
	}
}

func assertMetric(t *testing.T, got, want *structs.AllocMetric) {
	t.Helper()
	if got == nil {
		t.Fatal("no metric")
	}
	if got.NodesEvaluated != want.NodesEvaluated || got.NodesFiltered != want.NodesFiltered ||
		got.NodesExhausted != want.NodesExhausted || got.NodesInPool != want.NodesInPool || got.NodePool != want.NodePool {
		t.Errorf("counts: got evaluated=%d filtered=%d exhausted=%d inPool=%d pool=%q; want %d %d %d %d %q",
			got.NodesEvaluated, got.NodesFiltered, got.NodesExhausted, got.NodesInPool, got.NodePool,
			want.NodesEvaluated, want.NodesFiltered, want.NodesExhausted, want.NodesInPool, want.NodePool)
	}
	for _, c := range []struct {
		name      string
		got, want map[string]int
	}{
		{"ConstraintFiltered", got.ConstraintFiltered, want.ConstraintFiltered},
		{"ClassFiltered", got.ClassFiltered, want.ClassFiltered},
		{"ClassExhausted", got.ClassExhausted, want.ClassExhausted},
		{"DimensionExhausted", got.DimensionExhausted, want.DimensionExhausted},
	} {
		if len(c.got) != len(c.want) {
			t.Errorf("%s: got %v want %v", c.name, c.got, c.want)
			continue
		}
		for k, v := range c.want {
			if c.got[k] != v {
				t.Errorf("%s: got %v want %v", c.name, c.got, c.want)
			}
		}
	}
}

func TestSelectRotatesOverNodes(t *testing.T) {
	// Three nodes and a limit of two: each placement starts where the
	// previous one stopped, so the group lands on three different nodes
	// instead of stacking on the first two of the order.
	nodes := []*structs.Node{mock.Node(mock.Unreserved()), mock.Node(mock.Unreserved()), mock.Node(mock.Unreserved())}
	job := mock.Job(mock.Count(10), mock.NoPorts())
	ctx := newTestContext(t, job, nodes)
	placed, _ := placeN(t, ctx, 3)
	seen := map[string]bool{}
	for _, n := range placed {
		seen[n.ID] = true
	}
	if len(seen) != 3 {
		t.Fatalf("want three distinct nodes, got %d", len(seen))
	}
}

func TestSelectDistinctHosts(t *testing.T) {
	unclassed := []mock.NodeOption{mock.Unreserved(), mock.NodeClass("")}
	nodes := []*structs.Node{mock.Node(unclassed...), mock.Node(unclassed...)}
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.Constraints = append(job.Constraints, &structs.Constraint{Operand: structs.ConstraintDistinctHosts})
	ctx := newTestContext(t, job, nodes)
	placed, m := placeN(t, ctx, 3)
	if len(placed) != 2 || placed[0].ID == placed[1].ID {
		t.Fatalf("placed %d", len(placed))
	}
	assertMetric(t, m, &structs.AllocMetric{
		NodesEvaluated: 2, NodesFiltered: 2, ConstraintFiltered: map[string]int{"distinct_hosts": 2},
		NodesInPool: 2, NodePool: "default",
	})
}

func TestSelectDistinctProperty(t *testing.T) {
	// Two racks of two nodes; at most one alloc per rack.
	var nodes []*structs.Node
	for i := range 4 {
		nodes = append(nodes, mock.Node(mock.Unreserved(), mock.Meta("rack", fmt.Sprintf("r%d", i%2))))
	}
	job := mock.Job(mock.Count(10), mock.NoPorts())
	c := &structs.Constraint{LTarget: "${meta.rack}", Operand: structs.ConstraintDistinctProperty}
	job.TaskGroups[0].Constraints = append(job.TaskGroups[0].Constraints, c)
	ctx := newTestContext(t, job, nodes)
	placed, m := placeN(t, ctx, 3)
	if len(placed) != 2 || placed[0].Meta["rack"] == placed[1].Meta["rack"] {
		t.Fatalf("placed %d in racks %v", len(placed), placed)
	}
	if m.ConstraintFiltered["${meta.rack} distinct_property "] != 4 {
		t.Fatalf("ConstraintFiltered %v", m.ConstraintFiltered)
	}
}

func TestSelectEvenSpread(t *testing.T) {
	// Three racks with 2, 3 and 5 nodes; 9 allocs must land 3 per rack.
	var nodes []*structs.Node
	for i, size := range []int{2, 3, 5} {
		for range size {
			nodes = append(nodes, mock.Node(mock.Unreserved(), mock.Meta("rack", fmt.Sprintf("r%d", i))))
		}
	}
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Count = 9
	job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 50}}
	ctx := newTestContext(t, job, nodes)
	placed, m := placeN(t, ctx, 9)
	if m != nil {
		t.Fatalf("placement failed: %+v", m)
	}
	perRack := map[string]int{}
	for k, n := range placed {
		perRack[n.Meta["rack"]]++
		// After every placement the racks stay within one of each other.
		lo, hi := 1<<30, 0
		for _, r := range []string{"r0", "r1", "r2"} {
			lo, hi = min(lo, perRack[r]), max(hi, perRack[r])
		}
		if hi-lo > 1 {
			t.Fatalf("after %d placements racks are %v", k+1, perRack)
		}
	}
}

func TestSelectTargetedSpread(t *testing.T) {
	// 70% in dc1, 30% in dc2, over 10 allocs.
	var nodes []*structs.Node
	for i := range 10 {
		nodes = append(nodes, mock.Node(mock.Unreserved(), mock.Datacenter(fmt.Sprintf("dc%d", i%2+1))))
	}
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.Datacenters = []string{"dc1", "dc2"}
	job.Spreads = []*structs.Spread{{Attribute: "${node.datacenter}", Weight: 100, SpreadTarget: []*structs.SpreadTarget{
		{Value: "dc1", Percent: 70}, {Value: "dc2", Percent: 30},
	}}}
	ctx := newTestContext(t, job, nodes)
	placed, m := placeN(t, ctx, 10)
	if m != nil {
		t.Fatalf("placement failed")
	}
	perDC := map[string]int{}
	for _, n := range placed {
		perDC[n.Datacenter]++
	}
	if perDC["dc1"] != 7 || perDC["dc2"] != 3 {
		t.Fatalf("per dc %v, want dc1=7 dc2=3", perDC)
	}
}

func TestSelectAffinityFindsRareNode(t *testing.T) {
	// One node in 200 matches the affinity; the limit (8) is far smaller
	// than the cluster, yet the matching node is always looked at first.
	var nodes []*structs.Node
	for i := range 200 {
		opts := []mock.NodeOption{mock.Unreserved()}
		if i == 137 {
			opts = append(opts, mock.Meta("ssd", "true"))
		}
		nodes = append(nodes, mock.Node(opts...))
	}
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.Affinities = []*structs.Affinity{{LTarget: "${meta.ssd}", RTarget: "true", Operand: "=", Weight: 100}}
	ctx := newTestContext(t, job, nodes)
	placed, _ := placeN(t, ctx, 1)
	if placed[0].Meta["ssd"] != "true" {
		t.Fatal("affinity node not chosen")
	}
}

func TestSelectPenaltyAvoidsNode(t *testing.T) {
	nodes := []*structs.Node{mock.Node(mock.Unreserved()), mock.Node(mock.Unreserved())}
	job := mock.Job(mock.Count(10), mock.NoPorts())
	ctx := newTestContext(t, job, nodes)
	s := ctx.selector(job.TaskGroups[0])
	for _, bad := range nodes {
		sel, m := s.selectNode(selectOptions{preferred: -1, penaltyNodes: map[string]bool{bad.ID: true}})
		if sel == nil || sel.node.ID == bad.ID {
			t.Fatalf("penalized node chosen")
		}
		if len(m.ScoreMetaData) != 2 {
			t.Fatalf("want both nodes in ScoreMetaData, got %d", len(m.ScoreMetaData))
		}
		if m.ScoreMetaData[1].Scores.Map()[scorerPenalty] != -1 || m.ScoreMetaData[1].NodeID != bad.ID {
			t.Fatalf("penalized node should rank last with penalty -1: %+v", m.ScoreMetaData[1])
		}
	}
}

func TestSelectRevivesNodeOnStop(t *testing.T) {
	// One node that fits one alloc: after it is full, stopping the
	// existing alloc makes room again.
	node := mock.Node(mock.Unreserved(), mock.CPUShares(1000))
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Tasks[0].Resources.CPU = 800
	existing := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node), mock.ClientStatus(structs.AllocClientStatusRunning))
	ctx := newTestContext(t, job, []*structs.Node{node}, existing)
	s := ctx.selector(job.TaskGroups[0])
	if sel, m := s.selectNode(selectOptions{preferred: -1}); sel != nil || m.DimensionExhausted["cpu"] != 1 {
		t.Fatalf("node should be full: %v", m.DimensionExhausted)
	}
	ctx.stop(existing, structs.AllocNotNeeded, "", "")
	sel, _ := s.selectNode(selectOptions{preferred: -1})
	if sel == nil {
		t.Fatal("stop did not free the node")
	}
	ctx.unstop(existing)
	if s.exhausted.count != 0 || s.status[0] != statusLive {
		t.Fatalf("tallies not restored: %+v", s.exhausted)
	}
}

func TestSelectPortsAndCores(t *testing.T) {
	node := mock.Node(mock.Unreserved(), mock.Cores(4), mock.CPUShares(4000), mock.ReservedPorts("8080"))
	job := mock.Job(mock.Count(10), mock.NoPorts())
	tg := job.TaskGroups[0]
	tg.Networks = structs.Networks{{Mode: "host", ReservedPorts: []structs.Port{{Label: "http", Value: 9090}},
		DynamicPorts: []structs.Port{{Label: "rpc", To: -1}}}}
	tg.Tasks[0].Resources = &structs.Resources{Cores: 2, MemoryMB: 256}
	ctx := newTestContext(t, job, []*structs.Node{node})
	s := ctx.selector(tg)
	sel, _ := s.selectNode(selectOptions{preferred: -1})
	if sel == nil {
		t.Fatal("no placement")
	}
	res := sel.resources
	if got := res.Tasks["web"].Cpu.ReservedCores; len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("cores %v", got)
	}
	if res.Tasks["web"].Cpu.CpuShares != 2000 { // 2 cores x 1000 MHz
		t.Fatalf("cpu %d", res.Tasks["web"].Cpu.CpuShares)
	}
	if p, ok := res.Shared.Ports.Get("http"); !ok || p.Value != 9090 {
		t.Fatalf("ports %v", res.Shared.Ports)
	}
	ctx.place(&structs.Allocation{ID: "a1", JobID: job.ID, Namespace: job.Namespace, TaskGroup: tg.Name,
		NodeID: node.ID, AllocatedResources: res, DesiredStatus: "run", ClientStatus: "pending"}, sel.index)
	// A second alloc gets the two remaining cores but not port 9090.
	sel, m := s.selectNode(selectOptions{preferred: -1})
	if sel != nil {
		t.Fatal("port 9090 is taken")
	}
	for dim := range m.DimensionExhausted {
		if dim[:8] != "network:" {
			t.Fatalf("dimension %q", dim)
		}
	}
}

func TestSelectCoresWithoutReservableList(t *testing.T) {
	// A client that lists no reservable cores offers 0..TotalCpuCores-1,
	// minus the ones the operator reserved.
	n := mock.Node(mock.Unreserved(), mock.Cores(4))
	n.NodeResources.Cpu.ReservableCpuCores = nil
	n.ReservedResources.Cpu.ReservedCpuCores = []uint16{0}
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.TaskGroups[0].Tasks[0].Resources = &structs.Resources{Cores: 3, MemoryMB: 128}
	ctx := newTestContext(t, job, []*structs.Node{n})
	sel, _ := ctx.selector(job.TaskGroups[0]).selectNode(selectOptions{preferred: -1})
	if sel == nil {
		t.Fatal("three of the four cores are free")
	}
	if got := sel.resources.Tasks["web"].Cpu.ReservedCores; len(got) != 3 || got[0] != 1 {
		t.Fatalf("cores %v", got)
	}
}

func TestNodesAvailableNamesEmptyDatacenters(t *testing.T) {
	// Two nodes in dc1. The job asks for dc1, a misspelt "dc-2" and every
	// "east-*": dc1 counts 2, the literal dc-2 counts 0 so the failure can
	// say nothing is there, and the pattern names no datacenter.
	nodes := []*structs.Node{mock.Node(mock.Unreserved()), mock.Node(mock.Unreserved())}
	job := mock.Job(mock.Count(10), mock.NoPorts())
	job.Datacenters = []string{"dc1", "dc-2", "east-*"}
	job.TaskGroups[0].Tasks[0].Resources.CPU = 1 << 20 // fits nowhere: the failure metric is kept
	ctx := newTestContext(t, job, nodes)

	_, m := placeN(t, ctx, 1)
	want := map[string]int{"dc1": 2, "dc-2": 0}
	if len(m.NodesAvailable) != len(want) || m.NodesAvailable["dc1"] != 2 || m.NodesAvailable["dc-2"] != 0 {
		t.Errorf("NodesAvailable = %v, want %v", m.NodesAvailable, want)
	}
}
