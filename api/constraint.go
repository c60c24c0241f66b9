package api

// Constraint operators beyond the comparison operators (=, !=, <, <=, >,
// >=).
const (
	ConstraintDistinctProperty  = "distinct_property"
	ConstraintDistinctHosts     = "distinct_hosts"
	ConstraintRegex             = "regexp"
	ConstraintVersion           = "version"
	ConstraintSemver            = "semver"
	ConstraintSetContains       = "set_contains"
	ConstraintSetContainsAll    = "set_contains_all"
	ConstraintSetContainsAny    = "set_contains_any"
	ConstraintAttributeIsSet    = "is_set"
	ConstraintAttributeIsNotSet = "is_not_set"
)

// Constraint restricts placement to nodes where LTarget Operand RTarget
// holds (the `constraint` block).
type Constraint struct {
	LTarget string `hcl:"attribute,optional"`
	RTarget string `hcl:"value,optional"`
	Operand string `hcl:"operator,optional"`
}

// NewConstraint returns a constraint.
func NewConstraint(left, operand, right string) *Constraint {
	return &Constraint{LTarget: left, RTarget: right, Operand: operand}
}

// Affinity is a placement preference: nodes where LTarget Operand RTarget
// holds score Weight (-100..100) (the `affinity` block).
type Affinity struct {
	LTarget string `hcl:"attribute,optional"`
	RTarget string `hcl:"value,optional"`
	Operand string `hcl:"operator,optional"`
	Weight  *int8  `hcl:"weight,optional"`
}

// NewAffinity returns an affinity.
func NewAffinity(left, operand, right string, weight int8) *Affinity {
	return &Affinity{LTarget: left, RTarget: right, Operand: operand, Weight: new(weight)}
}

// Canonicalize defaults the weight to 50.
func (a *Affinity) Canonicalize() {
	if a == nil {
		return
	}
	if a.Weight == nil {
		a.Weight = new(int8(50))
	}
}

// Spread asks for allocations to be spread over the values of a node
// attribute (the `spread` block), optionally with target percentages.
type Spread struct {
	Attribute    string          `hcl:"attribute,optional"`
	Weight       *int8           `hcl:"weight,optional"`
	SpreadTarget []*SpreadTarget `hcl:"target,block"`
}

// SpreadTarget is the desired share of allocations for one attribute value
// (the `target "value"` block).
type SpreadTarget struct {
	Value   string `hcl:",label"`
	Percent uint8  `hcl:"percent,optional"`
}

// NewSpread returns a spread.
func NewSpread(attribute string, weight int8, targets []*SpreadTarget) *Spread {
	return &Spread{Attribute: attribute, Weight: new(weight), SpreadTarget: targets}
}

// Canonicalize defaults the weight to 50.
func (s *Spread) Canonicalize() {
	if s == nil {
		return
	}
	if s.Weight == nil {
		s.Weight = new(int8(50))
	}
}
