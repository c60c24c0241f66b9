package scheduler

import (
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestCandidateSet_UsageIsPerPass: a usage slot loaded in one pass is not
// loaded in the next pass over the same Scratch, even on a cluster of
// another size; loading it again reads the new pass's state, and each
// node's slot holds its own node's capacity.
func TestCandidateSet_UsageIsPerPass(t *testing.T) {
	sc := &Scratch{}
	for pass, n := range []int{5, 3, 8} {
		nodes := make([]*structs.Node, n)
		for i := range nodes {
			nodes[i] = mock.Node(mock.NodeResources(int64(1000*(pass+1)+i), 4096))
		}
		job := mock.Job(mock.Count(1))
		h := NewHarness(t)
		h.UpsertNode(nodes...)
		h.UpsertJob(job)
		eval := mock.Eval(mock.EvalForJob(job), mock.TriggeredBy(structs.EvalTriggerJobRegister))
		ctx, err := newEvalContext(h.Snapshot(), eval.MakePlan(job), eval, job, &Config{Scratch: sc}, rand.New(rand.NewSource(1)))
		if err != nil {
			t.Fatal(err)
		}
		if ctx.cands, err = newCandidateSet(ctx, job, true); err != nil {
			t.Fatal(err)
		}
		cs := ctx.cands
		if len(cs.nodes) != n {
			t.Fatalf("pass %d: %d candidates, want %d", pass, len(cs.nodes), n)
		}
		for i := range cs.nodes {
			if cs.usageOf(int32(i)) != nil {
				t.Fatalf("pass %d: node %d loaded before it was read", pass, i)
			}
			u := cs.load(ctx, int32(i))
			if want := cs.nodes[i].Comparable().Flattened.Cpu.CpuShares; u.capCPU != want {
				t.Fatalf("pass %d: node %d: capacity %d, want %d", pass, i, u.capCPU, want)
			}
		}
	}
}

// TestScratch_WrappedGenerationClearsSlots: when the pass counter wraps,
// slots loaded long ago must not pass for loaded.
func TestScratch_WrappedGenerationClearsSlots(t *testing.T) {
	sc := &Scratch{usage: make([]nodeUsage, 2), usageGen: ^uint32(0)}
	sc.usage[0].gen = 1
	sc.startPass()
	if sc.usageGen != 1 || sc.usage[0].gen != 0 {
		t.Fatalf("after wrap: generation %d, slot generation %d", sc.usageGen, sc.usage[0].gen)
	}
}

// TestStateNodesSortedByID holds the store's scheduler view to the State
// contract the candidate shuffle relies on: nodes come sorted by ID,
// however they were written.
func TestStateNodesSortedByID(t *testing.T) {
	h := NewHarness(t)
	for _, i := range rand.New(rand.NewSource(7)).Perm(50) {
		h.UpsertNode(mock.Node(mock.NodeID(mock.IDFor(uint64(i)))))
	}
	nodes, err := h.Snapshot().Nodes()
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 50 || !slices.IsSortedFunc(nodes, func(a, b *structs.Node) int { return strings.Compare(a.ID, b.ID) }) {
		t.Fatalf("%d nodes, sorted by ID: false", len(nodes))
	}
}

// TestCandidateSet_Index: a node's position is the same whether the pass
// finds it by search (its first lookups) or by the map it builds after
// indexScanLookups; nodes that are not candidates, or not in state, are
// not found either way.
func TestCandidateSet_Index(t *testing.T) {
	var nodes []*structs.Node
	for i := range 30 {
		nodes = append(nodes, mock.Node(mock.NodeID(mock.IDFor(uint64(100+i)))))
	}
	nodes[3].Status = structs.NodeStatusDown
	nodes[7].SchedulingEligibility = structs.NodeSchedulingIneligible
	ctx := newTestContext(t, mock.Job(mock.Count(1)), nodes)
	cs := ctx.cands
	want := map[string]int32{}
	for i, n := range cs.nodes {
		want[n.ID] = int32(i)
	}
	ids := []string{nodes[3].ID, nodes[7].ID}
	for _, n := range nodes {
		ids = append(ids, n.ID)
	}
	ids = append(ids, mock.IDFor(999)) // in no state at all
	for round, id := range ids {
		i, ok := cs.index(id)
		w, candidate := want[id]
		if ok != candidate || (ok && i != w) {
			t.Fatalf("lookup %d (map built: %v): node %s at %d, %v; want %d, %v", round, cs.byIDBuilt, id, i, ok, w, candidate)
		}
	}
	if !cs.byIDBuilt {
		t.Fatal("the map was never built")
	}
}

// TestClassCache: the cache answers only for the very instance of a
// class string it was given, never for an equal string held apart or
// for the empty class, so a miss falls back to the map's answer.
func TestClassCache(t *testing.T) {
	var c classCache
	class := "v1:123"
	apart := strings.Clone(class)
	c.put(class, 7)
	c.put("", 9)
	cases := []struct {
		name   string
		class  string
		id     int32
		cached bool
	}{
		{"the instance put", class, 7, true},
		{"an equal string apart", apart, 0, false},
		{"the empty class", "", 0, false},
	}
	for _, tc := range cases {
		id, ok := c.get(tc.class)
		if ok != tc.cached || (ok && id != tc.id) {
			t.Errorf("%s: got %d, %v; want %d, %v", tc.name, id, ok, tc.id, tc.cached)
		}
	}
}
