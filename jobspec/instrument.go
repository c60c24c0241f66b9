package jobspec

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/customdecode"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// HCL evaluates for expressions, templates and operators inside
// hclsyntax, with no hook a caller could use to stop them, and a for
// expression nested three deep over 1024 elements runs a billion times.
// So each parsed syntax tree is instrumented before it is evaluated: the
// collection of every for expression and every non-literal template part
// is wrapped in a guard that charges the parse's budget, and arithmetic
// and comparison operators are replaced by checked copies. Dynamic blocks
// are checked through dynblock's for_each hook.

// Costs, in steps, of the work the evaluator and decoder do per item.
const (
	stepsPerNode      = 1
	bytesPerStep      = 128
	stepsPerAttribute = 4
	stepsPerBlock     = 16
	// stepsPerJSONByte prices a JSON-syntax dynamic block's content by its
	// size, since there is no syntax tree to count.
	stepsPerJSONByte = 1
)

// loop is one repetition in a job file: a for expression or a dynamic
// block. Its iterations run its body, which may hold further loops.
type loop struct {
	bound  []string       // names each iteration binds
	coll   hcl.Expression // the collection, unguarded
	body   int64          // steps one iteration costs, nested loops aside
	nested []*loop

	roots  map[string]bool // root names coll refers to, once computed
	static int64           // steps of one iteration including nested loops, once computed
}

// instrumenter rewrites one syntax tree in place.
type instrumenter struct {
	p   *parser
	err *LimitError // a number literal out of range
}

// instrumentFile instruments a native-syntax file; JSON syntax is
// instrumented as its templates are parsed (see jsonExpr).
func (p *parser) instrumentFile(file *hcl.File) *LimitError {
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	in := &instrumenter{p: p}
	in.body(body, nil)
	return in.err
}

// instrumentExpr instruments an expression parsed on its own.
func (p *parser) instrumentExpr(e hclsyntax.Expression) *LimitError {
	in := &instrumenter{p: p}
	in.expr(e, nil)
	return in.err
}

// body instruments the attributes and blocks of a body evaluated once
// per iteration of enc (nil: once), and returns its static cost.
func (in *instrumenter) body(b *hclsyntax.Body, enc *loop) int64 {
	var cost int64
	for _, a := range b.Attributes {
		cost = satAdd(cost, stepsPerAttribute+in.expr(a.Expr, enc))
	}
	for _, blk := range b.Blocks {
		cost = satAdd(cost, stepsPerBlock)
		switch {
		case blk.Type == "dynamic" && len(blk.Labels) == 1:
			cost = satAdd(cost, in.dynamic(blk, enc))
		case blk.Type == "variable":
			// A type constraint is read as written, not evaluated.
			for name, a := range blk.Body.Attributes {
				if name != "type" {
					in.expr(a.Expr, enc)
				}
			}
			in.body(&hclsyntax.Body{Blocks: blk.Body.Blocks}, enc)
		default:
			cost = satAdd(cost, in.body(blk.Body, enc))
		}
	}
	return cost
}

// dynamic records a dynamic block's loop, found again by its for_each
// expression when dynblock expands it.
func (in *instrumenter) dynamic(blk *hclsyntax.Block, enc *loop) int64 {
	l := &loop{bound: []string{blk.Labels[0]}, body: stepsPerBlock}
	var cost int64
	for name, a := range blk.Body.Attributes {
		switch name {
		case "for_each":
			cost = satAdd(cost, in.expr(a.Expr, enc))
			l.coll = a.Expr
		case "iterator":
			if tr, diags := hcl.AbsTraversalForExpr(a.Expr); !diags.HasErrors() && len(tr) == 1 {
				l.bound = []string{tr.RootName()}
			}
		default:
			l.body = satAdd(l.body, in.expr(a.Expr, l))
		}
	}
	for _, c := range blk.Body.Blocks {
		if c.Type == "content" {
			l.body = satAdd(l.body, in.body(c.Body, l))
		} else {
			cost = satAdd(cost, in.body(c.Body, enc))
		}
	}
	if l.coll != nil {
		in.p.dynLoops[posOf(l.coll.Range())] = l
		enc.add(l)
	}
	return cost
}

func (l *loop) add(nested *loop) {
	if l != nil {
		l.nested = append(l.nested, nested)
	}
}

