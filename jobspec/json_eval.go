package jobspec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// HCL's JSON syntax parses each string as a native template only when it
// is evaluated, out of reach of instrumentFile. So bodies of JSON files
// are wrapped: their expressions evaluate arrays, objects and scalars as
// hcl's JSON package does, but parse templates here, where they are
// instrumented like native ones.

type jsonBody struct {
	hcl.Body
	p *parser
}

func (b *jsonBody) Content(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	c, diags := b.Body.Content(schema)
	return b.p.wrapJSONContent(c, schema), diags
}

func (b *jsonBody) PartialContent(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	c, remain, diags := b.Body.PartialContent(schema)
	if remain != nil {
		remain = &jsonBody{Body: remain, p: b.p}
	}
	return b.p.wrapJSONContent(c, schema), remain, diags
}

func (b *jsonBody) JustAttributes() (hcl.Attributes, hcl.Diagnostics) {
	attrs, diags := b.Body.JustAttributes()
	return b.p.wrapJSONAttrs(attrs), diags
}

func (p *parser) wrapJSONContent(c *hcl.BodyContent, schema *hcl.BodySchema) *hcl.BodyContent {
	if c == nil {
		return nil
	}
	out := *c
	out.Attributes = p.wrapJSONAttrs(c.Attributes)
	out.Blocks = make(hcl.Blocks, len(c.Blocks))
	for i, blk := range c.Blocks {
		cp := *blk
		cp.Body = &jsonBody{Body: blk.Body, p: p}
		out.Blocks[i] = &cp
	}
	p.noteJSONDynamic(&out, schema)
	return &out
}

// noteJSONDynamic prices a dynamic block's iterations by the size of its
// content, when dynblock reads the block's for_each and content.
func (p *parser) noteJSONDynamic(c *hcl.BodyContent, schema *hcl.BodySchema) {
	forEach, ok := c.Attributes["for_each"]
	if !ok || len(c.Blocks) == 0 || len(schema.Blocks) != 1 || schema.Blocks[0].Type != "content" {
		return
	}
	content := c.Blocks[0]
	size := content.Body.MissingItemRange().End.Byte - content.DefRange.Start.Byte
	p.jsonDynCost[posOf(forEach.Expr.Range())] = satAdd(stepsPerBlock, satMul(int64(max(size, 0)), stepsPerJSONByte))
}

func (p *parser) wrapJSONAttrs(attrs hcl.Attributes) hcl.Attributes {
	if attrs == nil {
		return nil
	}
	out := make(hcl.Attributes, len(attrs))
	for name, a := range attrs {
		cp := *a
		cp.Expr = &jsonExpr{Expression: a.Expr, p: p}
		out[name] = &cp
	}
	return out
}

// jsonExpr is a JSON-syntax expression evaluated with instrumented
// templates. Static analysis (lists, maps, traversals, calls) goes to the
// wrapped expression, with list and map items wrapped in turn.
type jsonExpr struct {
	hcl.Expression
	p *parser
}

func (e *jsonExpr) UnwrapExpression() hcl.Expression { return e.Expression }

func (e *jsonExpr) ExprList() []hcl.Expression {
	l, ok := e.Expression.(interface{ ExprList() []hcl.Expression })
	if !ok {
		return nil
	}
	items := l.ExprList()
	if items == nil {
		return nil
	}
	out := make([]hcl.Expression, len(items))
	for i, item := range items {
		out[i] = &jsonExpr{Expression: item, p: e.p}
	}
	return out
}

func (e *jsonExpr) ExprMap() []hcl.KeyValuePair {
	m, ok := e.Expression.(interface{ ExprMap() []hcl.KeyValuePair })
	if !ok {
		return nil
	}
	items := m.ExprMap()
	if items == nil {
		return nil
	}
	out := make([]hcl.KeyValuePair, len(items))
	for i, kv := range items {
		out[i] = hcl.KeyValuePair{Key: &jsonExpr{Expression: kv.Key, p: e.p}, Value: &jsonExpr{Expression: kv.Value, p: e.p}}
	}
	return out
}

