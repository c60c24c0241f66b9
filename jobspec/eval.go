package jobspec

import (
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// evalContext is the context job expressions are evaluated in: var.*,
// local.* and the functions. It is built once variables and locals are
// final.
func (p *parser) evalContext() *hcl.EvalContext {
	if p.ctx == nil {
		p.ctx = &hcl.EvalContext{
			Variables: map[string]cty.Value{
				"var":   cty.ObjectVal(p.vars),
				"local": cty.ObjectVal(p.locals),
			},
			Functions: p.funcs,
		}
	}
	return p.ctx
}

// eval evaluates an expression of the job. References to anything other
// than var.* and local.* are runtime interpolations ("${attr.kernel.name}",
// "${NOMAD_ALLOC_DIR}", "${meta.rack}") that only the scheduler or the
// client can resolve, so they evaluate to their own text wrapped in ${}.
func (p *parser) eval(expr hcl.Expression) (cty.Value, hcl.Diagnostics) {
	return p.evalIn(p.evalContext(), expr)
}

// evalIn evaluates expr in ctx plus its runtime interpolations, and
// charges the result, which the decoder is about to walk.
func (p *parser) evalIn(ctx *hcl.EvalContext, expr hcl.Expression) (cty.Value, hcl.Diagnostics) {
	if runtime := p.runtimeVariables(expr); len(runtime) > 0 {
		ctx = ctx.NewChild()
		ctx.Variables = runtime
	}
	v, diags := expr.Value(ctx)
	return p.chargeResult(v, diags, expr.Range())
}

// chargeResult charges an evaluated value to the budget; a value over the
// budget becomes an error.
func (p *parser) chargeResult(v cty.Value, diags hcl.Diagnostics, rng hcl.Range) (cty.Value, hcl.Diagnostics) {
	if diags.HasErrors() {
		return v, diags
	}
	if err := p.budget.chargeValue(v, &rng); err != nil {
		return cty.DynamicVal, append(diags, limitDiag(err, rng)...)
	}
	return v, diags
}

// placeholder is a tree of traversal steps whose leaves are the literal
// text a runtime interpolation evaluates to.
type placeholder struct {
	text     string
	children map[string]*placeholder
}

func (n *placeholder) value() cty.Value {
	if len(n.children) == 0 {
		return cty.StringVal(n.text)
	}
	attrs := make(map[string]cty.Value, len(n.children))
	for k, c := range n.children {
		attrs[k] = c.value()
	}
	return cty.ObjectVal(attrs)
}

// runtimeVariables builds values for every root name the expression uses
// that is not a job-file variable, so that evaluating `attr.kernel.name`
// yields the string "${attr.kernel.name}".
func (p *parser) runtimeVariables(expr hcl.Expression) map[string]cty.Value {
	roots := map[string]*placeholder{}
	for _, tr := range expr.Variables() {
		root := tr.RootName()
		if root == "var" || root == "local" {
			continue
		}
		text := "${" + p.traversalText(tr) + "}"
		node, ok := roots[root]
		if !ok {
			node = &placeholder{}
			roots[root] = node
		}
		for _, step := range tr[1:] {
			key, ok := stepKey(step)
			if !ok {
				break
			}
			if node.children == nil {
				node.children = map[string]*placeholder{}
			}
			child, ok := node.children[key]
			if !ok {
				child = &placeholder{}
				node.children[key] = child
			}
			node = child
		}
		node.text = text
	}
	out := make(map[string]cty.Value, len(roots))
	for name, node := range roots {
		out[name] = node.value()
	}
	return out
}

// stepKey returns the attribute name of a traversal step: `.name` or
// `["name"]`.
func stepKey(step hcl.Traverser) (string, bool) {
	switch s := step.(type) {
	case hcl.TraverseAttr:
		return s.Name, true
	case hcl.TraverseIndex:
		if s.Key.Type() == cty.String && s.Key.IsKnown() && !s.Key.IsNull() {
			return s.Key.AsString(), true
		}
	}
	return "", false
}

// traversalText returns a traversal as written in the source, or rebuilt
// from its steps when the source is not at hand.
func (p *parser) traversalText(tr hcl.Traversal) string {
	r := tr.SourceRange()
	if src, ok := p.sources[r.Filename]; ok && r.End.Byte <= len(src) && r.Start.Byte < r.End.Byte {
		return string(src[r.Start.Byte:r.End.Byte])
	}
	var b strings.Builder
	b.WriteString(tr.RootName())
	for _, step := range tr[1:] {
		switch s := step.(type) {
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			if s.Key.Type() == cty.String {
				b.WriteString(`["` + s.Key.AsString() + `"]`)
			} else if s.Key.Type() == cty.Number {
				b.WriteString("[" + s.Key.AsBigFloat().String() + "]")
			}
		}
	}
	return b.String()
}
