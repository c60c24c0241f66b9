package jobspec

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// EnvVarPrefix prefixes environment variables that set job variables:
// NOMAD_VAR_region=eu sets var.region.
const EnvVarPrefix = "NOMAD_VAR_"

// variable is one declared input variable and every value assigned to it,
// lowest precedence first: default, environment, variable files, -var.
type variable struct {
	name        string
	typ         cty.Type // cty.NilType when neither declared nor implied
	declRange   hcl.Range
	validations []*validation
	values      []assignment
}

type assignment struct {
	from  string // "default", "env", "varfile", "cmd"
	value cty.Value
	expr  hcl.Expression
}

type validation struct {
	condition    hcl.Expression
	errorMessage string
	declRange    hcl.Range
}

var variableBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "description"}, {Name: "default"}, {Name: "type"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "error_message", Required: true},
	},
}

// decodeVariables declares the file's variables, collects their values
// from every source in precedence order, validates them and makes them
// available as var.<name>.
func (p *parser) decodeVariables(blocks hcl.Blocks) {
	vars := map[string]*variable{}
	var order []string
	declare := func(v *variable) {
		if prev, dup := vars[v.name]; dup {
			p.errorf(v.declRange.Ptr(), "Duplicate variable",
				"Variable %q was already declared at %s.", v.name, prev.declRange)
			return
		}
		vars[v.name] = v
		order = append(order, v.name)
	}
	for _, b := range blocks {
		switch b.Type {
		case "variable":
			if v := p.decodeVariableBlock(b); v != nil {
				declare(v)
			}
		case "variables":
			attrs, diags := b.Body.JustAttributes()
			p.diags = append(p.diags, diags...)
			for _, a := range sortedAttributes(attrs) {
				val, diags := a.Expr.Value(p.functionContext())
				p.diags = append(p.diags, diags...)
				if diags.HasErrors() {
					continue
				}
				declare(&variable{
					name:      a.Name,
					typ:       val.Type(),
					declRange: a.Range,
					values:    []assignment{{from: "default", value: val, expr: a.Expr}},
				})
			}
		}
	}
	if p.diags.HasErrors() {
		return
	}

	p.collectEnv(vars)
	for _, f := range p.opts.VarFiles {
		p.collectVarFile(vars, f)
	}
	p.collectArgs(vars)

	for _, name := range order {
		v := vars[name]
		if len(v.values) == 0 {
			p.errorf(v.declRange.Ptr(), fmt.Sprintf("Unset variable %q", name),
				"The variable has no default; set it with -var, -var-file or %s%s.", EnvVarPrefix, name)
			continue
		}
		final := v.values[len(v.values)-1]
		p.validateVariable(v, final)
		p.vars[name] = final.value
	}
}

func (p *parser) decodeVariableBlock(b *hcl.Block) *variable {
	name := b.Labels[0]
	if !hclsyntax.ValidIdentifier(name) {
		p.errorf(&b.LabelRanges[0], "Invalid variable name",
			"A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.")
		return nil
	}
	content, diags := b.Body.Content(variableBlockSchema)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	v := &variable{name: name, typ: cty.NilType, declRange: b.DefRange}
	if a, ok := content.Attributes["description"]; ok {
		if _, diags := a.Expr.Value(nil); diags.HasErrors() {
			p.diags = append(p.diags, diags...)
		}
	}
	if a, ok := content.Attributes["type"]; ok {
		typ, diags := typeexpr.TypeConstraint(a.Expr)
		p.diags = append(p.diags, diags...)
		if diags.HasErrors() {
			return nil
		}
		v.typ = typ
	}
	if a, ok := content.Attributes["default"]; ok {
		val, diags := a.Expr.Value(p.functionContext())
		p.diags = append(p.diags, diags...)
		if diags.HasErrors() {
			return nil
		}
		if v.typ != cty.NilType {
			converted, err := convert.Convert(val, v.typ)
			if err != nil {
				p.errorf(a.Expr.Range().Ptr(), "Invalid default value for variable",
					"The default value does not match the variable's type: %s.", err)
				return nil
			}
			val = converted
		} else {
			v.typ = val.Type()
		}
		v.values = append(v.values, assignment{from: "default", value: val, expr: a.Expr})
	}
	for _, vb := range content.Blocks {
		if val := p.decodeValidation(name, vb); val != nil {
			v.validations = append(v.validations, val)
		}
	}
	return v
}

