package main

import (
	"fmt"
	"go/ast"
	"strings"
)

// keysAsBytes rewrites the struct decoders of the generated file so that
// reading a field's name does not allocate. The generator writes
//
//	yysN := z.StringView(r.DecodeStringAsBytes())
//	r.ReadMapElemValue()
//	switch yysN { case "Field": ... default: z.DecStructFieldNotFound(-1, yysN) }
//
// and this version of the codec has no unsafe string view: each field
// name read is a string allocated. Switching on string(bytes) compares
// without allocating; the bytes stay valid until the field's value is
// read (ReadMapElemValue reads nothing in msgpack), and the unknown-field
// case converts them before it reads on.
func keysAsBytes(f *ast.File) error {
	var views, switches, notFound int
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || fd.Name.Name != "codecDecodeSelfFromMap" {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				if len(x.Lhs) == 1 && len(x.Rhs) == 1 && isKeyVar(x.Lhs[0]) {
					if call, ok := x.Rhs[0].(*ast.CallExpr); ok && selName(call.Fun) == "StringView" && len(call.Args) == 1 {
						x.Rhs[0] = call.Args[0]
						views++
					}
				}
			case *ast.SwitchStmt:
				if isKeyVar(x.Tag) {
					x.Tag = toString(x.Tag)
					switches++
				}
			case *ast.CallExpr:
				if selName(x.Fun) == "DecStructFieldNotFound" && len(x.Args) == 2 && isKeyVar(x.Args[1]) {
					x.Args[1] = toString(x.Args[1])
					notFound++
				}
			}
			return true
		})
	}
	if views == 0 || views != switches || views != notFound {
		return fmt.Errorf("struct decoders not as expected (%d key reads, %d switches, %d unknown-field cases): has the generator's output changed?", views, switches, notFound)
	}
	return nil
}

func isKeyVar(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && strings.HasPrefix(id.Name, "yys")
}

func selName(e ast.Expr) string {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		return sel.Sel.Name
	}
	return ""
}

func toString(e ast.Expr) ast.Expr {
	return &ast.CallExpr{Fun: ast.NewIdent("string"), Args: []ast.Expr{e}}
}
