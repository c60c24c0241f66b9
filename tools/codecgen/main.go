// Command codecgen writes the generated msgpack codecs of package structs:
// structs.generated.go (CodecEncodeSelf/CodecDecodeSelf methods, from the
// codec library's own generator at the version go.mod requires) and
// codec_types_generated_test.go (the list of those types, for the test
// that compares each generated codec with the reflective encoding).
//
// The generator writes a struct's fields in the order of their declaration,
// but the codec's reflection writes them sorted by name; the generated
// encoders are rewritten here to write them sorted too, so that the bytes
// are the same with or without the generated codecs. The decoders are
// rewritten to read field names without allocating (key_bytes.go).
//
// Codecs are generated for the messages on the hot path (roots below) and
// every type of the package they contain, except types embedded in
// another struct: a generated method set is promoted to every struct that
// embeds the type, which would then encode only the embedded fields and
// silently drop its own. Embedded fields are encoded inline by their
// embedder's codec, so nothing is lost by skipping them. Types with a
// codec written by hand (a CodecEncodeSelf method outside the generated
// file) are left to it, with what only they contain.
//
//	go run ./tools/codecgen -dir structs          regenerate
//	go run ./tools/codecgen -dir structs -check   fail if regenerating changes a file
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// roots are the Raft entry bodies, snapshot objects and RPC messages of a
// job's life whose encoding the servers pay for at every job.
var roots = []string{
	// Raft entries and what the FSM and snapshots store.
	"JobRegisterRequest", "ApplyPlanResultsRequest", "EvalUpdateRequest",
	"AllocUpdateRequest", "ApplyDeploymentAllocHealthRequest",
	"DeploymentAllocHealthBatchRequest",
	"DeploymentStatusUpdateRequest", "NodeRegisterRequest",
	"NodeUpdateStatusRequest", "JobSummary", "Deployment",
	// The scheduler's RPCs and the client's reads and reports.
	"JobRegisterResponse", "PlanRequest", "PlanResponse",
	"EvalDequeueRequest", "EvalDequeueResponse", "EvalAckRequest",
	"EvalSpecificRequest", "SingleEvalResponse", "GenericResponse",
	"NodeSpecificRequest", "NodeUpdateResponse", "NodeClientAllocsResponse",
	"NodeAllocsResponse", "AllocsGetRequest", "AllocsGetResponse",
	"JobSpecificRequest", "SingleJobResponse", "DeploymentUpdateResponse",
	"DeploymentAllocHealthRequest",
}

const (
	codecPath   = "github.com/hashicorp/go-msgpack/v2/codec"
	outFile     = "structs.generated.go"
	typesFile   = "codec_types_generated_test.go"
	generatorID = "1" // fixed, so the output is reproducible
)

func main() {
	dir := flag.String("dir", ".", "the structs package's directory")
	check := flag.Bool("check", false, "fail if regenerating would change the generated files")
	flag.Parse()
	if err := run(*dir, *check); err != nil {
		fmt.Fprintln(os.Stderr, "codecgen:", err)
		os.Exit(1)
	}
}

func run(dir string, check bool) error {
	outputs := []string{filepath.Join(dir, outFile), filepath.Join(dir, typesFile)}
	before := make([][]byte, len(outputs))
	for i, f := range outputs {
		before[i], _ = os.ReadFile(f)
	}
	err := generate(dir)
	if !check {
		return err
	}
	var stale []string
	for i, f := range outputs {
		after, _ := os.ReadFile(f)
		if !bytes.Equal(before[i], after) {
			stale = append(stale, f)
		}
		// A check leaves the tree as it found it.
		if before[i] == nil {
			os.Remove(f)
		} else if werr := os.WriteFile(f, before[i], 0o644); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		return fmt.Errorf("%s out of date: run `make generate-codecs` and commit the result", strings.Join(stale, ", "))
	}
	return nil
}

