// Package jobspec parses HCL2 job files into api.Job values, so that job
// files written for Nomad parse to the same job: variables (with types,
// defaults and validation, set from -var flags, -var-file files and
// NOMAD_VAR_* environment variables), locals, dynamic blocks, functions,
// and every job, group and task block Nomad documents.
//
// Runtime interpolations such as "${attr.kernel.name}" or
// "${NOMAD_ALLOC_DIR}" are not variables of the job file: they are kept as
// literal text for the scheduler and the client to resolve.
//
// Blocks the server stores but does not act on (template, vault, ...) are decoded into the api types and reported in Result.Warnings; the
// few blocks api has no type for are checked for their labels and
// reported as ignored.
package jobspec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"

	"github.com/opennomad/nomad/api"
)

// Options carries the inputs of a parse beyond the job file itself.
type Options struct {
	// ArgVars are -var flag values, each "name=value", in command-line
	// order. They take precedence over every other source.
	ArgVars []string
	// VarFiles are the contents of -var-file files, in command-line order;
	// a later file overrides an earlier one.
	VarFiles []VarFile
	// Env is the process environment as "KEY=value" pairs (os.Environ());
	// only NOMAD_VAR_<name> entries for declared variables are read.
	Env []string
	// AllowFS enables the functions that read the file system (file,
	// filebase64, fileexists, fileset, abspath, pathexpand). The CLI turns
	// it on; a server parsing a submitted job must not.
	AllowFS bool
	// BaseDir is the directory relative paths in file functions resolve
	// against; empty means the job file's directory.
	BaseDir string
	// Context, when set, stops evaluation once it is done, e.g. when the
	// HTTP request asking for the parse has gone away.
	Context context.Context

	limits *limits // tests lower the limits
}

// VarFile is one variables file: HCL (or JSON) attributes assigning values
// to declared variables.
type VarFile struct {
	// Name is used in error positions; a ".json" suffix selects JSON.
	Name    string
	Content []byte
}

// ReadVarFiles reads -var-file paths into VarFiles.
func ReadVarFiles(paths ...string) ([]VarFile, error) {
	out := make([]VarFile, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading variables file: %w", err)
		}
		out = append(out, VarFile{Name: p, Content: b})
	}
	return out, nil
}

// Result is a parsed job and what the parser wants the user to know.
type Result struct {
	// Job is the job as written; call Job.Canonicalize to fill defaults.
	Job *api.Job
	// Warnings name each block that was parsed but will not be acted on by
	// this server, e.g. `group "web": volume blocks are parsed but not
	// acted on by this server`.
	Warnings []string
}

// ParseFile reads and parses a job file.
func ParseFile(path string, opts Options) (*Result, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading job file: %w", err)
	}
	return Parse(path, src, opts)
}

// Parse parses the job file src, named filename in error positions. On
// failure the error is an *Error listing the problems (the first 100,
// then how many more) with their file:line:column, or a *LimitError when
// the input crossed one of the limits (MaxSourceBytes, MaxNestingDepth,
// MaxEvalSteps, MaxEvalTime).
func Parse(filename string, src []byte, opts Options) (*Result, error) {
	if opts.BaseDir == "" {
		opts.BaseDir = filepath.Dir(filename)
	}
	p := newParser(filename, src, opts)
	file, diags := p.parseChecked("job file", filename, src)
	if err := p.limitError(); err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, &Error{Diagnostics: reported(diags)}
	}
	p.indexSyntax(file)
	p.budget.startClock()
	job := p.decodeFile(file.Body)
	if err := p.limitError(); err != nil {
		return nil, err
	}
	if p.diags.HasErrors() {
		return nil, &Error{Diagnostics: reported(inReadingOrder(p.diags))}
	}
	return &Result{Job: job, Warnings: p.warnings}, nil
}

// maxReported bounds the problems an Error lists: a for expression or a
// dynamic block can repeat one mistake thousands of times, and the list
// goes back to the caller whole.
const maxReported = 100

// reported keeps the first maxReported errors and counts the rest.
func reported(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	errs := 0
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			if errs++; errs > maxReported {
				continue
			}
		}
		out = append(out, d)
	}
	if more := errs - maxReported; more > 0 {
		out = append(out, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("and %d more errors", more)})
	}
	return out
}

// limitError is the limit the parse crossed, if any. Other problems found
// meanwhile are mostly its consequences, so it is reported alone. A
// function only learns its arguments, so a limit it found is placed at
// the call hcl reported it for.
func (p *parser) limitError() error {
	err := p.budget.err
	if err == nil {
		return nil
	}
	if err.Subject == nil {
		for _, d := range p.diags {
			extra, ok := d.Extra.(hclsyntax.FunctionCallDiagExtra)
			if ok && errors.Is(extra.FunctionCallError(), err) && d.Subject != nil {
				placed := *err
				placed.Subject = d.Subject
				return &placed
			}
		}
	}
	return err
}

// inReadingOrder sorts diagnostics by position, since HCL reports some in
// map order; diagnostics without a position keep their order at the end.
func inReadingOrder(diags hcl.Diagnostics) hcl.Diagnostics {
	out := slices.Clone(diags)
	slices.SortStableFunc(out, func(a, b *hcl.Diagnostic) int {
		switch {
		case a.Subject == nil && b.Subject == nil:
			return 0
		case a.Subject == nil:
			return 1
		case b.Subject == nil:
			return -1
		}
		if c := strings.Compare(a.Subject.Filename, b.Subject.Filename); c != 0 {
			return c
		}
		return a.Subject.Start.Byte - b.Subject.Start.Byte
	})
	return out
}

// parseSource parses native HCL, or HCL's JSON syntax when the file is a
// JSON object.
func parseSource(filename string, src []byte) (*hcl.File, hcl.Diagnostics) {
	if isJSON(filename, src) {
		return hcljson.Parse(src, filename)
	}
	return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
}

func isJSON(filename string, src []byte) bool {
	if strings.HasSuffix(filename, ".json") {
		return true
	}
	trimmed := bytes.TrimSpace(src)
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// Error is a failed parse: every problem found, each with its position.
type Error struct {
	Diagnostics hcl.Diagnostics
}

// Error renders one line per problem: "file:line:column: summary; detail".
func (e *Error) Error() string {
	var lines []string
	for _, d := range e.Diagnostics {
		if d.Severity != hcl.DiagError {
			continue
		}
		lines = append(lines, formatDiagnostic(d))
	}
	return strings.Join(lines, "\n")
}

func formatDiagnostic(d *hcl.Diagnostic) string {
	msg := d.Summary
	if d.Detail != "" {
		msg += "; " + d.Detail
	}
	if d.Subject == nil {
		return msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, msg)
}