// expr instruments an expression evaluated once per iteration of enc,
// and returns its static cost: its nodes, and a step per 128 bytes of
// literal text, which templates copy.
func (in *instrumenter) expr(e hclsyntax.Expression, enc *loop) int64 {
	if e == nil {
		return 0
	}
	cost := int64(stepsPerNode)
	switch e := e.(type) {
	case *hclsyntax.LiteralValueExpr:
		return in.literal(e)
	case *hclsyntax.ForExpr:
		l := &loop{coll: e.CollExpr, body: stepsPerNode}
		for _, name := range []string{e.KeyVar, e.ValVar} {
			if name != "" {
				l.bound = append(l.bound, name)
			}
		}
		cost = satAdd(cost, in.expr(e.CollExpr, enc))
		for _, x := range []hclsyntax.Expression{e.KeyExpr, e.ValExpr, e.CondExpr} {
			l.body = satAdd(l.body, in.expr(x, l))
		}
		e.CollExpr = &collGuard{ParenthesesExpr: wrap(e.CollExpr), p: in.p, loop: l}
		enc.add(l)
	case *hclsyntax.TemplateExpr:
		for i, part := range e.Parts {
			if lit, ok := part.(*hclsyntax.LiteralValueExpr); ok {
				cost = satAdd(cost, in.literal(lit))
				continue
			}
			cost = satAdd(cost, in.expr(part, enc))
			e.Parts[i] = &partGuard{ParenthesesExpr: wrap(part), p: in.p}
		}
	case *hclsyntax.BinaryOpExpr:
		e.Op = in.p.checkedOp(e.Op)
		cost = satAdd(cost, satAdd(in.expr(e.LHS, enc), in.expr(e.RHS, enc)))
	case *hclsyntax.UnaryOpExpr:
		cost = satAdd(cost, in.expr(e.Val, enc))
	case *hclsyntax.FunctionCallExpr:
		in.p.useFunction(e.Name)
		fn, known := in.p.allFuncs[e.Name]
		for i, a := range e.Args {
			cost = satAdd(cost, in.expr(a, enc))
			// An unknown name fails to evaluate, or is a type
			// constructor such as list(string) that typeexpr reads as
			// written.
			if !known || takesExpression(fn, i) {
				continue
			}
			e.Args[i] = &argGuard{ParenthesesExpr: wrap(a), p: in.p, cheap: cheapFunctions[e.Name]}
		}
	case *hclsyntax.ConditionalExpr:
		cost = satAdd(cost, in.expr(e.Condition, enc))
		cost = satAdd(cost, in.expr(e.TrueResult, enc))
		cost = satAdd(cost, in.expr(e.FalseResult, enc))
	case *hclsyntax.IndexExpr:
		cost = satAdd(cost, satAdd(in.expr(e.Collection, enc), in.expr(e.Key, enc)))
	case *hclsyntax.TupleConsExpr:
		for _, x := range e.Exprs {
			cost = satAdd(cost, in.expr(x, enc))
		}
	case *hclsyntax.ObjectConsExpr:
		for _, item := range e.Items {
			cost = satAdd(cost, satAdd(in.expr(item.KeyExpr, enc), in.expr(item.ValueExpr, enc)))
		}
	case *hclsyntax.ObjectConsKeyExpr:
		cost = satAdd(cost, in.expr(e.Wrapped, enc))
	case *hclsyntax.SplatExpr:
		cost = satAdd(cost, satAdd(in.expr(e.Source, enc), in.expr(e.Each, enc)))
	case *hclsyntax.RelativeTraversalExpr:
		cost = satAdd(cost, in.expr(e.Source, enc))
	case *hclsyntax.TemplateJoinExpr:
		cost = satAdd(cost, in.expr(e.Tuple, enc))
	case *hclsyntax.TemplateWrapExpr:
		cost = satAdd(cost, in.expr(e.Wrapped, enc))
	case *hclsyntax.ParenthesesExpr:
		cost = satAdd(cost, in.expr(e.Expression, enc))
	}
	return cost
}

func (in *instrumenter) literal(e *hclsyntax.LiteralValueExpr) int64 {
	v := e.Val
	if !v.IsKnown() || v.IsNull() {
		return stepsPerNode
	}
	switch v.Type() {
	case cty.String:
		return stepsPerNode + int64(len(v.AsString()))/bytesPerStep
	case cty.Number:
		if !numberInRange(v) && in.err == nil {
			in.err = numberError(e.SrcRange.Ptr())
		}
	}
	return stepsPerNode
}

