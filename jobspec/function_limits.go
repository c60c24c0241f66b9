package jobspec

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/customdecode"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Functions are where a few bytes of input can ask for gigabytes:
// range(1e9), indent(2147483647, "x"), format("%2147483647s", "x"),
// setproduct of three 1000-element lists. Every function is wrapped so
// that, before it runs, the size of its result is estimated from its
// arguments where it can exceed theirs, and after it runs its result is
// charged to the parse's budget. Arguments are charged as they are
// evaluated (argGuard).

// cheapFunctions do constant work whatever the size of their collection
// arguments, which they take without conversion (their results are still
// charged), so that indexing a list in a loop costs each iteration one
// step, not the list's size.
var cheapFunctions = map[string]bool{
	"length": true, "element": true, "lookup": true, "keys": true, "values": true,
	"coalesce": true, "coalescelist": true,
}

// resultEstimates bound, in steps, the result of functions whose result
// can be much larger than their arguments.
var resultEstimates = map[string]func(args []cty.Value) int64{
	"range":      rangeEstimate,
	"setproduct": setProductEstimate,
	"indent": func(args []cty.Value) int64 {
		spaces, s := num(args[0]), str(args[1])
		lines := float64(strings.Count(s, "\n") + 1)
		return bytesSteps(float64(len(s)) + math.Max(spaces, 0)*lines)
	},
	"format": func(args []cty.Value) int64 {
		return bytesSteps(float64(formatSize(str(args[0]))))
	},
	"formatlist": func(args []cty.Value) int64 {
		n := 1
		for _, a := range args[1:] {
			if a, _ := a.Unmark(); a.IsKnown() && !a.IsNull() && (a.Type().IsListType() || a.Type().IsTupleType()) {
				n = max(n, a.LengthInt())
			}
		}
		return satAdd(int64(n), satMul(int64(n), bytesSteps(float64(formatSize(str(args[0]))))))
	},
	"join": func(args []cty.Value) int64 {
		sep, total, count := len(str(args[0])), 0.0, 0.0
		for _, l := range args[1:] {
			if l, _ := l.Unmark(); l.IsKnown() && !l.IsNull() && l.CanIterateElements() {
				for it := l.ElementIterator(); it.Next(); {
					_, e := it.Element()
					total += float64(len(str(e)))
					count++
				}
			}
		}
		return bytesSteps(total + count*float64(sep))
	},
	"replace": func(args []cty.Value) int64 {
		s, sub, repl := str(args[0]), str(args[1]), str(args[2])
		return bytesSteps(float64(len(s)) + float64(occurrences(s, sub))*float64(len(repl)))
	},
	"regex_replace": func(args []cty.Value) int64 {
		s, pattern, repl := str(args[0]), str(args[1]), str(args[2])
		refs := float64(strings.Count(repl, "$"))
		out := float64(len(s))*(1+refs) + float64(len(s)+1)*float64(len(repl))
		return satAdd(regexCost(pattern, s), bytesSteps(out))
	},
	"regex": func(args []cty.Value) int64 {
		return regexCost(str(args[0]), str(args[1]))
	},
	"regexall": func(args []cty.Value) int64 {
		pattern, s := str(args[0]), str(args[1])
		return satAdd(regexCost(pattern, s), int64(len(s)+1))
	},
	"split": func(args []cty.Value) int64 {
		sep, s := str(args[0]), str(args[1])
		return satAdd(int64(occurrences(s, sep)+1), bytesSteps(float64(len(s))))
	},
	"chunklist": func(args []cty.Value) int64 {
		if l, _ := args[0].Unmark(); l.IsKnown() && !l.IsNull() && l.CanIterateElements() {
			return satMul(2, int64(l.LengthInt())+1)
		}
		return 0
	},
	// A byte of JSON or CSV can become an element.
	"jsondecode": func(args []cty.Value) int64 { return int64(len(str(args[0]))) },
	"csvdecode":  func(args []cty.Value) int64 { return int64(len(str(args[0]))) },
	// A letter of the format can become a month's name.
	"formatdate": func(args []cty.Value) int64 { return bytesSteps(10 * float64(len(str(args[0])))) },
}

// useFunction makes a function callable in the parse, wrapped. Only
// functions an expression names are wrapped, which is cheaper than
// wrapping all; a name that is no function gets every one, so that hcl's
// error can suggest the closest.
func (p *parser) useFunction(name string) {
	if _, ok := p.funcs[name]; ok {
		return
	}
	if fn, ok := p.allFuncs[name]; ok {
		p.funcs[name] = p.limitFunction(name, fn)
		return
	}
	for name, fn := range p.allFuncs {
		if _, ok := p.funcs[name]; !ok {
			p.funcs[name] = p.limitFunction(name, fn)
		}
	}
}

func (p *parser) limitFunction(name string, fn function.Function) function.Function {
	estimate := resultEstimates[name]
	return function.New(&function.Spec{
		Description: fn.Description(),
		Params:      fn.Params(),
		VarParam:    fn.VarParam(),
		Type: func(args []cty.Value) (cty.Type, error) {
			if err := p.beforeCall(name, args, estimate); err != nil {
				return cty.NilType, err
			}
			return fn.ReturnTypeForValues(args)
		},
		Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
			v, err := fn.Call(args)
			if err != nil {
				return v, err
			}
			if err := p.budget.chargeValue(v, nil); err != nil {
				return cty.UnknownVal(retType), err
			}
			return v, nil
		},
	})
}

