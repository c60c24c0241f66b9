package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// TestScratch_ReuseChangesNoDecision runs a worker's life on one Scratch:
// jobs with spread, affinity and distinct_hosts, updates of placed jobs,
// a system job, and a cluster that grows, loses nodes and shrinks in
// between. Every eval is first planned with fresh memory on the same
// snapshot; the plan made with the reused memory must place and stop the
// same allocs on the same nodes and explain failures alike.
func TestScratch_ReuseChangesNoDecision(t *testing.T) {
	h := NewHarness(t)
	var nodes []*structs.Node
	addNodes := func(n int) {
		for range n {
			i := len(nodes)
			nodes = append(nodes, mock.Node(mock.Unreserved(), mock.NodeResources(4000, 8192),
				mock.NodeClass(fmt.Sprintf("c%d", i%3)), mock.Meta("rack", fmt.Sprintf("r%d", i%4))))
			h.UpsertNode(nodes[i])
		}
	}
	spread := mock.Job(mock.Count(6), mock.NoPorts())
	spread.Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 50}}
	affinity := mock.Job(mock.Count(4), mock.NoPorts())
	affinity.Affinities = []*structs.Affinity{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "=", Weight: 50}}
	distinct := mock.Job(mock.Count(5), mock.NoPorts())
	distinct.Constraints = append(distinct.Constraints, &structs.Constraint{Operand: structs.ConstraintDistinctHosts})
	big := mock.Job(mock.Count(3), mock.NoPorts(), mock.TaskResources(3500, 1024))
	one := mock.Job(mock.Count(1), mock.NoPorts())
	system := mock.SystemJob(mock.GroupName("agent"))

	steps := []struct {
		name   string
		before func()
		job    *structs.Job
	}{
		{"spread on 12 nodes", func() { addNodes(12) }, spread},
		{"affinity", nil, affinity},
		{"distinct hosts", nil, distinct},
		{"one alloc", nil, one},
		{"system job", nil, system},
		{"cluster grows to 40", func() { addNodes(28) }, big},
		{"spread scaled up", func() { spread.TaskGroups[0].Count = 10 }, spread},
		{"nodes lost", func() {
			for _, n := range nodes[:20] {
				h.SetNodeStatus(n.ID, structs.NodeStatusDown)
			}
		}, distinct},
		{"one more alloc on fewer nodes", nil, one},
		{"allocs left on draining nodes", func() {
			for _, a := range h.liveAllocs(spread)[:4] {
				if n, _ := h.Snapshot().NodeByID(a.NodeID); n.Ready() {
					h.DrainNode(a.NodeID)
				}
			}
			spread.TaskGroups[0].Count = 14
		}, spread},
		{"big job does not fit", func() { big.TaskGroups[0].Count = 30 }, big},
		{"affinity scaled up", func() { affinity.TaskGroups[0].Count = 9 }, affinity},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		h.UpsertJob(st.job)
		eval := mock.Eval(mock.EvalForJob(st.job), mock.TriggeredBy(structs.EvalTriggerJobRegister))
		h.UpsertEvals(eval)

		fresh := &recordingPlanner{}
		cfg := h.Config()
		cfg.Scratch = nil
		s, err := NewScheduler(eval.Type, cfg, h.Snapshot(), fresh)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Process(eval.Copy()); err != nil {
			t.Fatalf("%s: fresh memory: %v", st.name, err)
		}
		plans := len(h.Plans)
		if err := h.Process(eval); err != nil {
			t.Fatalf("%s: reused memory: %v", st.name, err)
		}
		var reused *structs.Plan
		if len(h.Plans) > plans {
			reused = h.Plans[len(h.Plans)-1]
		}
		if got, want := planDecisions(reused), planDecisions(fresh.plan); !slices.Equal(got, want) {
			t.Fatalf("%s: reused memory decided\n%v\nfresh memory\n%v", st.name, got, want)
		}
		freshEval := fresh.updated
		if freshEval == nil && fresh.plan != nil {
			freshEval = fresh.plan.Eval
		}
		if got, want := failureDecisions(h.lastEval(t)), failureDecisions(freshEval); got != want {
			t.Fatalf("%s: reused memory failed\n%s\nfresh memory\n%s", st.name, got, want)
		}
	}
}

// planDecisions lists a plan's placements by alloc name and node, and its
// stops by alloc ID, sorted.
func planDecisions(p *structs.Plan) []string {
	if p == nil {
		return nil
	}
	var out []string
	for node, as := range p.NodeAllocation {
		for _, a := range as {
			out = append(out, "place "+a.Name+" on "+node)
		}
	}
	for node, as := range p.NodeUpdate {
		for _, a := range as {
			out = append(out, "stop "+a.ID+" on "+node)
		}
	}
	slices.Sort(out)
	return out
}

// failureDecisions summarises an eval's failed placements.
func failureDecisions(e *structs.Evaluation) string {
	if e == nil {
		return ""
	}
	out := ""
	for _, g := range slices.Sorted(maps.Keys(e.FailedTGAllocs)) {
		m := e.FailedTGAllocs[g]
		out += fmt.Sprintf("%s: evaluated %d filtered %d exhausted %d coalesced %d %v %v\n", g,
			m.NodesEvaluated, m.NodesFiltered, m.NodesExhausted, m.CoalescedFailures, m.ConstraintFiltered, m.DimensionExhausted)
	}
	return out
}