// Value follows hcl's JSON evaluation: a nil context means literal
// strings, otherwise strings are templates.
func (e *jsonExpr) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if ctx == nil {
		return e.Expression.Value(nil)
	}
	return e.p.jsonValue(e.Expression, ctx)
}

func (p *parser) jsonValue(e hcl.Expression, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	rng := e.Range()
	if err := p.budget.check(&rng); err != nil {
		return cty.DynamicVal, limitDiag(err, rng)
	}
	if l, ok := e.(interface{ ExprList() []hcl.Expression }); ok {
		if items := l.ExprList(); items != nil {
			var diags hcl.Diagnostics
			vals := make([]cty.Value, 0, len(items))
			for _, item := range items {
				v, more := p.jsonValue(item, ctx)
				vals = append(vals, v)
				diags = append(diags, more...)
			}
			return cty.TupleVal(vals), diags
		}
	}
	if m, ok := e.(interface{ ExprMap() []hcl.KeyValuePair }); ok {
		if items := m.ExprMap(); items != nil {
			return p.jsonObject(e, items, ctx)
		}
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() {
		return v, diags
	}
	switch v.Type() {
	case cty.String:
		return p.jsonTemplate(v.AsString(), rng, ctx)
	case cty.Number:
		if !numberInRange(v) {
			return cty.DynamicVal, limitDiag(p.budget.fail(numberError(&rng)), rng)
		}
	}
	return v, diags
}

func (p *parser) jsonObject(e hcl.Expression, items []hcl.KeyValuePair, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	attrs := map[string]cty.Value{}
	ranges := map[string]hcl.Range{}
	known := true
	for _, kv := range items {
		name, nameDiags := p.jsonValue(kv.Key, ctx)
		val, valDiags := p.jsonValue(kv.Value, ctx)
		diags = append(diags, nameDiags...)
		diags = append(diags, valDiags...)
		keyRange := kv.Key.Range()
		name, err := convert.Convert(name, cty.String)
		switch {
		case err != nil:
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError, Summary: "Invalid object key expression",
				Detail: fmt.Sprintf("Cannot use this expression as an object key: %s.", err), Subject: &keyRange,
			})
			continue
		case name.IsNull():
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError, Summary: "Invalid object key expression",
				Detail: "Cannot use null value as an object key.", Subject: &keyRange,
			})
			continue
		case !name.IsKnown():
			known = false
			continue
		}
		key := name.AsString()
		if prev, dup := ranges[key]; dup {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError, Summary: "Duplicate object attribute",
				Detail: fmt.Sprintf("An attribute named %q was already defined at %s.", key, prev), Subject: &keyRange,
			})
			continue
		}
		attrs[key] = val
		ranges[key] = keyRange
	}
	if !known {
		return cty.DynamicVal, diags
	}
	return cty.ObjectVal(attrs), diags
}

// jsonTemplate parses a JSON string as hcl's JSON package does (its
// position just after the opening quote), once per string.
func (p *parser) jsonTemplate(s string, rng hcl.Range, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	key := jsonTemplateKey{pos: posOf(rng), text: s}
	expr, ok := p.jsonTemplates[key]
	if !ok {
		start := hcl.Pos{Line: rng.Start.Line, Column: rng.Start.Column + 1, Byte: rng.Start.Byte + 1}
		if err := checkNativeNesting(rng.Filename, []byte(s), start, lexTemplate, p.lim.depth); err != nil {
			return cty.DynamicVal, limitDiag(p.budget.fail(err), rng)
		}
		parsed, diags := hclsyntax.ParseTemplate([]byte(s), rng.Filename, start)
		if diags.HasErrors() {
			return cty.DynamicVal, diags
		}
		if err := p.instrumentExpr(parsed); err != nil {
			return cty.DynamicVal, limitDiag(p.budget.fail(err), rng)
		}
		p.jsonTemplates[key] = parsed
		expr = parsed
	}
	return expr.Value(ctx)
}

type jsonTemplateKey struct {
	pos  srcPos
	text string
}