func wrap(e hclsyntax.Expression) *hclsyntax.ParenthesesExpr {
	return &hclsyntax.ParenthesesExpr{Expression: e, SrcRange: e.Range()}
}

// collGuard wraps a for expression's collection. Embedding
// *ParenthesesExpr keeps it an hclsyntax node whose walks (Variables,
// scope analysis) see the collection unchanged; only Value is replaced.
type collGuard struct {
	*hclsyntax.ParenthesesExpr
	p    *parser
	loop *loop
}

// Value evaluates the collection and admits the iterations before the
// for expression runs them: an error here makes it return at once.
func (g *collGuard) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	rng := g.Range()
	if err := g.p.budget.check(&rng); err != nil {
		return cty.DynamicVal, limitDiag(err, rng)
	}
	v, diags := g.Expression.Value(ctx)
	if diags.HasErrors() {
		return v, diags
	}
	if n, ok := iterLength(v); ok {
		if err := g.p.admitLoop(g.loop, ctx, n, &rng); err != nil {
			return cty.DynamicVal, append(diags, limitDiag(err, rng)...)
		}
	}
	return v, diags
}

// partGuard wraps a template interpolation and charges the text it adds,
// since repeating one large string in a template costs no input.
type partGuard struct {
	*hclsyntax.ParenthesesExpr
	p *parser
}

func (g *partGuard) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	rng := g.Range()
	if err := g.p.budget.check(&rng); err != nil {
		return cty.DynamicVal, limitDiag(err, rng)
	}
	v, diags := g.Expression.Value(ctx)
	if diags.HasErrors() {
		return v, diags
	}
	if s, _ := v.Unmark(); s.IsKnown() && !s.IsNull() && s.Type() == cty.String {
		if err := g.p.budget.charge(int64(len(s.AsString()))/bytesPerStep, &rng); err != nil {
			return cty.DynamicVal, append(diags, limitDiag(err, rng)...)
		}
	}
	return v, diags
}

// argGuard wraps a function argument and charges its value before hcl
// converts it to the parameter's type, which for a large tuple or object
// costs more than the function itself.
type argGuard struct {
	*hclsyntax.ParenthesesExpr
	p     *parser
	cheap bool // the function does constant work on collections
}

func (g *argGuard) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	rng := g.Range()
	if err := g.p.budget.check(&rng); err != nil {
		return cty.DynamicVal, limitDiag(err, rng)
	}
	v, diags := g.Expression.Value(ctx)
	if diags.HasErrors() {
		return v, diags
	}
	var err *LimitError
	if u, _ := v.Unmark(); g.cheap && u.Type() != cty.String {
		err = g.p.budget.charge(stepsPerNode, &rng)
	} else {
		err = g.p.budget.chargeValue(v, &rng)
	}
	if err != nil {
		return cty.DynamicVal, append(diags, limitDiag(err, rng)...)
	}
	return v, diags
}

// takesExpression reports whether a function's i-th parameter receives
// the argument's expression rather than its value (try, can, convert's
// type), which must stay as written.
func takesExpression(fn function.Function, i int) bool {
	params := fn.Params()
	var param *function.Parameter
	switch {
	case i < len(params):
		param = &params[i]
	default:
		param = fn.VarParam()
	}
	return param != nil && customdecode.CustomExpressionDecoderForType(param.Type) != nil
}

// admitLoop admits n iterations of l. Before charging what is certain to
// run, it estimates the whole repetition, nested loops included, so that
// a product such as 1024 x 1024 x 1024 is refused at once rather than
// after the budget has been spent iteration by iteration.
func (p *parser) admitLoop(l *loop, ctx *hcl.EvalContext, n int64, subject *hcl.Range) *LimitError {
	cost := satMul(n, l.body)
	est := cost
	if len(l.nested) > 0 {
		est = p.estimate(l, ctx, n, nil, 0)
	}
	return p.budget.admit(est, cost, subject)
}

