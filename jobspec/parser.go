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
	funcs  map[string]function.Function

	diags    hcl.Diagnostics
	warnings []string
	warned   map[string]bool
}

type bodyPos struct {
	filename string
	offset   int
}

func newParser(filename string, src []byte, opts Options) *parser {
	return &parser{
		filename: filename,
		opts:     opts,
		sources:  map[string][]byte{filename: src},
		syntax:   map[bodyPos]*hclsyntax.Body{},
		vars:     map[string]cty.Value{},
		locals:   map[string]cty.Value{},
		funcs:    functions(opts.BaseDir, opts.AllowFS),
		warned:   map[string]bool{},
	}
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
	if p.diags.HasErrors() {
		return nil
	}
	p.decodeLocals(content.Blocks)
	if p.diags.HasErrors() {
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
	expanded := dynblock.Expand(jobBlock.Body, p.evalContext())
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
