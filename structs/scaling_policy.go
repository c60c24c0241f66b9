package structs

import (
	"fmt"
	"maps"
)

// ScalingPolicyTypeHorizontal is a policy on a task group's count, the
// only type this server keeps.
const ScalingPolicyTypeHorizontal = "horizontal"

// ScalingPolicy is a task group's `scaling` block: the bounds an
// autoscaler keeps its count within, and the policy it follows (opaque
// to the server). It lives in its group; the server gives it an ID that
// stays the same across versions of the job, and its Target.
type ScalingPolicy struct {
	ID      string
	Type    string
	Target  map[string]string
	Policy  map[string]interface{}
	Min     int64
	Max     int64
	Enabled bool

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy (the policy's nested values are shared: they
// are never modified in place).
func (p *ScalingPolicy) Copy() *ScalingPolicy {
	if p == nil {
		return nil
	}
	n := *p
	n.Target = maps.Clone(p.Target)
	n.Policy = maps.Clone(p.Policy)
	return &n
}

// Validate lists what is wrong with the policy of a group of count.
func (p *ScalingPolicy) Validate(count int) []string {
	var problems []string
	if p.Type != ScalingPolicyTypeHorizontal {
		problems = append(problems, fmt.Sprintf("scaling policy type %q is not supported (only %q)", p.Type, ScalingPolicyTypeHorizontal))
	}
	if p.Min < 0 {
		problems = append(problems, "minimum count must not be negative")
	}
	if p.Max < 0 {
		problems = append(problems, "maximum count must not be negative")
	}
	if p.Min > p.Max {
		problems = append(problems, "maximum count must not be less than minimum count")
	}
	if int64(count) < p.Min || int64(count) > p.Max {
		problems = append(problems, fmt.Sprintf("task group count must be between scaling policy min (%d) and max (%d)", p.Min, p.Max))
	}
	return problems
}

// ScalingPolicyListStub is a policy as lists show it.
type ScalingPolicyListStub struct {
	ID          string
	Enabled     bool
	Type        string
	Target      map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the list form of the policy.
func (p *ScalingPolicy) Stub() *ScalingPolicyListStub {
	return &ScalingPolicyListStub{ID: p.ID, Enabled: p.Enabled, Type: p.Type, Target: maps.Clone(p.Target),
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}

// ScalingPolicyListRequest lists the policies of a namespace ("*": all),
// of one job when Job is set, of one type when Type is set.
type ScalingPolicyListRequest struct {
	Job  string
	Type string
	QueryOptions
}

// ScalingPolicyListResponse answers ScalingPolicyListRequest.
type ScalingPolicyListResponse struct {
	Policies []*ScalingPolicyListStub
	QueryMeta
}

// ScalingPolicySpecificRequest names a policy by ID.
type ScalingPolicySpecificRequest struct {
	ID string
	QueryOptions
}

// SingleScalingPolicyResponse answers with the policy, nil when unknown.
type SingleScalingPolicyResponse struct {
	Policy *ScalingPolicy
	QueryMeta
}
