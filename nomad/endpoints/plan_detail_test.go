package endpoints

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
)

// TestResultDetail: the timeline says what a plan committed, and when
// the leader wrote the eval's outcome with it.
func TestResultDetail(t *testing.T) {
	plan := &structs.Plan{NodeAllocation: map[string][]*structs.Allocation{"n1": {{ID: "a1"}}, "n2": {{ID: "a2"}}}}
	cases := []struct {
		name   string
		result *structs.PlanResult
		want   string
	}{
		{name: "nothing", result: &structs.PlanResult{}, want: "nothing to commit"},
		{name: "refresh", result: &structs.PlanResult{RefreshIndex: 7}, want: "nothing committed; the worker must plan again from index 7"},
		{name: "whole", result: &structs.PlanResult{NodeAllocation: plan.NodeAllocation, AllocIndex: 9},
			want: "committed at index 9: 2 placements"},
		{name: "whole, with the eval", result: &structs.PlanResult{NodeAllocation: plan.NodeAllocation, AllocIndex: 9, EvalWritten: true},
			want: "committed at index 9: 2 placements, and the eval's outcome"},
		{name: "part", result: &structs.PlanResult{NodeAllocation: map[string][]*structs.Allocation{"n1": plan.NodeAllocation["n1"]},
			RejectedNodes: []string{"n2"}, RefreshIndex: 9, AllocIndex: 9},
			want: "committed at index 9: 1 of 2 placements (1 nodes refused)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			must.Eq(t, c.want, resultDetail(plan, c.result))
		})
	}
}
