package jobspec

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/opennomad/nomad/api"
)

// typeHooks adjusts how one api type is decoded where its tags are not
// enough.
type typeHooks struct {
	// extraAttrs and extraBlocks are accepted in addition to the tagged
	// fields; after decodes them.
	extraAttrs  []hcl.AttributeSchema
	extraBlocks []hcl.BlockHeaderSchema
	// skip lists tagged fields that after decodes instead.
	skip []string
	// notActed lists block types the server stores but does not act on;
	// each present one produces a warning.
	notActed []string
	// ignored lists extra block types the api has no type for; they are
	// accepted (labels checked), dropped, and reported.
	ignored []string
	after   func(p *parser, c *hcl.BodyContent, blocks map[string]hcl.Blocks, v reflect.Value, scope string)
}

func (h *typeHooks) skips(name string) bool {
	if h == nil {
		return false
	}
	for _, s := range h.skip {
		if s == name {
			return true
		}
	}
	return false
}

var hooks map[reflect.Type]*typeHooks

func hooksFor(t reflect.Type) *typeHooks { return hooks[t] }

// constraintShorthands are attributes that set the operator and value of a
// constraint in one line, e.g. `distinct_hosts = true` or
// `version = ">= 1.2"`.
var constraintShorthands = []string{
	api.ConstraintVersion, api.ConstraintSemver, api.ConstraintRegex,
	api.ConstraintSetContains, api.ConstraintSetContainsAll, api.ConstraintSetContainsAny,
}

func init() {
	shorthand := func(extra ...string) []hcl.AttributeSchema {
		var out []hcl.AttributeSchema
		for _, n := range append(constraintShorthands, extra...) {
			out = append(out, hcl.AttributeSchema{Name: n})
		}
		return out
	}
	hooks = map[reflect.Type]*typeHooks{
		reflect.TypeOf(api.Job{}): {
			extraBlocks: []hcl.BlockHeaderSchema{{Type: "vault"}, {Type: "multiregion"}, {Type: "ui"}},
			notActed:    []string{"vault"},
			ignored:     []string{"multiregion", "ui"},
			after:       afterJob,
		},
		reflect.TypeOf(api.TaskGroup{}): {
			extraBlocks: []hcl.BlockHeaderSchema{{Type: "vault"}},
			notActed:    []string{"scaling", "consul", "disconnect", "vault"},
			after:       afterGroup,
		},
		reflect.TypeOf(api.Task{}): {
			skip: []string{"scaling"},
			extraBlocks: []hcl.BlockHeaderSchema{
				{Type: "scaling", LabelNames: []string{"name"}},
				{Type: "secret", LabelNames: []string{"name"}},
				{Type: "action", LabelNames: []string{"name"}},
				{Type: "schedule"},
			},
			notActed: []string{"template", "artifact", "vault",
				"csi_plugin", "scaling", "consul", "identity"},
			ignored: []string{"secret", "action", "schedule"},
			after:   afterTask,
		},
		reflect.TypeOf(api.Constraint{}): {
			extraAttrs: shorthand(api.ConstraintDistinctHosts, api.ConstraintDistinctProperty),
			after:      afterConstraint,
		},
		reflect.TypeOf(api.Affinity{}): {
			extraAttrs: shorthand(),
			after:      afterAffinity,
		},
		reflect.TypeOf(api.Resources{}): {
			extraBlocks: []hcl.BlockHeaderSchema{{Type: "numa"}},
			notActed:    []string{"device"},
			ignored:     []string{"numa"},
		},
		reflect.TypeOf(api.NetworkResource{}): {
			extraBlocks: []hcl.BlockHeaderSchema{{Type: "cni"}},
			notActed:    []string{"dns"},
			ignored:     []string{"cni"},
		},
		reflect.TypeOf(api.Service{}): {
			extraBlocks: []hcl.BlockHeaderSchema{{Type: "connect"}, {Type: "weights"}, {Type: "identity"}},
			ignored:     []string{"connect", "weights", "identity"},
		},
	}
}

// childScope names the job, group or task a block belongs to, for
// warnings: groups are named on their own ("group \"web\""), tasks with
// their group.
func childScope(scope string, t reflect.Type, labels []string) string {
	if len(labels) == 0 {
		return scope
	}
	switch t {
	case reflect.TypeOf(api.TaskGroup{}):
		return fmt.Sprintf("group %q", labels[0])
	case reflect.TypeOf(api.Task{}):
		return fmt.Sprintf("%s: task %q", scope, labels[0])
	}
	return scope
}

// afterJob hands a job-level vault block to every task without its own.
func afterJob(p *parser, _ *hcl.BodyContent, blocks map[string]hcl.Blocks, v reflect.Value, scope string) {
	vault := p.decodeVault(blocks["vault"], scope)
	if vault == nil {
		return
	}
	job := v.Addr().Interface().(*api.Job)
	for _, tg := range job.TaskGroups {
		inheritVault(tg, vault)
	}
}

