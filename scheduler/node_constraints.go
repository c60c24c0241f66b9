package scheduler

import "github.com/opennomad/nomad/structs"

// NodeConstraintFailure returns the text of the first constraint of cs
// node n fails, or "": the check a host volume's constraints ask of its
// node, with the scheduler's own reading of every operator.
// distinct_hosts and distinct_property compare placements and are not
// asked.
func NodeConstraintFailure(n *structs.Node, cs []*structs.Constraint) string {
	var l checkList
	constraintChecks(&l, cs)
	if r := firstFailure(l.perClass, n); r != "" {
		return r
	}
	return firstFailure(l.perNode, n)
}
