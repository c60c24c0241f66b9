package jobspec

import (
	"fmt"
	"reflect"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/opennomad/nomad/api"
)

// parser holds the state of one parse. It is used by one goroutine.
type parser struct {
	filename string
	opts     Options
	// sources maps file names to their text, so that a runtime
	// interpolation can be reproduced exactly as written.
	sources map[string][]byte
	// syntax maps the start of every native-syntax body to the body, so
	// that free-form blocks (config, meta, env) can list their contents
	// even when dynamic-block expansion has wrapped them.
	syntax map[bodyPos]*hclsyntax.Body

	vars   map[string]cty.Value
	locals map[string]cty.Value
	// funcs are the functions expressions can call: those of allFuncs
	// that the instrumented expressions name, wrapped (useFunction).
	funcs    map[string]function.Function
	allFuncs map[string]function.Function
	// ctx is the job's evaluation context once variables and locals are
	// known; building it costs a copy of every local.
	ctx *hcl.EvalContext

	lim    limits
	budget *budget
	// dynLoops finds a dynamic block's loop by its for_each expression;
	// jsonDynCost prices JSON-syntax ones, which have no syntax tree.
	dynLoops      map[srcPos]*loop
	jsonDynCost   map[srcPos]int64
	ops           map[*hclsyntax.Operation]*hclsyntax.Operation
	jsonTemplates map[jsonTemplateKey]hclsyntax.Expression

	diags    hcl.Diagnostics
	warnings []string
	warned   map[string]bool
}

type bodyPos struct {
	filename string
	offset   int
}

func newParser(filename string, src []byte, opts Options) *parser {
	lim := defaultLimits
	if opts.limits != nil {
		lim = *opts.limits
	}
	p := &parser{
		filename:      filename,
		opts:          opts,
		sources:       map[string][]byte{filename: src},
		syntax:        map[bodyPos]*hclsyntax.Body{},
		vars:          map[string]cty.Value{},
		locals:        map[string]cty.Value{},
		lim:           lim,
		budget:        newBudget(lim, opts.Context),
		dynLoops:      map[srcPos]*loop{},
		jsonDynCost:   map[srcPos]int64{},
		ops:           map[*hclsyntax.Operation]*hclsyntax.Operation{},
		jsonTemplates: map[jsonTemplateKey]hclsyntax.Expression{},
		warned:        map[string]bool{},
	}
	p.allFuncs = functions(opts.BaseDir, opts.AllowFS)
	p.allFuncs["try"] = tryFunc
	p.funcs = map[string]function.Function{}
	return p
}

// parseChecked parses one source after checking it against the size and
// nesting limits, and instruments it for evaluation. A limit crossed is
// recorded in the budget, where Parse finds it.
func (p *parser) parseChecked(what, filename string, src []byte) (*hcl.File, hcl.Diagnostics) {
	if err := p.lim.sizeError(what, len(src)); err != nil {
		p.budget.fail(err)
		return nil, nil
	}
	if err := checkNesting(filename, src, p.lim.depth); err != nil {
		p.budget.fail(err)
		return nil, nil
	}
	file, diags := parseSource(filename, src)
	if diags.HasErrors() {
		return file, diags
	}
	if _, native := file.Body.(*hclsyntax.Body); !native {
		file.Body = &jsonBody{Body: file.Body, p: p}
	} else if err := p.instrumentFile(file); err != nil {
		p.budget.fail(err)
	}
	return file, diags
}

// indexSyntax records every block body of a native-syntax file.
func (p *parser) indexSyntax(file *hcl.File) {
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok {
		return
	}
	var walk func(b *hclsyntax.Body)
	walk = func(b *hclsyntax.Body) {
		p.syntax[bodyPos{b.SrcRange.Filename, b.SrcRange.Start.Byte}] = b
		for _, blk := range b.Blocks {
			walk(blk.Body)
		}
	}
	walk(body)
}

// syntaxBody finds the native-syntax body behind a (possibly wrapped) body.
func (p *parser) syntaxBody(body hcl.Body) *hclsyntax.Body {
	if b, ok := body.(*hclsyntax.Body); ok {
		return b
	}
	r := body.MissingItemRange()
	return p.syntax[bodyPos{r.Filename, r.Start.Byte}]
}

var rootSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "job", LabelNames: []string{"name"}},
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "variables"},
		{Type: "locals"},
	},
}

// decodeFile decodes the top level: variables first, then locals, then
// the one job block.
func (p *parser) decodeFile(body hcl.Body) *api.Job {
	content, diags := body.Content(rootSchema)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	p.decodeVariables(content.Blocks)
	if p.diags.HasErrors() || p.budget.err != nil {
		return nil
	}
	p.decodeLocals(content.Blocks)
	if p.diags.HasErrors() || p.budget.err != nil {
		return nil
	}

	var jobBlock *hcl.Block
	for _, b := range content.Blocks {
		if b.Type != "job" {
			continue
		}
		if jobBlock != nil {
			p.errorf(&b.DefRange, "Duplicate job block",
				"Only one job block is allowed in a file; another was defined at %s.", jobBlock.DefRange)
			continue
		}
		jobBlock = b
	}
	if jobBlock == nil {
		p.diags = append(p.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing job block",
			Detail:   "A job file must contain one job block.",
			Subject:  body.MissingItemRange().Ptr(),
		})
		return nil
	}

	id := jobBlock.Labels[0]
	if id == "" {
		p.errorf(&jobBlock.LabelRanges[0], "Invalid job name", "The job block's label (the job ID) must not be empty.")
	}
	job := &api.Job{}
	scope := fmt.Sprintf("job %q", id)
	expanded := dynblock.Expand(jobBlock.Body, p.evalContext(), dynblock.OptCheckForEach(p.checkForEach))
	p.decodeStruct(expanded, reflect.ValueOf(job).Elem(), scope)
	if job.ID == nil {
		job.ID = new(id)
	}
	if job.Name == nil {
		job.Name = new(id)
	}
	normalizeJob(job)
	return job
}

// errorf records an error diagnostic at subject.
func (p *parser) errorf(subject *hcl.Range, summary, detail string, args ...any) {
	p.diags = append(p.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(detail, args...),
		Subject:  subject,
	})
}

// warn records a warning once.
func (p *parser) warn(msg string) {
	if p.warned[msg] {
		return
	}
	p.warned[msg] = true
	p.warnings = append(p.warnings, msg)
}
