package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opennomad/nomad/api"
)

// Explaining why the scheduler could not place a task group is the most
// important thing the CLI prints. The scheduler records, per group, how it
// went through the nodes (api.AllocationMetric); these functions turn that
// into one line per reason, in the order a reader should look at them:
// where there were no nodes at all, what filtered nodes out, what was
// exhausted on the rest, and then a verdict that says in plain words which
// of those stopped the placement.
//
// The bullet lines keep Nomad's wording so scripts that grep for them keep
// working; counts are pluralized properly.

// formatFailedGroups renders every failed group of an evaluation or plan,
// sorted by group name, each as a header line and its indented reasons.
func formatFailedGroups(failed map[string]*api.AllocationMetric, indent string) []string {
	names := make([]string, 0, len(failed))
	for tg := range failed {
		names = append(names, tg)
	}
	sort.Strings(names)
	var out []string
	for _, tg := range names {
		out = append(out, indent+failedGroupHeader(tg, failed[tg]))
		for _, l := range explainMetric(failed[tg]) {
			out = append(out, indent+"  "+l)
		}
	}
	return out
}

// failedGroupHeader is `Task Group "web" (failed to place 3 allocations):`;
// CoalescedFailures counts the identical failures folded into this one.
func failedGroupHeader(tg string, m *api.AllocationMetric) string {
	n := 1
	if m != nil {
		n += m.CoalescedFailures
	}
	return fmt.Sprintf("Task Group %q (failed to place %s):", tg, plural(n, "allocation"))
}

// explainMetric returns the reasons one placement failed, as bullet lines.
func explainMetric(m *api.AllocationMetric) []string {
	if m == nil {
		return []string{"* The scheduler did not say why (no placement metrics)"}
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, "* "+fmt.Sprintf(format, args...)) }

	// Where the search started: the pool and the datacenters' ready nodes.
	for _, dc := range sortedKeys(m.NodesAvailable) {
		if m.NodesAvailable[dc] == 0 {
			add("No nodes are available in datacenter %q", dc)
		}
	}
	if m.NodesEvaluated == 0 {
		if m.NodePool != "" && m.NodesInPool == 0 {
			add("Node pool %q has no nodes", m.NodePool)
		}
		add("No nodes were eligible for evaluation")
	}

	// Filters: node classes, then individual constraints.
	for _, class := range sortedKeys(m.ClassFiltered) {
		add("Class %q: %s excluded by filter", class, plural(m.ClassFiltered[class], "node"))
	}
	for _, c := range sortedByCount(m.ConstraintFiltered) {
		add("Constraint %q: %s excluded by filter", c, plural(m.ConstraintFiltered[c], "node"))
	}

	// Capacity: nodes that passed the filters but had no room.
	if m.NodesExhausted > 0 {
		add("Resources exhausted on %s", plural(m.NodesExhausted, "node"))
	}
	for _, class := range sortedKeys(m.ClassExhausted) {
		add("Class %q exhausted on %s", class, plural(m.ClassExhausted[class], "node"))
	}
	for _, dim := range sortedByCount(m.DimensionExhausted) {
		add("Dimension %q exhausted on %s", dim, plural(m.DimensionExhausted[dim], "node"))
	}
	for _, q := range m.QuotaExhausted {
		add("Quota limit hit %q", q)
	}
	for _, task := range sortedKeys(m.ResourcesExhausted) {
		if ask := describeAsk(m.ResourcesExhausted[task]); ask != "" {
			add("Task %q asks for %s", task, ask)
		}
	}
	for _, c := range m.ClosestNodes {
		add("Closest: node %q lacked %s", c.NodeName, describeShortfall(c))
	}

	if v := verdict(m); v != "" {
		out = append(out, "Why: "+v)
	}
	return out
}

// describeShortfall lists what a node lacked: "200 MHz CPU, 512 MB memory".
func describeShortfall(s *api.NodeShortfall) string {
	var parts []string
	if s.CPU > 0 {
		parts = append(parts, fmt.Sprintf("%d MHz CPU", s.CPU))
	}
	if s.MemoryMB > 0 {
		parts = append(parts, fmt.Sprintf("%d MB memory", s.MemoryMB))
	}
	if s.DiskMB > 0 {
		parts = append(parts, fmt.Sprintf("%d MB disk", s.DiskMB))
	}
	return strings.Join(parts, ", ")
}

// verdict says in one sentence which stage stopped the placement and what
// would unblock it. It stays silent when the numbers do not tell a single
// story (for example when some nodes were neither filtered nor exhausted).
func verdict(m *api.AllocationMetric) string {
	switch {
	case len(m.QuotaExhausted) > 0:
		return "The namespace's quota is used up; raise the quota or stop other work in the namespace."
	case m.NodesEvaluated == 0:
		where := "the job's datacenters"
		if m.NodePool != "" {
			where = fmt.Sprintf("node pool %q in the job's datacenters", m.NodePool)
		}
		return fmt.Sprintf("No ready, eligible node exists in %s; start a client there, "+
			"or check the nodes' status, eligibility and drain (nomad node status).", where)
	case m.NodesFiltered == m.NodesEvaluated:
		which := fmt.Sprintf("All %d nodes evaluated were", m.NodesEvaluated)
		if m.NodesEvaluated == 1 {
			which = "The only node evaluated was"
		}
		return which + " excluded by the constraints above; relax them or add nodes that satisfy them."
	case m.NodesFiltered+m.NodesExhausted == m.NodesEvaluated && m.NodesExhausted > 0:
		dims := sortedByCount(m.DimensionExhausted)
		what := "free resources"
		if len(dims) > 0 {
			what = "free " + strings.Join(dims, ", ")
		}
		passed := m.NodesEvaluated - m.NodesFiltered
		return fmt.Sprintf("%s passed the filters but none had enough %s; "+
			"free capacity, lower the group's resources, or add nodes.",
			capitalize(plural(passed, "node")), what)
	}
	return ""
}

// describeAsk renders a task's resource ask: "cpu 500 MHz, memory 4096 MB".
func describeAsk(r *api.Resources) string {
	if r == nil {
		return ""
	}
	var parts []string
	if r.CPU != nil && *r.CPU > 0 {
		parts = append(parts, fmt.Sprintf("cpu %d MHz", *r.CPU))
	}
	if r.Cores != nil && *r.Cores > 0 {
		parts = append(parts, fmt.Sprintf("cores %d", *r.Cores))
	}
	if r.MemoryMB != nil && *r.MemoryMB > 0 {
		parts = append(parts, fmt.Sprintf("memory %d MB", *r.MemoryMB))
	}
	if r.DiskMB != nil && *r.DiskMB > 0 {
		parts = append(parts, fmt.Sprintf("disk %d MB", *r.DiskMB))
	}
	return strings.Join(parts, ", ")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sortedByCount orders reasons by how many nodes they cost, most first, so
// the biggest obstacle is read first; ties are alphabetical.
func sortedByCount(m map[string]int) []string {
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}