func (p *parser) decodeValidation(varName string, b *hcl.Block) *validation {
	content, diags := b.Body.Content(validationBlockSchema)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	v := &validation{declRange: b.DefRange}
	cond := content.Attributes["condition"]
	v.condition = cond.Expr
	refs := 0
	for _, tr := range cond.Expr.Variables() {
		if isVarRef(tr, varName) {
			refs++
			continue
		}
		p.errorf(tr.SourceRange().Ptr(), "Invalid reference in variable validation",
			"The condition for variable %q can only refer to the variable itself, using var.%s.", varName, varName)
	}
	if refs == 0 {
		p.errorf(cond.Expr.Range().Ptr(), "Invalid variable validation condition",
			"The condition for variable %q must refer to var.%s in order to test incoming values.", varName, varName)
	}
	msgAttr := content.Attributes["error_message"]
	msg, diags := msgAttr.Expr.Value(nil)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	if msg.Type() != cty.String || msg.IsNull() {
		p.errorf(msgAttr.Expr.Range().Ptr(), "Invalid validation error message", "The error message must be a string.")
		return nil
	}
	v.errorMessage = msg.AsString()
	if !looksLikeSentences(v.errorMessage) {
		p.errorf(msgAttr.Expr.Range().Ptr(), "Invalid validation error message",
			"The error message must be at least one full sentence, starting with an uppercase letter and ending with a period or question mark.")
	}
	return v
}

func isVarRef(tr hcl.Traversal, name string) bool {
	if tr.RootName() != "var" || len(tr) < 2 {
		return false
	}
	attr, ok := tr[1].(hcl.TraverseAttr)
	return ok && attr.Name == name
}

func looksLikeSentences(s string) bool {
	runes := []rune(strings.TrimSpace(s))
	if len(runes) == 0 {
		return false
	}
	first, last := runes[0], runes[len(runes)-1]
	if unicode.IsLetter(first) && !unicode.IsUpper(first) {
		return false
	}
	return last == '.' || last == '?' || last == '!'
}

// collectEnv reads NOMAD_VAR_<name> for declared variables; others are
// ignored, since the environment is shared with unrelated jobs.
func (p *parser) collectEnv(vars map[string]*variable) {
	for _, kv := range p.opts.Env {
		rest, ok := strings.CutPrefix(kv, EnvVarPrefix)
		if !ok {
			continue
		}
		name, raw, ok := strings.Cut(rest, "=")
		if !ok {
			continue
		}
		v, declared := vars[name]
		if !declared {
			continue
		}
		p.assignRaw(v, "env", fmt.Sprintf("<value for var.%s from environment>", name), raw)
	}
}

// collectArgs reads -var name=value flags; a flag for an undeclared
// variable is an error, since it is most likely a typo.
func (p *parser) collectArgs(vars map[string]*variable) {
	for _, arg := range p.opts.ArgVars {
		name, raw, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			p.diags = append(p.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid -var option",
				Detail:   fmt.Sprintf("The -var option %q must be of the form name=value.", arg),
			})
			continue
		}
		v, declared := vars[name]
		if !declared {
			p.diags = append(p.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Undefined -var variable",
				Detail:   fmt.Sprintf("A value was given for variable %q, but the job file declares no such variable.", name),
			})
			continue
		}
		p.assignRaw(v, "cmd", fmt.Sprintf("<value for var.%s from arguments>", name), raw)
	}
}

// assignRaw assigns a textual value from the command line or environment:
// taken literally for string, number and untyped variables, parsed as an
// HCL expression for collections and objects.
func (p *parser) assignRaw(v *variable, from, pseudoFile, raw string) {
	var expr hcl.Expression
	switch v.typ {
	case cty.String, cty.Number, cty.Bool, cty.NilType, cty.DynamicPseudoType:
		expr = &hclsyntax.LiteralValueExpr{Val: cty.StringVal(raw)}
	default:
		e, diags := hclsyntax.ParseExpression([]byte(raw), pseudoFile, hcl.InitialPos)
		p.diags = append(p.diags, diags...)
		if diags.HasErrors() {
			return
		}
		expr = e
	}
	val, diags := expr.Value(nil)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return
	}
	p.assign(v, from, val, expr)
}

