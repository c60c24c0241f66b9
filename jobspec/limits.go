package jobspec

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// A job file is a program: functions, for expressions, dynamic blocks and
// locals can make a few bytes of input demand unbounded memory or time,
// and deep nesting overflows the parser's stack, which is fatal to the
// process rather than an error. A server parses files sent by anyone who
// can reach its HTTP API, so every parse stays within these limits and
// fails with a *LimitError when input would cross one.
const (
	// MaxSourceBytes bounds the job file, each variables file and each
	// -var or NOMAD_VAR_ value.
	MaxSourceBytes = 1 << 20
	// MaxNestingDepth bounds how deeply brackets, blocks, templates,
	// template directives and operator chains nest, and how deeply values
	// nest. Real jobs stay below 20.
	MaxNestingDepth = 128
	// MaxEvalSteps bounds the work of evaluating one job: each for
	// expression or dynamic block iteration costs its body's size, each
	// value a function, local or attribute produces costs one step per
	// element and one per 128 bytes of string. A step is about a
	// microsecond of work; the largest real jobs need a few thousand.
	MaxEvalSteps = 200_000
	// MaxEvalTime bounds the wall-clock time of evaluating one job, in
	// case some work escapes the step count.
	MaxEvalTime = 2 * time.Second
	// maxNumberExp bounds the binary exponent of numbers, so that
	// printing one stays cheap (2^1024 is about 1.8e308).
	maxNumberExp = 1024
	// comparisonsPerStep prices cty's type unification.
	comparisonsPerStep = 32
)

// LimitKind names the limit a parse crossed.
type LimitKind int

const (
	// LimitSize: an input is larger than MaxSourceBytes.
	LimitSize LimitKind = iota + 1
	// LimitDepth: syntax or a value nests deeper than MaxNestingDepth.
	LimitDepth
	// LimitEvaluation: evaluation would take more than MaxEvalSteps, or a
	// number is out of range.
	LimitEvaluation
	// LimitTime: evaluation ran longer than MaxEvalTime, or its context
	// was canceled.
	LimitTime
)

// LimitError is a parse stopped at one of the limits. Callers tell it
// from a plain syntax error with errors.As.
type LimitError struct {
	Kind LimitKind
	// Subject is where the limit was crossed, when known.
	Subject *hcl.Range
	Msg     string
}

func (e *LimitError) Error() string {
	if e.Subject == nil || e.Subject.Filename == "" {
		return e.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Subject.Filename, e.Subject.Start.Line, e.Subject.Start.Column, e.Msg)
}

// limits are the bounds of one parse; tests lower them.
type limits struct {
	sourceBytes int
	depth       int
	steps       int64
	time        time.Duration
}

var defaultLimits = limits{
	sourceBytes: MaxSourceBytes,
	depth:       MaxNestingDepth,
	steps:       MaxEvalSteps,
	time:        MaxEvalTime,
}

func (l limits) sizeError(what string, n int) *LimitError {
	if n <= l.sourceBytes {
		return nil
	}
	return &LimitError{Kind: LimitSize, Msg: fmt.Sprintf("%s exceeds the maximum size of %d bytes", what, l.sourceBytes)}
}

func (l limits) depthError(subject hcl.Range) *LimitError {
	return &LimitError{Kind: LimitDepth, Subject: subject.Ptr(), Msg: fmt.Sprintf("nesting depth exceeds the limit of %d", l.depth)}
}

// budget is the evaluation allowance of one parse. The first limit
// crossed sticks: every later check fails at once, so that evaluation
// already under way (a for expression's remaining iterations, a try()
// that swallowed the error) unwinds cheaply and the parse reports it.
type budget struct {
	lim      limits
	used     int64
	deadline time.Time
	ctx      context.Context
	err      *LimitError
}

func newBudget(lim limits, ctx context.Context) *budget {
	b := &budget{lim: lim, ctx: ctx}
	b.startClock()
	return b
}

// startClock starts the evaluation's time limit.
func (b *budget) startClock() {
	b.deadline = time.Now().Add(b.lim.time)
}

func (b *budget) remaining() int64 {
	if b.err != nil {
		return 0
	}
	return b.lim.steps - b.used
}

// fail records the first limit crossed and returns it.
func (b *budget) fail(err *LimitError) *LimitError {
	if b.err == nil {
		b.err = err
	}
	return b.err
}

func (b *budget) stepsError(subject *hcl.Range) *LimitError {
	return b.fail(&LimitError{Kind: LimitEvaluation, Subject: subject,
		Msg: fmt.Sprintf("evaluation exceeds the limit of %d steps", b.lim.steps)})
}

