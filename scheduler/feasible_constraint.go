package scheduler

import (
	"strconv"
	"strings"

	"github.com/opennomad/nomad/structs"
)

// targetKind says where a constraint operand takes its value from.
type targetKind uint8

const (
	targetLiteral targetKind = iota
	targetNodeID
	targetNodeName
	targetNodeDC
	targetNodeClass
	targetNodePool
	targetAttr
	targetMeta
	// targetUnknown is an interpolation no node can resolve, such as
	// "${node.bogus}"; it is never found, so the constraint decides.
	targetUnknown
)

// target is a parsed constraint operand: "${attr.kernel.name}" becomes
// {targetAttr, "kernel.name"}. Parsing once per eval keeps the per-node
// check to a map lookup.
type target struct {
	kind targetKind
	key  string // attribute or meta key, or the literal value
}

func parseTarget(s string) target {
	if !strings.HasPrefix(s, "${") || !strings.HasSuffix(s, "}") {
		return target{kind: targetLiteral, key: s}
	}
	inner := s[2 : len(s)-1]
	switch inner {
	case "node.unique.id":
		return target{kind: targetNodeID}
	case "node.unique.name":
		return target{kind: targetNodeName}
	case "node.datacenter":
		return target{kind: targetNodeDC}
	case "node.class":
		return target{kind: targetNodeClass}
	case "node.pool":
		return target{kind: targetNodePool}
	}
	if k, ok := strings.CutPrefix(inner, "attr."); ok {
		return target{kind: targetAttr, key: k}
	}
	if k, ok := strings.CutPrefix(inner, "meta."); ok {
		return target{kind: targetMeta, key: k}
	}
	return target{kind: targetUnknown, key: inner}
}

// resolve returns the operand's value on the node and whether it is set.
func (t target) resolve(n *structs.Node) (string, bool) {
	switch t.kind {
	case targetLiteral:
		return t.key, true
	case targetNodeID:
		return n.ID, true
	case targetNodeName:
		return n.Name, true
	case targetNodeDC:
		return n.Datacenter, true
	case targetNodeClass:
		return n.NodeClass, true
	case targetNodePool:
		return nodePool(n), true
	case targetAttr:
		v, ok := n.Attributes[t.key]
		return v, ok
	case targetMeta:
		v, ok := n.Meta[t.key]
		return v, ok
	}
	return "", false
}

// resolveTarget resolves an operand written as in a job file.
func resolveTarget(s string, n *structs.Node) (string, bool) {
	return parseTarget(s).resolve(n)
}

// nodePool is the node's pool; nodes registered before pools existed
// belong to the default one.
func nodePool(n *structs.Node) string {
	if n.NodePool == "" {
		return structs.NodePoolDefault
	}
	return n.NodePool
}

// checkOperator evaluates `l <op> r` for every value operator. l and r
// are the resolved operands, lok and rok whether they were set. The
// placement-dependent operators (distinct_hosts, distinct_property) are
// not decided here and always pass.
func checkOperator(op, l string, lok bool, r string, rok bool) bool {
	switch op {
	case structs.ConstraintEqual, structs.ConstraintEqualAlt, structs.ConstraintIs:
		return lok && rok && l == r
	case structs.ConstraintNotEqual, structs.ConstraintNot:
		// An unset attribute is different from any value.
		return lok != rok || l != r
	case structs.ConstraintLess, structs.ConstraintLessEqual,
		structs.ConstraintGreater, structs.ConstraintGreaterEqual:
		return lok && rok && checkOrder(op, l, r)
	case structs.ConstraintAttributeIsSet:
		return lok
	case structs.ConstraintAttributeNotSet:
		return !lok
	case structs.ConstraintVersion, structs.ConstraintSemver:
		if !lok || !rok {
			return false
		}
		ok, err := structs.CheckVersionConstraint(l, r, op == structs.ConstraintSemver)
		return err == nil && ok
	case structs.ConstraintRegex:
		if !lok || !rok {
			return false
		}
		ok, err := structs.MatchRegexp(r, l)
		return err == nil && ok
	case structs.ConstraintSetContains, structs.ConstraintSetContainsAll:
		return lok && rok && setContainsAll(l, r)
	case structs.ConstraintSetContainsAny:
		return lok && rok && setContainsAny(l, r)
	case structs.ConstraintDistinctHosts, structs.ConstraintDistinctProperty:
		return true
	}
	return false
}

// checkOrder compares as integers when both sides parse as integers, else
// as floats, else lexically, so "10" > "9" but "b" > "a".
func checkOrder(op, l, r string) bool {
	var cmp int
	if li, err := strconv.ParseInt(l, 10, 64); err == nil {
		if ri, err := strconv.ParseInt(r, 10, 64); err == nil {
			cmp = compareOrdered(li, ri)
			return orderHolds(op, cmp)
		}
	}
	if lf, err := strconv.ParseFloat(l, 64); err == nil {
		if rf, err := strconv.ParseFloat(r, 64); err == nil {
			cmp = compareOrdered(lf, rf)
			return orderHolds(op, cmp)
		}
	}
	return orderHolds(op, strings.Compare(l, r))
}

func compareOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func orderHolds(op string, cmp int) bool {
	switch op {
	case structs.ConstraintLess:
		return cmp < 0
	case structs.ConstraintLessEqual:
		return cmp <= 0
	case structs.ConstraintGreater:
		return cmp > 0
	case structs.ConstraintGreaterEqual:
		return cmp >= 0
	}
	return false
}

// setContainsAll reports whether every comma-separated item of want is an
// item of the comma-separated have. Items are trimmed of spaces.
func setContainsAll(have, want string) bool {
	for _, w := range strings.Split(want, ",") {
		if !setHas(have, strings.TrimSpace(w)) {
			return false
		}
	}
	return true
}

// setContainsAny reports whether any item of want is an item of have.
func setContainsAny(have, want string) bool {
	for _, w := range strings.Split(want, ",") {
		if setHas(have, strings.TrimSpace(w)) {
			return true
		}
	}
	return false
}

// setHas looks item up in a comma-separated list without allocating.
func setHas(list, item string) bool {
	for list != "" {
		var head string
		head, list, _ = strings.Cut(list, ",")
		if strings.TrimSpace(head) == item {
			return true
		}
	}
	return false
}

// compiledConstraint is a constraint parsed for repeated checking.
type compiledConstraint struct {
	op   string
	l, r target
	// text is the constraint as operators read it in explanations:
	// the key of AllocMetric.ConstraintFiltered.
	text string
	// escapes is set when an operand reads a unique.* value: the result
	// then differs between nodes of one computed class.
	escapes bool
}

func compileConstraint(c *structs.Constraint) compiledConstraint {
	return compiledConstraint{
		op:      c.Operand,
		l:       parseTarget(c.LTarget),
		r:       parseTarget(c.RTarget),
		text:    c.String(),
		escapes: c.EscapesComputedClass(),
	}
}

// holds reports whether the node satisfies the constraint.
func (c *compiledConstraint) holds(n *structs.Node) bool {
	l, lok := c.l.resolve(n)
	r, rok := c.r.resolve(n)
	return checkOperator(c.op, l, lok, r, rok)
}
