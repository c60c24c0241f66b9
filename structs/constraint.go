package structs

import (
	"fmt"
	"strconv"
	"strings"
)

// Constraint operators. The first block compares values, the last two are
// handled by dedicated iterators in the scheduler because they depend on
// other placements, not on the node alone.
const (
	ConstraintEqual           = "="
	ConstraintEqualAlt        = "=="
	ConstraintIs              = "is"
	ConstraintNotEqual        = "!="
	ConstraintNot             = "not"
	ConstraintLess            = "<"
	ConstraintLessEqual       = "<="
	ConstraintGreater         = ">"
	ConstraintGreaterEqual    = ">="
	ConstraintAttributeIsSet  = "is_set"
	ConstraintAttributeNotSet = "is_not_set"
	ConstraintRegex           = "regexp"
	ConstraintVersion         = "version"
	ConstraintSemver          = "semver"
	ConstraintSetContains     = "set_contains"
	ConstraintSetContainsAll  = "set_contains_all"
	ConstraintSetContainsAny  = "set_contains_any"

	ConstraintDistinctHosts    = "distinct_hosts"
	ConstraintDistinctProperty = "distinct_property"
)

// Constraint restricts the nodes a job, group or task may be placed on.
type Constraint struct {
	LTarget string
	RTarget string
	Operand string
}

// String is the text used as the key of AllocMetric.ConstraintFiltered, so
// operators see exactly which constraint excluded nodes.
func (c *Constraint) String() string {
	return fmt.Sprintf("%s %s %s", c.LTarget, c.Operand, c.RTarget)
}

// Equal compares two constraints by value.
func (c *Constraint) Equal(o *Constraint) bool {
	return c == o || (c != nil && o != nil && *c == *o)
}

// Validate checks the operator and that the operands it needs are present:
// every operator reads an attribute (LTarget) except distinct_hosts, and
// every comparison needs a value (RTarget).
func (c *Constraint) Validate() []error {
	var errs []error
	needsAttribute := true
	switch c.Operand {
	case ConstraintDistinctHosts:
		// `distinct_hosts = true` is the whole constraint.
		needsAttribute = false
	case ConstraintDistinctProperty:
		// RTarget, when set, is how many allocs may share a value.
		if c.RTarget != "" {
			if n, err := strconv.ParseUint(c.RTarget, 10, 64); err != nil || n == 0 {
				errs = append(errs, fmt.Errorf("distinct_property limit %q must be a whole number >= 1", c.RTarget))
			}
		}
	case ConstraintAttributeIsSet, ConstraintAttributeNotSet:
		if c.RTarget != "" {
			errs = append(errs, fmt.Errorf("operator %q takes no value, got %q", c.Operand, c.RTarget))
		}
	case ConstraintEqual, ConstraintEqualAlt, ConstraintIs, ConstraintNotEqual, ConstraintNot,
		ConstraintLess, ConstraintLessEqual, ConstraintGreater, ConstraintGreaterEqual,
		ConstraintSetContains, ConstraintSetContainsAll, ConstraintSetContainsAny:
		if c.RTarget == "" {
			errs = append(errs, fmt.Errorf("operator %q requires a value", c.Operand))
		}
	case ConstraintRegex:
		if c.RTarget == "" {
			errs = append(errs, fmt.Errorf("regexp requires a pattern"))
		} else if _, err := compileRegexp(c.RTarget); err != nil {
			errs = append(errs, fmt.Errorf("regexp %q does not compile: %w", c.RTarget, err))
		}
	case ConstraintVersion, ConstraintSemver:
		if c.RTarget == "" {
			errs = append(errs, fmt.Errorf("%s requires a version constraint", c.Operand))
		} else if _, err := ParseVersionConstraint(c.RTarget); err != nil {
			errs = append(errs, fmt.Errorf("%s constraint %q is invalid: %w", c.Operand, c.RTarget, err))
		}
	case "":
		errs = append(errs, fmt.Errorf("missing operator"))
		needsAttribute = false
	default:
		errs = append(errs, fmt.Errorf("unknown operator %q", c.Operand))
		needsAttribute = false
	}
	if needsAttribute && c.LTarget == "" {
		errs = append(errs, fmt.Errorf("operator %q requires an attribute", c.Operand))
	}
	return errs
}

// EscapesComputedClass reports whether the constraint reads a unique node
// attribute: such a constraint cannot be decided per computed class, so
// evaluations that use it must be unblocked on every capacity change.
func (c *Constraint) EscapesComputedClass() bool {
	return targetIsUnique(c.LTarget) || targetIsUnique(c.RTarget)
}