func generate(dir string) error {
	files, pkg, err := parseDir(dir)
	if err != nil {
		return err
	}
	names, err := codecTypes(pkg)
	if err != nil {
		return err
	}
	args := []string{"tool", "codecgen", "-c", codecPath, "-st", "codec", "-d", generatorID,
		"-r", "^(" + strings.Join(names, "|") + ")$", "-o", outFile}
	cmd := exec.Command("go", append(args, files...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go tool codecgen: %w", err)
	}
	if err := sortFieldKeys(filepath.Join(dir, outFile)); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, typesFile), typesList(names), 0o644)
}

// source is what the generator reads of the package.
type source struct {
	// decls are the package's type declarations by name.
	decls map[string]*ast.TypeSpec
	// selfers are the types with a hand-written CodecEncodeSelf.
	selfers map[string]bool
}

// parseDir parses the package's source files, leaving out tests and the
// generator's own output, and returns their names and what they declare.
func parseDir(dir string) ([]string, source, error) {
	pkg := source{decls: map[string]*ast.TypeSpec{}, selfers: map[string]bool{}}
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, pkg, err
	}
	var files []string
	fset := token.NewFileSet()
	for _, m := range matches {
		base := filepath.Base(m)
		if strings.HasSuffix(base, "_test.go") || strings.HasSuffix(base, ".generated.go") {
			continue
		}
		f, err := parser.ParseFile(fset, m, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, pkg, err
		}
		files = append(files, base)
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Name.Name == "CodecEncodeSelf" {
				if id, ok := deref(fd.Recv.List[0].Type).(*ast.Ident); ok {
					pkg.selfers[id.Name] = true
				}
			}
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				pkg.decls[ts.Name.Name] = ts
			}
		}
	}
	return files, pkg, nil
}

// codecTypes returns, sorted, the package's types reachable from roots
// through struct fields, less every type some struct of the package
// embeds, and less the kinds the generator does not write codecs for.
// The walk stops at types with a codec of their own.
func codecTypes(pkg source) ([]string, error) {
	decls := pkg.decls
	embedded := map[string]bool{}
	for _, ts := range decls {
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		for _, f := range st.Fields.List {
			if len(f.Names) == 0 {
				if id, ok := deref(f.Type).(*ast.Ident); ok {
					embedded[id.Name] = true
				}
			}
		}
	}
	reached := map[string]bool{}
	var visit func(ast.Expr)
	visit = func(e ast.Expr) {
		switch t := e.(type) {
		case *ast.Ident:
			ts, ok := decls[t.Name]
			if !ok || reached[t.Name] || pkg.selfers[t.Name] {
				return
			}
			reached[t.Name] = true
			visit(ts.Type)
		case *ast.StarExpr:
			visit(t.X)
		case *ast.ArrayType:
			visit(t.Elt)
		case *ast.MapType:
			visit(t.Key)
			visit(t.Value)
		case *ast.StructType:
			for _, f := range t.Fields.List {
				visit(f.Type)
			}
		}
	}
	for _, r := range roots {
		if _, ok := decls[r]; !ok {
			return nil, fmt.Errorf("root %s is not a type of the package", r)
		}
		visit(ast.NewIdent(r))
	}
	var names []string
	for name := range reached {
		if embedded[name] {
			continue
		}
		switch decls[name].Type.(type) {
		case *ast.StructType, *ast.Ident, *ast.MapType, *ast.ArrayType:
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

func deref(e ast.Expr) ast.Expr {
	if s, ok := e.(*ast.StarExpr); ok {
		return s.X
	}
	return e
}

// typesList is the test file listing the types with generated codecs.
func typesList(names []string) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by tools/codecgen. DO NOT EDIT.\n\npackage structs\n\n")
	b.WriteString("// generatedCodecTypes are the types structs.generated.go holds codecs for.\n")
	b.WriteString("var generatedCodecTypes = []any{\n")
	for _, n := range names {
		fmt.Fprintf(&b, "\t(*%s)(nil),\n", n)
	}
	b.WriteString("}\n")
	return b.Bytes()
}