// collectVarFile reads one variables file.
func (p *parser) collectVarFile(vars map[string]*variable, f VarFile) {
	file, diags := parseSource(f.Name, f.Content)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return
	}
	p.sources[f.Name] = f.Content
	probe, _, _ := file.Body.PartialContent(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: "variable", LabelNames: []string{"name"}}},
	})
	for _, b := range probe.Blocks {
		p.errorf(&b.DefRange, "Variable declaration in a variables file",
			"A variables file assigns values to variables declared in the job file; it cannot declare variable %q. Write `%s = <value>` instead.",
			b.Labels[0], b.Labels[0])
	}
	if len(probe.Blocks) > 0 {
		return
	}
	attrs, diags := file.Body.JustAttributes()
	p.diags = append(p.diags, diags...)
	for _, a := range sortedAttributes(attrs) {
		v, declared := vars[a.Name]
		if !declared {
			p.errorf(a.NameRange.Ptr(), "Undefined variable",
				"A value was given for variable %q, but the job file declares no such variable.", a.Name)
			continue
		}
		val, diags := a.Expr.Value(p.functionContext())
		p.diags = append(p.diags, diags...)
		if diags.HasErrors() {
			continue
		}
		p.assign(v, "varfile", val, a.Expr)
	}
}

// assign converts a value to the variable's type and records it.
func (p *parser) assign(v *variable, from string, val cty.Value, expr hcl.Expression) {
	if v.typ != cty.NilType {
		converted, err := convert.Convert(val, v.typ)
		if err != nil {
			p.errorf(expr.Range().Ptr(), "Invalid value for variable",
				"The value for %s does not match the variable's type: %s.", v.name, err)
			return
		}
		val = converted
	}
	v.values = append(v.values, assignment{from: from, value: val, expr: expr})
}

// validateVariable runs the variable's validation rules on its final value.
func (p *parser) validateVariable(v *variable, a assignment) {
	if len(v.validations) == 0 {
		return
	}
	ctx := p.functionContext()
	ctx.Variables = map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{v.name: a.value})}
	for _, rule := range v.validations {
		result, diags := rule.condition.Value(ctx)
		p.diags = append(p.diags, diags...)
		if diags.HasErrors() || !result.IsKnown() {
			continue
		}
		if result.IsNull() {
			p.errorf(rule.condition.Range().Ptr(), "Invalid variable validation result",
				"The condition must return true or false, not null.")
			continue
		}
		result, err := convert.Convert(result, cty.Bool)
		if err != nil {
			p.errorf(rule.condition.Range().Ptr(), "Invalid variable validation result",
				"The condition must return true or false: %s.", err)
			continue
		}
		if result.False() {
			subject := rule.declRange.Ptr()
			if a.expr != nil && a.expr.Range().Filename != "" {
				subject = a.expr.Range().Ptr()
			}
			p.errorf(subject, fmt.Sprintf("Invalid value for variable %q", v.name),
				"%s\n\nThis was checked by the validation rule at %s.", rule.errorMessage, rule.declRange)
		}
	}
}

// functionContext is a context with functions but no variables, used for
// defaults and variables files, which may not refer to other variables.
func (p *parser) functionContext() *hcl.EvalContext {
	return &hcl.EvalContext{Functions: p.funcs}
}

// decodeLocals evaluates the locals blocks. Locals may refer to each
// other in any order; evaluation repeats until every local is known or no
// progress is made (an undefined reference or a cycle), in which case the
// remaining errors are reported.
func (p *parser) decodeLocals(blocks hcl.Blocks) {
	var pending []*hcl.Attribute
	seen := map[string]*hcl.Attribute{}
	for _, b := range blocks {
		if b.Type != "locals" {
			continue
		}
		attrs, diags := b.Body.JustAttributes()
		p.diags = append(p.diags, diags...)
		for _, a := range sortedAttributes(attrs) {
			if prev, dup := seen[a.Name]; dup {
				p.errorf(a.NameRange.Ptr(), "Duplicate local value",
					"Local %q was already defined at %s.", a.Name, prev.Range)
				continue
			}
			seen[a.Name] = a
			pending = append(pending, a)
		}
	}
	for len(pending) > 0 {
		var next []*hcl.Attribute
		var lastDiags hcl.Diagnostics
		for _, a := range pending {
			val, diags := p.eval(a.Expr)
			if diags.HasErrors() {
				next = append(next, a)
				lastDiags = append(lastDiags, diags...)
				continue
			}
			p.locals[a.Name] = val
		}
		if len(next) == len(pending) {
			p.diags = append(p.diags, lastDiags...)
			return
		}
		pending = next
	}
}