// check fails if a limit was crossed before, the time is up or the
// caller gave up.
func (b *budget) check(subject *hcl.Range) *LimitError {
	if b.err != nil {
		return b.err
	}
	if time.Now().After(b.deadline) {
		return b.fail(&LimitError{Kind: LimitTime, Subject: subject,
			Msg: fmt.Sprintf("evaluation exceeds the time limit of %s", b.lim.time)})
	}
	if b.ctx != nil && b.ctx.Err() != nil {
		return b.fail(&LimitError{Kind: LimitTime, Subject: subject,
			Msg: fmt.Sprintf("evaluation stopped: %v", b.ctx.Err())})
	}
	return nil
}

// admit checks that work estimated at est steps fits before charging
// cost steps, the part of it that is certain to run now.
func (b *budget) admit(est, cost int64, subject *hcl.Range) *LimitError {
	if err := b.check(subject); err != nil {
		return err
	}
	if est > b.remaining() || cost > b.remaining() {
		return b.stepsError(subject)
	}
	b.used += cost
	return nil
}

func (b *budget) charge(cost int64, subject *hcl.Range) *LimitError {
	return b.admit(cost, cost, subject)
}

// chargeValue charges the size of a value that is about to be used, and
// checks its depth and numbers.
func (b *budget) chargeValue(v cty.Value, subject *hcl.Range) *LimitError {
	if err := b.check(subject); err != nil {
		return err
	}
	size, err := b.measure(v, b.remaining())
	if err != nil {
		return err
	}
	if size > b.remaining() {
		return b.stepsError(subject)
	}
	b.used += size
	return nil
}

// measure sizes a value: one step per element and per 128 bytes of
// string, as if written out, so that a value sharing one large part many
// times is as large as its copies would be. It stops counting past max.
func (b *budget) measure(v cty.Value, max int64) (int64, *LimitError) {
	m := meter{max: max, depth: b.lim.depth}
	m.walk(v, 0)
	if m.err != nil {
		return 0, b.fail(m.err)
	}
	return m.size, nil
}

type meter struct {
	max   int64
	size  int64
	depth int
	err   *LimitError
}

func (m *meter) walk(v cty.Value, depth int) bool {
	if m.size > m.max {
		return false
	}
	if depth > m.depth {
		m.err = &LimitError{Kind: LimitDepth, Msg: fmt.Sprintf("a value's nesting depth exceeds the limit of %d", m.depth)}
		return false
	}
	v, _ = v.Unmark()
	m.size++
	if !v.IsKnown() || v.IsNull() {
		return true
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		m.size += int64(len(v.AsString())) / bytesPerStep
	case ty == cty.Number:
		if !numberInRange(v) {
			m.err = numberError(nil)
			return false
		}
	case ty.IsListType(), ty.IsSetType(), ty.IsTupleType(), ty.IsMapType(), ty.IsObjectType():
		before := m.size
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if !m.walk(e, depth+1) {
				return false
			}
		}
		// Converting a tuple to a list or an object to a map, which
		// function arguments and the decoder do, unifies the types of
		// all elements pairwise: n elements holding s values cost n*s
		// type comparisons.
		if ty.IsTupleType() || ty.IsObjectType() {
			m.size = satAdd(m.size, satMul(int64(v.LengthInt()), m.size-before)/comparisonsPerStep)
		}
	}
	return m.size <= m.max
}

// numberInRange reports whether a known number is small enough to print
// cheaply: arbitrary precision lets 1e999999999 be written in a few
// bytes and take minutes to format.
func numberInRange(v cty.Value) bool {
	f := v.AsBigFloat()
	if f.IsInf() || f.Sign() == 0 {
		return true
	}
	exp := f.MantExp(nil)
	return exp <= maxNumberExp && exp >= -maxNumberExp
}

func numberError(subject *hcl.Range) *LimitError {
	return &LimitError{Kind: LimitEvaluation, Subject: subject,
		Msg: fmt.Sprintf("a number exceeds the limit of 2^%d in magnitude", maxNumberExp)}
}

// Saturating arithmetic for estimates, which may multiply untrusted
// sizes.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// iterLength is the number of iterations a for expression or dynamic
// block makes over v, if v is a known collection.
func iterLength(v cty.Value) (int64, bool) {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() || !v.CanIterateElements() {
		return 0, false
	}
	return int64(v.LengthInt()), true
}

// limitDiag turns a limit into the diagnostic that stops the evaluation
// in progress; Parse reports the LimitError itself.
func limitDiag(err *LimitError, subject hcl.Range) hcl.Diagnostics {
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Limit exceeded",
		Detail:   err.Msg,
		Subject:  subject.Ptr(),
	}}
}
