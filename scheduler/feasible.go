package scheduler

import (
	"slices"
	"strconv"

	"github.com/opennomad/nomad/structs"
)

// Filter reasons that are not a constraint's text.
const (
	reasonMissingDrivers = "missing drivers"
	reasonDistinctHosts  = structs.ConstraintDistinctHosts
)

// check is one static feasibility test: a constraint, or the presence of
// a healthy driver. Static means its answer depends on the node alone,
// never on other placements.
type check struct {
	constraint compiledConstraint
	driver     string // set for a driver check
	// volumes, when set, are host volumes every alloc of the group needs.
	volumes []*structs.VolumeRequest
}

func (c *check) holds(n *structs.Node) bool {
	switch {
	case c.volumes != nil:
		return hostVolumesFit(n, c.volumes, 0)
	case c.driver != "":
		return n.HasDriver(c.driver)
	}
	return c.constraint.holds(n)
}

func (c *check) reason() string {
	switch {
	case c.volumes != nil:
		return reasonMissingHostVolumes
	case c.driver != "":
		return reasonMissingDrivers
	}
	return c.constraint.text
}

// checkList splits checks into those that can be answered once per
// computed node class and those that read unique.* values and must be
// answered per node.
type checkList struct {
	perClass []check
	perNode  []check
}

func (l *checkList) add(c check) {
	// Host volumes are not part of the computed class: each node is
	// asked.
	if c.volumes != nil || (c.driver == "" && c.constraint.escapes) {
		l.perNode = append(l.perNode, c)
	} else {
		l.perClass = append(l.perClass, c)
	}
}

func (l *checkList) escapes() bool { return len(l.perNode) > 0 }

// firstFailure returns the reason of the first check in checks the node
// fails, or "" when it passes them all.
func firstFailure(checks []check, n *structs.Node) string {
	for i := range checks {
		if !checks[i].holds(n) {
			return checks[i].reason()
		}
	}
	return ""
}

// constraintChecks compiles value constraints, leaving out the
// placement-dependent operators.
func constraintChecks(l *checkList, cs []*structs.Constraint) {
	for _, c := range cs {
		if c.Operand == structs.ConstraintDistinctHosts || c.Operand == structs.ConstraintDistinctProperty {
			continue
		}
		l.add(check{constraint: compileConstraint(c)})
	}
}

// jobChecks are the job-level constraints.
func jobChecks(job *structs.Job) checkList {
	var l checkList
	constraintChecks(&l, job.Constraints)
	return l
}

// groupChecks are the group's drivers, then its constraints and those of
// its tasks.
func groupChecks(tg *structs.TaskGroup) checkList {
	var l checkList
	var drivers []string
	for _, t := range tg.Tasks {
		if t.Driver != "" && !slices.Contains(drivers, t.Driver) {
			drivers = append(drivers, t.Driver)
		}
	}
	for _, d := range drivers {
		l.add(check{driver: d})
	}
	constraintChecks(&l, tg.Constraints)
	for _, t := range tg.Tasks {
		constraintChecks(&l, t.Constraints)
	}
	if shared, _ := splitHostVolumes(tg); len(shared) > 0 {
		l.add(check{volumes: shared})
	}
	return l
}

// classVerdict caches the answer of a checkList's per-class part.
type classVerdict struct {
	known  bool
	reason string // "" when the class passes
}

// feasibility answers "may this group run on this node" for the static
// checks, caching per computed class. One is kept per eval for the job
// level and one per group.
type feasibility struct {
	checks  checkList
	byClass []classVerdict // indexed by candidateSet class id
}

func newFeasibility(checks checkList, classes int) *feasibility {
	return &feasibility{checks: checks, byClass: make([]classVerdict, classes)}
}

// failure returns why node i of cs is infeasible, or "", and whether the
// answer holds for the node's whole computed class.
func (f *feasibility) failure(cs *candidateSet, i int32) (reason string, perClass bool) {
	n := cs.nodes[i]
	if r := f.classFailure(cs.classOf[i], n); r != "" {
		return r, true
	}
	return firstFailure(f.checks.perNode, n), false
}

// classFailure returns the per-class verdict of class id, answering it
// for node n of the class when it is not known yet.
func (f *feasibility) classFailure(id int32, n *structs.Node) string {
	v := &f.byClass[id]
	if !v.known {
		v.reason = firstFailure(f.checks.perClass, n)
		v.known = true
	}
	return v.reason
}

// classReason is the cached class-level failure of class id, or "".
func (f *feasibility) classReason(id int32) string { return f.byClass[id].reason }

// classEligibility merges what the job- and group-level caches learned
// into Evaluation.ClassEligibility: a class is eligible when the job's
// constraints pass and at least one group's do. Classes never looked at
// are left out, so the blocked-eval tracker treats them as unknown.
func classEligibility(cs *candidateSet, job *feasibility, groups []*feasibility) map[string]bool {
	out := map[string]bool{}
	for id, name := range cs.classes {
		if name == "" || !job.byClass[id].known {
			continue
		}
		if job.byClass[id].reason != "" {
			out[name] = false
			continue
		}
		seen := false
		eligible := false
		for _, g := range groups {
			if g.byClass[id].known {
				seen = true
				eligible = eligible || g.byClass[id].reason == ""
			}
		}
		if seen {
			out[name] = eligible
		}
	}
	return out
}

// distinctProperty enforces a distinct_property constraint: at most limit
// proposed allocs (of the job, or of one group) per value of a property.
type distinctProperty struct {
	attr  target
	limit int
	text  string
	// group limits the count to one group; "" counts the whole job.
	group  string
	counts map[string]int
}

func newDistinctProperty(c *structs.Constraint, group string) *distinctProperty {
	limit := 1
	if c.RTarget != "" {
		if l, err := strconv.Atoi(c.RTarget); err == nil && l > 0 {
			limit = l
		}
	}
	return &distinctProperty{
		attr:   parseTarget(c.LTarget),
		limit:  limit,
		text:   c.String(),
		group:  group,
		counts: map[string]int{},
	}
}

// covers reports whether alloc is counted by this constraint.
func (d *distinctProperty) covers(a *structs.Allocation) bool {
	return d.group == "" || a.TaskGroup == d.group
}

// note adds (delta 1) or removes (-1) an alloc on node n.
func (d *distinctProperty) note(n *structs.Node, a *structs.Allocation, delta int) {
	if n == nil || !d.covers(a) {
		return
	}
	if v, ok := d.attr.resolve(n); ok {
		d.counts[v] += delta
	}
}

// failure returns why another alloc may not go on n, or "". A node
// without the property fails too: it cannot prove it is distinct.
func (d *distinctProperty) failure(n *structs.Node) string {
	v, ok := d.attr.resolve(n)
	if !ok || d.counts[v] >= d.limit {
		return d.text
	}
	return ""
}