// estimate is the cost of n iterations of l. A nested loop whose
// collection does not depend on the names bound so far is evaluated now
// to learn its length; one that does counts as a single iteration, and
// is charged for real when it runs.
func (p *parser) estimate(l *loop, ctx *hcl.EvalContext, n int64, bound map[string]bool, depth int) int64 {
	per := l.body
	if len(l.nested) > 0 && depth < p.lim.depth {
		inner := make(map[string]bool, len(bound)+len(l.bound))
		for name := range bound {
			inner[name] = true
		}
		for _, name := range l.bound {
			inner[name] = true
		}
		for _, m := range l.nested {
			per = satAdd(per, p.estimateNested(m, ctx, inner, depth+1))
			if satMul(n, per) > p.budget.remaining() {
				break
			}
		}
	} else {
		per = l.staticCost()
	}
	return satMul(n, per)
}

func (p *parser) estimateNested(m *loop, ctx *hcl.EvalContext, bound map[string]bool, depth int) int64 {
	if p.budget.err != nil || m.coll == nil || m.dependsOn(bound) {
		return m.staticCost()
	}
	v, diags := m.coll.Value(ctx)
	if diags.HasErrors() {
		return m.staticCost()
	}
	n, ok := iterLength(v)
	if !ok {
		return m.staticCost()
	}
	return p.estimate(m, ctx, n, bound, depth)
}

func (l *loop) dependsOn(bound map[string]bool) bool {
	if l.roots == nil {
		l.roots = map[string]bool{}
		for _, tr := range l.coll.Variables() {
			l.roots[tr.RootName()] = true
		}
	}
	for name := range l.roots {
		if bound[name] {
			return true
		}
	}
	return false
}

// staticCost is one iteration of l and of each loop nested in it.
func (l *loop) staticCost() int64 {
	if l.static == 0 {
		s := l.body
		for _, m := range l.nested {
			s = satAdd(s, m.staticCost())
		}
		l.static = max(s, 1)
	}
	return l.static
}

// checkForEach is dynblock's hook, run when a dynamic block's for_each
// is known and before its blocks are generated.
func (p *parser) checkForEach(v cty.Value, expr hcl.Expression, ctx *hcl.EvalContext) hcl.Diagnostics {
	rng := expr.Range()
	n, ok := iterLength(v)
	if !ok {
		if err := p.budget.check(&rng); err != nil {
			return limitDiag(err, rng)
		}
		return nil
	}
	var err *LimitError
	if l := p.dynLoops[posOf(rng)]; l != nil {
		err = p.admitLoop(l, ctx, n, &rng)
	} else {
		per := p.jsonDynCost[posOf(rng)]
		err = p.budget.charge(satMul(n, max(per, stepsPerBlock)), &rng)
	}
	if err != nil {
		return limitDiag(err, rng)
	}
	return nil
}

type srcPos struct {
	filename string
	offset   int
}

func posOf(r hcl.Range) srcPos { return srcPos{r.Filename, r.Start.Byte} }

// checkedOp returns a copy of a binary operator that checks its work:
// products and quotients must stay printable numbers, and equality of
// collections walks both sides, so it is charged their size.
func (p *parser) checkedOp(op *hclsyntax.Operation) *hclsyntax.Operation {
	if c, ok := p.ops[op]; ok {
		return c
	}
	var numeric bool
	switch op {
	case hclsyntax.OpMultiply, hclsyntax.OpDivide, hclsyntax.OpModulo:
		numeric = true
	case hclsyntax.OpEqual, hclsyntax.OpNotEqual:
	default:
		p.ops[op] = op
		return op
	}
	impl := op.Impl
	checked := function.New(&function.Spec{
		Params: impl.Params(),
		Type:   impl.ReturnTypeForValues,
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if err := p.budget.check(nil); err != nil {
				return cty.UnknownVal(op.Type), err
			}
			if !numeric {
				for _, a := range args {
					if err := p.budget.chargeValue(a, nil); err != nil {
						return cty.UnknownVal(op.Type), err
					}
				}
			}
			result, err := impl.Call(args)
			if err != nil {
				return result, err
			}
			if r, _ := result.Unmark(); numeric && r.IsKnown() && !r.IsNull() && !numberInRange(r) {
				return cty.UnknownVal(op.Type), p.budget.fail(numberError(nil))
			}
			return result, nil
		},
	})
	c := *op
	c.Impl = checked
	p.ops[op] = &c
	return &c
}
