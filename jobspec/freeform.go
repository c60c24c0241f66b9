package jobspec

import (
	"fmt"
	"reflect"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Free-form blocks have no schema: `meta` and `env` hold arbitrary string
// keys, `config` holds a driver's own configuration. Each may be written
// as a block or, with the same content, as an attribute holding an object.

// decodeFreeformField decodes a map field given as an attribute or as one
// block.
func (p *parser) decodeFreeformField(name string, attr *hcl.Attribute, blocks hcl.Blocks, field reflect.Value) {
	if attr != nil && len(blocks) > 0 {
		p.errorf(&blocks[0].DefRange, fmt.Sprintf("Duplicate %s block", name),
			"%s is already set as an attribute at %s.", name, attr.Range)
		return
	}
	if attr != nil {
		p.assignAttr(attr, field)
		return
	}
	if len(blocks) == 0 {
		return
	}
	for _, dup := range blocks[1:] {
		p.errorf(&dup.DefRange, fmt.Sprintf("Duplicate %s block", name),
			"Only one %s block is allowed here; another was defined at %s.", name, blocks[0].DefRange)
	}
	body := blocks[0].Body
	if field.Type().Elem().Kind() == reflect.Interface {
		field.Set(reflect.ValueOf(p.decodeConfigBody(body)))
		return
	}
	attrs, nested := p.freeformContent(body)
	for _, b := range nested {
		p.errorf(&b.DefRange, "Unexpected block",
			"%s may only contain attributes (key = value), not a %s block.", name, b.Type)
	}
	m := reflect.MakeMap(field.Type())
	for _, a := range attrs {
		elem := reflect.New(field.Type().Elem()).Elem()
		before := len(p.diags)
		p.assignAttr(a, elem)
		if len(p.diags) == before {
			m.SetMapIndex(reflect.ValueOf(a.Name), elem)
		}
	}
	field.Set(m)
}

// decodeConfigBody converts a driver config block the way Nomad does:
// attributes become values, nested blocks become lists of maps keyed by
// block type (labels nest further maps), and an attribute written as an
// object literal becomes a one-element list of maps.
func (p *parser) decodeConfigBody(body hcl.Body) map[string]any {
	out := map[string]any{}
	attrs, blocks := p.freeformContent(body)
	for _, a := range attrs {
		val, diags := p.eval(a.Expr)
		p.diags = append(p.diags, diags...)
		if diags.HasErrors() {
			continue
		}
		val, _ = val.UnmarkDeep()
		v, err := ctyToInterface(val)
		if err != nil {
			p.errorf(a.Expr.Range().Ptr(), "Unsuitable value", "Attribute %q: %s.", a.Name, err)
			continue
		}
		if m, ok := v.(map[string]any); ok && isObjectLiteral(a.Expr) {
			v = []map[string]any{m}
		}
		out[a.Name] = v
	}
	for _, b := range blocks {
		entry := p.decodeConfigBody(b.Body)
		for i := len(b.Labels) - 1; i >= 0; i-- {
			entry = map[string]any{b.Labels[i]: []map[string]any{entry}}
		}
		list, _ := out[b.Type].([]map[string]any)
		out[b.Type] = append(list, entry)
	}
	return out
}

func isObjectLiteral(expr hcl.Expression) bool {
	inner := hcl.UnwrapExpressionUntil(expr, func(e hcl.Expression) bool {
		_, ok := e.(*hclsyntax.ObjectConsExpr)
		return ok
	})
	_, ok := inner.(*hclsyntax.ObjectConsExpr)
	return ok
}

// freeformContent lists a schema-less body's attributes and blocks. The
// names are read from the native syntax, then requested through the body
// itself so that dynamic blocks are expanded and iterator variables of
// enclosing dynamic blocks stay in scope.
func (p *parser) freeformContent(body hcl.Body) ([]*hcl.Attribute, hcl.Blocks) {
	syn := p.syntaxBody(body)
	if syn == nil {
		// JSON syntax: every property is an attribute.
		attrs, diags := body.JustAttributes()
		p.diags = append(p.diags, diags...)
		return sortedAttributes(attrs), nil
	}
	schema := &hcl.BodySchema{}
	for name := range syn.Attributes {
		schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: name})
	}
	seen := map[string]bool{}
	for _, b := range syn.Blocks {
		typ, labels := b.Type, len(b.Labels)
		if b.Type == "dynamic" && len(b.Labels) == 1 {
			typ, labels = b.Labels[0], dynamicLabelCount(b)
		}
		if seen[typ] {
			continue
		}
		seen[typ] = true
		names := make([]string, labels)
		for i := range names {
			names[i] = fmt.Sprintf("label%d", i)
		}
		schema.Blocks = append(schema.Blocks, hcl.BlockHeaderSchema{Type: typ, LabelNames: names})
	}
	content, diags := body.Content(schema)
	p.diags = append(p.diags, diags...)
	if content == nil {
		return nil, nil
	}
	return sortedAttributes(content.Attributes), content.Blocks
}

// dynamicLabelCount is the number of labels a dynamic block generates,
// read from its `labels = [...]` attribute.
func dynamicLabelCount(b *hclsyntax.Block) int {
	a, ok := b.Body.Attributes["labels"]
	if !ok {
		return 0
	}
	if tuple, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
		return len(tuple.Exprs)
	}
	return 0
}