func targetIsUnique(t string) bool {
	return strings.HasPrefix(t, "${unique.") || strings.HasPrefix(t, "${node.unique.") ||
		strings.HasPrefix(t, "${attr.unique.") || strings.HasPrefix(t, "${meta.unique.")
}

// CopyConstraints returns a deep copy of the list.
func CopyConstraints(cs []*Constraint) []*Constraint {
	if cs == nil {
		return nil
	}
	out := make([]*Constraint, len(cs))
	for i, c := range cs {
		if c != nil {
			n := *c
			out[i] = &n
		}
	}
	return out
}

// Affinity expresses a weighted preference (or aversion, when negative) for
// nodes; it changes scores, never feasibility.
type Affinity struct {
	LTarget string
	RTarget string
	Operand string
	Weight  int8
}

// String renders the affinity for score metadata and diffs.
func (a *Affinity) String() string {
	return fmt.Sprintf("%s %s %s %v", a.LTarget, a.Operand, a.RTarget, a.Weight)
}

// Validate checks the operator and weight range.
func (a *Affinity) Validate() []error {
	var errs []error
	c := &Constraint{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand}
	switch a.Operand {
	case ConstraintDistinctHosts, ConstraintDistinctProperty, ConstraintAttributeIsSet, ConstraintAttributeNotSet:
		// Affinities score how well a node's value matches; these
		// operators have no value to match.
		errs = append(errs, fmt.Errorf("operator %q is not allowed in an affinity", a.Operand))
	default:
		errs = append(errs, c.Validate()...)
	}
	if a.Weight == 0 {
		errs = append(errs, fmt.Errorf("weight must not be zero"))
	}
	if a.Weight > 100 || a.Weight < -100 {
		errs = append(errs, fmt.Errorf("weight must be within [-100, 100], got %d", a.Weight))
	}
	return errs
}

// CopyAffinities returns a deep copy of the list.
func CopyAffinities(as []*Affinity) []*Affinity {
	if as == nil {
		return nil
	}
	out := make([]*Affinity, len(as))
	for i, a := range as {
		if a != nil {
			n := *a
			out[i] = &n
		}
	}
	return out
}

// Spread asks the scheduler to distribute a group's allocs over the values
// of a node attribute, evenly or by the given target percentages.
type Spread struct {
	Attribute    string
	Weight       int8
	SpreadTarget []*SpreadTarget
}

// SpreadTarget is the desired share of allocs for one attribute value.
type SpreadTarget struct {
	Value   string
	Percent uint8
}

// String renders the spread for diffs and score metadata.
func (s *Spread) String() string {
	return fmt.Sprintf("%s %d", s.Attribute, s.Weight)
}

// Validate checks the attribute, weight and that targets sum to <= 100%.
func (s *Spread) Validate() []error {
	var errs []error
	if s.Attribute == "" {
		errs = append(errs, fmt.Errorf("missing spread attribute"))
	}
	if s.Weight <= 0 || s.Weight > 100 {
		errs = append(errs, fmt.Errorf("spread weight must be within (0, 100], got %d", s.Weight))
	}
	seen := map[string]bool{}
	sum := 0
	for i, t := range s.SpreadTarget {
		if t == nil {
			errs = append(errs, fmt.Errorf("spread target %d is empty", i+1))
			continue
		}
		if seen[t.Value] {
			errs = append(errs, fmt.Errorf("spread target value %q is repeated", t.Value))
		}
		seen[t.Value] = true
		if t.Percent > 100 {
			errs = append(errs, fmt.Errorf("spread target %q percent must be within [0, 100], got %d", t.Value, t.Percent))
		}
		sum += int(t.Percent)
	}
	if sum > 100 {
		errs = append(errs, fmt.Errorf("sum of spread target percentages must not exceed 100, got %d", sum))
	}
	return errs
}

// CopySpreads returns a deep copy of the list.
func CopySpreads(ss []*Spread) []*Spread {
	if ss == nil {
		return nil
	}
	out := make([]*Spread, len(ss))
	for i, s := range ss {
		if s == nil {
			continue
		}
		n := *s
		if s.SpreadTarget != nil {
			n.SpreadTarget = make([]*SpreadTarget, len(s.SpreadTarget))
			for j, t := range s.SpreadTarget {
				if t != nil {
					tc := *t
					n.SpreadTarget[j] = &tc
				}
			}
		}
		out[i] = &n
	}
	return out
}

// firstRepeated returns the first value that occurs twice, if any.
func firstRepeated(vals []string) (string, bool) {
	seen := make(map[string]bool, len(vals))
	for _, v := range vals {
		if seen[v] {
			return v, true
		}
		seen[v] = true
	}
	return "", false
}