// beforeCall checks that a call's estimated result fits the budget; its
// arguments were charged as they were evaluated (argGuard). The type
// check runs before the implementation, so this refuses a call before it
// allocates anything.
func (p *parser) beforeCall(name string, args []cty.Value, estimate func([]cty.Value) int64) error {
	if err := p.budget.check(nil); err != nil {
		return err
	}
	var est int64
	if estimate != nil && allKnown(args) {
		est = estimate(args)
	}
	if name == "file" || name == "filebase64" {
		est = satAdd(est, p.fileEstimate(args))
	}
	if name == "jsondecode" && allKnown(args) {
		if err := checkJSONNesting("", []byte(str(args[0])), p.lim.depth); err != nil {
			return p.budget.fail(&LimitError{Kind: LimitDepth, Msg: err.Msg})
		}
	}
	if name == "parseint" && allKnown(args) && len(str(args[0])) > maxNumberExp+2 {
		return p.budget.fail(numberError(nil))
	}
	if err := p.budget.admit(est, 0, nil); err != nil {
		return err
	}
	return nil
}

// fileEstimate is the size of the file a file function would read, so
// that it is refused before it is read.
func (p *parser) fileEstimate(args []cty.Value) int64 {
	if !p.opts.AllowFS || !allKnown(args) {
		return 0
	}
	st, err := os.Stat(resolvePath(p.opts.BaseDir, str(args[0])))
	if err != nil {
		return 0
	}
	return bytesSteps(2 * float64(st.Size()))
}

func allKnown(args []cty.Value) bool {
	for _, a := range args {
		if a, _ := a.Unmark(); !a.IsWhollyKnown() || a.IsNull() {
			return false
		}
	}
	return true
}

// str is a known string argument, or "" for anything else.
func str(v cty.Value) string {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

// num is a known number argument as a float, or 0.
func num(v cty.Value) float64 {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.Number {
		return 0
	}
	f, _ := v.AsBigFloat().Float64()
	return f
}

// bytesSteps converts a byte count, possibly huge or not a number, to
// steps.
func bytesSteps(n float64) int64 {
	steps := n / bytesPerStep
	if math.IsNaN(steps) || steps <= 0 {
		return 0
	}
	if steps >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(steps)
}

func rangeEstimate(args []cty.Value) int64 {
	start, limit, step := 0.0, 0.0, 1.0
	switch len(args) {
	case 1:
		limit = num(args[0])
	case 2:
		start, limit = num(args[0]), num(args[1])
	case 3:
		start, limit, step = num(args[0]), num(args[1]), num(args[2])
	}
	if step == 0 {
		return 0
	}
	n := math.Ceil((limit - start) / step)
	if math.IsNaN(n) || n <= 0 {
		return 0
	}
	if n >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(n)
}

func setProductEstimate(args []cty.Value) int64 {
	product := int64(1)
	for _, a := range args {
		a, _ := a.Unmark()
		if !a.IsKnown() || a.IsNull() || !a.CanIterateElements() {
			return 0
		}
		product = satMul(product, int64(a.LengthInt()))
	}
	return satMul(product, int64(len(args)+1))
}

// occurrences counts where a substring would be replaced or split; an
// empty one matches between every character.
func occurrences(s, sub string) int {
	if sub == "" {
		return utf8.RuneCountInString(s) + 1
	}
	return strings.Count(s, sub)
}

// regexCost is the matching work: RE2 is linear in the text for a given
// pattern, so the product of the two bounds it.
func regexCost(pattern, s string) int64 {
	return satMul(int64(len(pattern))+1, int64(len(s))+1) / 256
}

// formatSize bounds the length of format's output apart from its
// arguments: the format's own text plus every verb's width and
// precision, which pad without limit.
func formatSize(f string) int64 {
	n := int64(len(f))
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			continue
		}
		for i < len(f) && strings.IndexByte("#0-+ ", f[i]) >= 0 {
			i++
		}
		var width, prec int64
		width, i = digits(f, i)
		if i < len(f) && f[i] == '.' {
			prec, i = digits(f, i+1)
		}
		n = satAdd(n, satAdd(width, prec))
		if i < len(f) && f[i] == '[' {
			for i < len(f) && f[i] != ']' {
				i++
			}
		}
	}
	return n
}

// digits reads a decimal number at f[i:], saturating, and returns it and
// the index after it.
func digits(f string, i int) (int64, int) {
	var n int64
	for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
		n = satAdd(satMul(n, 10), int64(f[i]-'0'))
	}
	return n, i
}

// tryFunc is hcl's try() evaluating its arguments once: hcl's own runs
// them for the call's type and again for its value, which nested n deep
// is 2^n evaluations.
var tryFunc = function.New(&function.Spec{
	Description: "Returns the value of the first argument that evaluates without errors.",
	VarParam: &function.Parameter{
		Name: "expressions",
		Type: customdecode.ExpressionClosureType,
	},
	Type: function.StaticReturnType(cty.DynamicPseudoType),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if len(args) == 0 {
			return cty.NilVal, errors.New("at least one argument is required")
		}
		var diags hcl.Diagnostics
		for _, arg := range args {
			v, more := customdecode.ExpressionClosureFromVal(arg).Value()
			diags = append(diags, more...)
			if more.HasErrors() {
				continue
			}
			if !v.IsWhollyKnown() {
				return cty.DynamicVal, nil
			}
			return v, nil
		}
		var buf strings.Builder
		buf.WriteString("no expression succeeded:\n")
		for _, d := range diags {
			if d.Subject != nil {
				fmt.Fprintf(&buf, "- %s (at %s)\n  %s\n", d.Summary, d.Subject, d.Detail)
			} else {
				fmt.Fprintf(&buf, "- %s\n  %s\n", d.Summary, d.Detail)
			}
		}
		buf.WriteString("\nAt least one expression must produce a successful result")
		return cty.NilVal, errors.New(buf.String())
	},
})
