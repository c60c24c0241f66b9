package command

import (
	"strings"
	"testing"

	"github.com/opennomad/nomad/api"
)

func TestExplainMetric(t *testing.T) {
	cases := []struct {
		name string
		m    *api.AllocationMetric
		want []string
	}{
		{
			name: "no metrics at all",
			m:    nil,
			want: []string{"* The scheduler did not say why (no placement metrics)"},
		},
		{
			// dc2 has 0 ready nodes and dc1 has 2, but none was evaluated:
			// they are in another pool.
			name: "datacenters without nodes",
			m:    &api.AllocationMetric{NodesAvailable: map[string]int{"dc1": 2, "dc2": 0}, NodePool: "gpu", NodesInPool: 0},
			want: []string{
				`* No nodes are available in datacenter "dc2"`,
				`* Node pool "gpu" has no nodes`,
				"* No nodes were eligible for evaluation",
				`Why: No ready, eligible node exists in node pool "gpu" in the job's datacenters; start a client there, or check the nodes' status, eligibility and drain (nomad node status).`,
			},
		},
		{
			// 4 evaluated = 4 filtered (3 by kernel, 1 by class): a
			// constraint problem, not a capacity one.
			name: "all filtered",
			m: &api.AllocationMetric{NodesEvaluated: 4, NodesFiltered: 4,
				ClassFiltered: map[string]int{"arm": 1}, ConstraintFiltered: map[string]int{"${attr.kernel.name} = windows": 3}},
			want: []string{
				`* Class "arm": 1 node excluded by filter`,
				`* Constraint "${attr.kernel.name} = windows": 3 nodes excluded by filter`,
				"Why: All 4 nodes evaluated were excluded by the constraints above; relax them or add nodes that satisfy them.",
			},
		},
		{
			// 5 evaluated = 2 filtered + 3 exhausted: capacity. Dimensions
			// are listed most-hit first (disk 3, memory 1).
			name: "filtered and exhausted",
			m: &api.AllocationMetric{NodesEvaluated: 5, NodesFiltered: 2, NodesExhausted: 3,
				ConstraintFiltered: map[string]int{"missing drivers": 2},
				DimensionExhausted: map[string]int{"memory": 1, "disk": 3}},
			want: []string{
				`* Constraint "missing drivers": 2 nodes excluded by filter`,
				"* Resources exhausted on 3 nodes",
				`* Dimension "disk" exhausted on 3 nodes`,
				`* Dimension "memory" exhausted on 1 node`,
				"Why: 3 nodes passed the filters but none had enough free disk, memory; free capacity, lower the group's resources, or add nodes.",
			},
		},
		{
			// 6 evaluated but only 2 filtered + 3 exhausted: one node is
			// unaccounted for, so no single verdict is given.
			name: "numbers that do not add up get no verdict",
			m:    &api.AllocationMetric{NodesEvaluated: 6, NodesFiltered: 2, NodesExhausted: 3},
			want: []string{"* Resources exhausted on 3 nodes"},
		},
		{
			name: "quota",
			m:    &api.AllocationMetric{NodesEvaluated: 1, NodesExhausted: 1, QuotaExhausted: []string{"memory exhausted (2048 needed > 1024 limit)"}},
			want: []string{
				"* Resources exhausted on 1 node",
				`* Quota limit hit "memory exhausted (2048 needed > 1024 limit)"`,
				"Why: The namespace's quota is used up; raise the quota or stop other work in the namespace.",
			},
		},
		{
			name: "exhausted without a dimension and the task's ask",
			m: &api.AllocationMetric{NodesEvaluated: 1, NodesExhausted: 1,
				ResourcesExhausted: map[string]*api.Resources{"db": {Cores: new(2), DiskMB: new(100)}, "web": {}}},
			want: []string{
				"* Resources exhausted on 1 node",
				`* Task "db" asks for cores 2, disk 100 MB`,
				"Why: 1 node passed the filters but none had enough free resources; free capacity, lower the group's resources, or add nodes.",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := explainMetric(tc.m)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestFormatFailedGroupsSortsGroupsAndCountsCoalesced(t *testing.T) {
	got := formatFailedGroups(map[string]*api.AllocationMetric{
		"web": {NodesEvaluated: 1, NodesExhausted: 1, CoalescedFailures: 4},
		"api": {NodesEvaluated: 1, NodesFiltered: 1},
	}, "  ")
	want := `  Task Group "api" (failed to place 1 allocation):
    Why: The only node evaluated was excluded by the constraints above; relax them or add nodes that satisfy them.
  Task Group "web" (failed to place 5 allocations):
    * Resources exhausted on 1 node
    Why: 1 node passed the filters but none had enough free resources; free capacity, lower the group's resources, or add nodes.`
	if strings.Join(got, "\n") != want {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}
