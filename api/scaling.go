package api

// Scaling policy types.
const (
	ScalingPolicyTypeHorizontal  = "horizontal"
	ScalingPolicyTypeVerticalCPU = "vertical_cpu"
	ScalingPolicyTypeVerticalMem = "vertical_mem"
)

// ScalingPolicy bounds a group's count (group `scaling` block) or a task's
// resources (task `scaling "cpu"` / `scaling "mem"` blocks) for an
// autoscaler.
type ScalingPolicy struct {
	Min     *int64         `hcl:"min,optional"`
	Max     *int64         `hcl:"max,optional"`
	Policy  map[string]any `hcl:"policy,block"`
	Enabled *bool          `hcl:"enabled,optional"`
	Type    string         `hcl:"type,optional"`

	// Fields below are set by the server.

	ID          string
	Namespace   string
	Target      map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// Canonicalize enables the policy, defaults Min to the group's count and
// the type to horizontal.
func (p *ScalingPolicy) Canonicalize(groupCount int) {
	if p.Enabled == nil {
		p.Enabled = new(true)
	}
	if p.Min == nil {
		p.Min = new(int64(groupCount))
	}
	if p.Type == "" {
		p.Type = ScalingPolicyTypeHorizontal
	}
}