// afterGroup hands a group-level vault block to its tasks and checks the
// group scaling policy.
func afterGroup(p *parser, _ *hcl.BodyContent, blocks map[string]hcl.Blocks, v reflect.Value, scope string) {
	tg := v.Addr().Interface().(*api.TaskGroup)
	if vault := p.decodeVault(blocks["vault"], scope); vault != nil {
		inheritVault(tg, vault)
	}
	if tg.Scaling != nil {
		if tg.Scaling.Type == "" {
			tg.Scaling.Type = api.ScalingPolicyTypeHorizontal
		}
		b := blocks["scaling"][0]
		if tg.Scaling.Type != api.ScalingPolicyTypeHorizontal {
			p.errorf(&b.DefRange, "Invalid group scaling type",
				"A group scaling policy must be of type %q, not %q.", api.ScalingPolicyTypeHorizontal, tg.Scaling.Type)
		}
		if tg.Scaling.Max == nil {
			p.errorf(&b.DefRange, "Missing required argument", "A group scaling block must set max.")
		}
	}
}

func inheritVault(tg *api.TaskGroup, vault *api.Vault) {
	for _, t := range tg.Tasks {
		if t.Vault == nil {
			c := *vault
			t.Vault = &c
		}
	}
}

func (p *parser) decodeVault(blocks hcl.Blocks, scope string) *api.Vault {
	if len(blocks) == 0 {
		return nil
	}
	for _, dup := range blocks[1:] {
		p.errorf(&dup.DefRange, "Duplicate vault block",
			"Only one vault block is allowed here; another was defined at %s.", blocks[0].DefRange)
	}
	vault := &api.Vault{}
	p.decodeStruct(blocks[0].Body, reflect.ValueOf(vault).Elem(), scope)
	normalizeVault(vault)
	return vault
}

// afterTask decodes `scaling "cpu"` and `scaling "mem"` blocks into
// vertical scaling policies.
func afterTask(p *parser, _ *hcl.BodyContent, blocks map[string]hcl.Blocks, v reflect.Value, scope string) {
	task := v.Addr().Interface().(*api.Task)
	seen := map[string]*hcl.Block{}
	for _, b := range blocks["scaling"] {
		label := strings.ToLower(b.Labels[0])
		var typ string
		switch label {
		case "cpu":
			typ = api.ScalingPolicyTypeVerticalCPU
		case "mem":
			typ = api.ScalingPolicyTypeVerticalMem
		default:
			p.errorf(&b.LabelRanges[0], "Invalid scaling policy name", `A task scaling block must be named "cpu" or "mem", not %q.`, b.Labels[0])
			continue
		}
		if prev, dup := seen[label]; dup {
			p.errorf(&b.DefRange, fmt.Sprintf("Duplicate scaling %q block", label),
				"Only one scaling %q block is allowed; another was defined at %s.", label, prev.DefRange)
			continue
		}
		seen[label] = b
		policy := &api.ScalingPolicy{}
		p.decodeStruct(b.Body, reflect.ValueOf(policy).Elem(), scope)
		if policy.Type == "" {
			policy.Type = typ
		} else if policy.Type != typ {
			p.errorf(&b.DefRange, "Invalid scaling policy type",
				"A scaling %q block must be of type %q, not %q.", label, typ, policy.Type)
			continue
		}
		task.ScalingPolicies = append(task.ScalingPolicies, policy)
	}
}

// afterConstraint applies the shorthand attributes and defaults the
// operator to "=".
func afterConstraint(p *parser, c *hcl.BodyContent, _ map[string]hcl.Blocks, v reflect.Value, _ string) {
	con := v.Addr().Interface().(*api.Constraint)
	for _, op := range constraintShorthands {
		if s, ok := p.shorthandString(c, op); ok {
			con.Operand, con.RTarget = op, s
		}
	}
	if a, ok := c.Attributes[api.ConstraintDistinctHosts]; ok {
		val, diags := p.eval(a.Expr)
		p.diags = append(p.diags, diags...)
		var enabled bool
		if !diags.HasErrors() {
			if err := setValue(reflect.ValueOf(&enabled).Elem(), val); err != nil {
				p.errorf(a.Expr.Range().Ptr(), "Incorrect attribute value type",
					"Inappropriate value for attribute %q: %s.", a.Name, err)
			}
		}
		if enabled {
			con.Operand = api.ConstraintDistinctHosts
		}
	}
	if s, ok := p.shorthandString(c, api.ConstraintDistinctProperty); ok {
		con.Operand, con.LTarget = api.ConstraintDistinctProperty, s
	}
	if con.Operand == "" {
		con.Operand = "="
	}
}

// afterAffinity applies the shorthand attributes and defaults the operator
// to "=".
func afterAffinity(p *parser, c *hcl.BodyContent, _ map[string]hcl.Blocks, v reflect.Value, _ string) {
	aff := v.Addr().Interface().(*api.Affinity)
	for _, op := range constraintShorthands {
		if s, ok := p.shorthandString(c, op); ok {
			aff.Operand, aff.RTarget = op, s
		}
	}
	if aff.Operand == "" {
		aff.Operand = "="
	}
}

// shorthandString evaluates a shorthand attribute to a non-empty string.
func (p *parser) shorthandString(c *hcl.BodyContent, name string) (string, bool) {
	a, ok := c.Attributes[name]
	if !ok {
		return "", false
	}
	val, diags := p.eval(a.Expr)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() || val.IsNull() {
		return "", false
	}
	var s string
	if err := setValue(reflect.ValueOf(&s).Elem(), val); err != nil {
		p.errorf(a.Expr.Range().Ptr(), "Incorrect attribute value type",
			"Inappropriate value for attribute %q: %s.", name, err)
		return "", false
	}
	return s, s != ""
}
