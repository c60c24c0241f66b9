package jobspec

import (
	"fmt"
	"sort"
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
				val, diags := p.evalDefault(a.Expr)
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
	p.ctx = nil
}

// evalDefault evaluates a default or a variables file value: functions
// but no references.
func (p *parser) evalDefault(expr hcl.Expression) (cty.Value, hcl.Diagnostics) {
	v, diags := expr.Value(p.functionContext())
	return p.chargeResult(v, diags, expr.Range())
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
		// In JSON syntax the type is a string that hcl parses as a native
		// expression, beyond the scan of the file.
		if j, ok := a.Expr.(*jsonExpr); ok {
			if s, _ := j.Expression.Value(nil); s.IsKnown() && !s.IsNull() && s.Type() == cty.String {
				if err := checkNativeNesting(a.Expr.Range().Filename, []byte(s.AsString()), a.Expr.Range().Start, lexExpression, p.lim.depth); err != nil {
					p.budget.fail(err)
					return nil
				}
			}
		}
		typ, diags := typeexpr.TypeConstraint(a.Expr)
		p.diags = append(p.diags, diags...)
		if diags.HasErrors() {
			return nil
		}
		v.typ = typ
	}
	if a, ok := content.Attributes["default"]; ok {
		val, diags := p.evalDefault(a.Expr)
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
	if err := p.lim.sizeError(fmt.Sprintf("the value for var.%s", v.name), len(raw)); err != nil {
		p.budget.fail(err)
		return
	}
	var expr hcl.Expression
	switch v.typ {
	case cty.String, cty.Number, cty.Bool, cty.NilType, cty.DynamicPseudoType:
		expr = &hclsyntax.LiteralValueExpr{Val: cty.StringVal(raw)}
	default:
		if err := checkNativeNesting(pseudoFile, []byte(raw), hcl.InitialPos, lexExpression, p.lim.depth); err != nil {
			p.budget.fail(err)
			return
		}
		e, diags := hclsyntax.ParseExpression([]byte(raw), pseudoFile, hcl.InitialPos)
		p.diags = append(p.diags, diags...)
		if diags.HasErrors() {
			return
		}
		if err := p.instrumentExpr(e); err != nil {
			p.budget.fail(err)
			return
		}
		expr = e
	}
	val, diags := expr.Value(nil)
	val, diags = p.chargeResult(val, diags, expr.Range())
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return
	}
	p.assign(v, from, val, expr)
}

// collectVarFile reads one variables file.
func (p *parser) collectVarFile(vars map[string]*variable, f VarFile) {
	file, diags := p.parseChecked("variables file "+f.Name, f.Name, f.Content)
	p.diags = append(p.diags, diags...)
	if file == nil || diags.HasErrors() {
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
		val, diags := p.evalDefault(a.Expr)
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
// other in any order, so each is evaluated after the locals it refers to,
// with just those in scope: re-evaluating every local until none changes,
// or building an object of all locals for each one, is quadratic, and ten
// thousand chained locals took minutes. A local that refers to `local`
// as a whole sees every local that does not depend on it. Locals in a
// cycle, or that fail, are evaluated last with every other local in
// scope, which reports the reference that cannot be resolved.
func (p *parser) decodeLocals(blocks hcl.Blocks) {
	var attrs []*hcl.Attribute
	seen := map[string]*hcl.Attribute{}
	for _, b := range blocks {
		if b.Type != "locals" {
			continue
		}
		battrs, diags := b.Body.JustAttributes()
		p.diags = append(p.diags, diags...)
		for _, a := range sortedAttributes(battrs) {
			if prev, dup := seen[a.Name]; dup {
				p.errorf(a.NameRange.Ptr(), "Duplicate local value",
					"Local %q was already defined at %s.", a.Name, prev.Range)
				continue
			}
			seen[a.Name] = a
			attrs = append(attrs, a)
		}
	}
	defer func() { p.ctx = nil }()
	if len(attrs) == 0 {
		return
	}

	index := make(map[string]int, len(attrs))
	for i, a := range attrs {
		index[a.Name] = i
	}
	refs := make([][]string, len(attrs))
	whole := make([]bool, len(attrs))
	waiting := make([]int, len(attrs)) // locals not yet evaluated that i refers to
	dependents := make([][]int, len(attrs))
	for i, a := range attrs {
		named := map[string]bool{}
		for _, tr := range a.Expr.Variables() {
			if tr.RootName() != "local" {
				continue
			}
			name, ok := localName(tr)
			if !ok {
				whole[i] = true
				continue
			}
			if named[name] {
				continue
			}
			named[name] = true
			refs[i] = append(refs[i], name)
			if j, declared := index[name]; declared {
				waiting[i]++
				dependents[j] = append(dependents[j], i)
			}
		}
	}

	vars := cty.ObjectVal(p.vars)
	done := make([]bool, len(attrs))
	var failed []int
	evaluate := func(i int) {
		done[i] = true
		scope := p.locals
		if whole[i] {
			// Each such local copies every other one into its scope.
			rng := attrs[i].Expr.Range()
			if err := p.budget.charge(int64(len(scope)), &rng); err != nil {
				return
			}
		} else {
			scope = make(map[string]cty.Value, len(refs[i]))
			for _, name := range refs[i] {
				if v, ok := p.locals[name]; ok {
					scope[name] = v
				}
			}
		}
		ctx := &hcl.EvalContext{
			Variables: map[string]cty.Value{"var": vars, "local": cty.ObjectVal(scope)},
			Functions: p.funcs,
		}
		val, diags := p.evalIn(ctx, attrs[i].Expr)
		if diags.HasErrors() {
			failed = append(failed, i)
		} else {
			p.locals[attrs[i].Name] = val
		}
	}

	var queue []int
	for i := range attrs {
		if waiting[i] == 0 && !whole[i] {
			queue = append(queue, i)
		}
	}
	release := func(i int) {
		for _, d := range dependents[i] {
			if waiting[d]--; waiting[d] == 0 && !whole[d] {
				queue = append(queue, d)
			}
		}
	}
	for {
		for len(queue) > 0 && p.budget.err == nil {
			i := queue[0]
			queue = queue[1:]
			evaluate(i)
			release(i)
		}
		// Nothing else can run: the locals that see all others go now.
		progress := false
		for i := range attrs {
			if whole[i] && !done[i] && waiting[i] == 0 && p.budget.err == nil {
				progress = true
				evaluate(i)
				release(i)
			}
		}
		if !progress {
			break
		}
	}

	var last []int
	for i := range attrs {
		if !done[i] {
			last = append(last, i)
		}
	}
	last = append(last, failed...)
	sort.Ints(last)
	if len(last) == 0 || p.budget.err != nil {
		return
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": vars, "local": cty.ObjectVal(p.locals)},
		Functions: p.funcs,
	}
	for _, i := range last {
		_, diags := p.evalIn(ctx, attrs[i].Expr)
		p.diags = append(p.diags, diags...)
	}
}

// localName is the local a reference such as local.name or
// local["name"] names.
func localName(tr hcl.Traversal) (string, bool) {
	if len(tr) < 2 {
		return "", false
	}
	return stepKey(tr[1])
}
