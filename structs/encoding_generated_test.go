package structs

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// The generated codecs (structs.generated.go) must write exactly the bytes
// the codec's reflection writes, and read them back: Raft logs and
// snapshots written before them, or by servers without them, must still
// apply. A field added to a type after its codec was generated would be
// silently dropped; these tests fail then.

// TestGeneratedCodecs_MatchReflection encodes every type with a generated
// codec, empty and with every field filled, and compares the bytes with
// the reflective encoding of a twin type that has no codec methods
// anywhere in its tree; then decodes them through the generated codec.
func TestGeneratedCodecs_MatchReflection(t *testing.T) {
	for _, p := range generatedCodecTypes {
		typ := reflect.TypeOf(p).Elem()
		t.Run(typ.Name(), func(t *testing.T) {
			for _, filled := range []bool{false, true} {
				v := reflect.New(typ)
				if filled {
					fillValue(v.Elem(), 0)
				}
				if _, ok := v.Interface().(codec.Selfer); !ok {
					t.Fatalf("%s has no generated codec: run `make generate-codecs`", typ)
				}
				got := encodeMsgpack(t, v.Interface())

				twin := reflect.New(reflectionTwin(typ, 0))
				copyToTwin(twin.Elem(), v.Elem())
				if _, ok := twin.Interface().(codec.Selfer); ok {
					t.Fatalf("the twin of %s has codec methods", typ)
				}
				want := encodeMsgpack(t, twin.Interface())
				if !bytes.Equal(got, want) {
					t.Fatalf("filled=%v: generated encoding differs from reflection at byte %d of %d (run `make generate-codecs`)\ngenerated:  %x\nreflection: %x",
						filled, firstDiff(got, want), len(want), got, want)
				}

				back := reflect.New(typ)
				if err := Decode(want, back.Interface()); err != nil {
					t.Fatalf("filled=%v: decoding: %v", filled, err)
				}
				if !reflect.DeepEqual(v.Interface(), back.Interface()) {
					t.Fatalf("filled=%v: decoded value differs\nencoded: %#v\ndecoded: %#v", filled, v.Elem().Interface(), back.Elem().Interface())
				}
			}
		})
	}
}

// TestGeneratedCodecs_NotPromoted fails when a struct embeds a type with a
// generated codec: the embedder would inherit the codec methods and
// encode only the embedded fields. Inside this package the generator
// leaves embedded types out; elsewhere only types never msgpack-encoded
// may do it.
func TestGeneratedCodecs_NotPromoted(t *testing.T) {
	// Views the HTTP agent serves as JSON only.
	jsonOnly := map[string]bool{
		"command/agent.nodeJSON":          true,
		"command/agent.scalingPolicyView": true,
	}
	generated := map[string]bool{}
	for _, p := range generatedCodecTypes {
		generated[reflect.TypeOf(p).Elem().Name()] = true
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		inStructs := rel == "structs"
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				if len(field.Names) > 0 {
					continue
				}
				name := embeddedName(field.Type, inStructs)
				if generated[name] && !jsonOnly[rel+"."+ts.Name.Name] {
					t.Errorf("%s: %s embeds %s, which has a generated codec: its own fields would not be encoded",
						fset.Position(field.Pos()), ts.Name.Name, name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// embeddedName is the name of a structs type an embedded field's type
// names ("" when it names another package's type).
func embeddedName(e ast.Expr, inStructs bool) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.Ident:
		if inStructs {
			return x.Name
		}
	case *ast.SelectorExpr:
		if pkg, ok := x.X.(*ast.Ident); ok && pkg.Name == "structs" && !inStructs {
			return x.Sel.Name
		}
	}
	return ""
}

// TestGeneratedCodecs_ListMatchesFile keeps the generated type list and
// the generated file in step, should either be edited by hand.
func TestGeneratedCodecs_ListMatchesFile(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "structs.generated.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	inFile := map[string]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || fd.Name.Name != "CodecEncodeSelf" {
			continue
		}
		if name, ok := deref(fd.Recv.List[0].Type).(*ast.Ident); ok {
			inFile[name.Name] = true
		}
	}
	for _, p := range generatedCodecTypes {
		name := reflect.TypeOf(p).Elem().Name()
		if !inFile[name] {
			t.Errorf("%s is listed but has no codec in structs.generated.go", name)
		}
		delete(inFile, name)
	}
	for name := range inFile {
		t.Errorf("%s has a codec in structs.generated.go but is not listed", name)
	}
}

func deref(e ast.Expr) ast.Expr {
	if s, ok := e.(*ast.StarExpr); ok {
		return s.X
	}
	return e
}

func encodeMsgpack(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, MsgpackHandle).Encode(v); err != nil {
		t.Fatalf("encoding %T: %v", v, err)
	}
	return buf.Bytes()
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// fillDepth bounds how deep fillValue follows pointers, slices and maps,
// so types that contain themselves (diffs) end.
const fillDepth = 4

var timeType = reflect.TypeOf(time.Time{})

// fillValue sets every exported field of v, recursively, to a value other
// than its zero: one element per slice and map (two would make the
// encoding depend on map order), distinct numbers and strings.
func fillValue(v reflect.Value, depth int) {
	seq := func() int64 { fillSeq++; return fillSeq }
	if v.Type() == timeType {
		v.Set(reflect.ValueOf(time.Unix(1_700_000_000+seq(), 123).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-seq() % 100)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(seq() % 200))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(seq()) + 0.5)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", seq()))
	case reflect.Interface:
		if v.NumMethod() == 0 {
			v.Set(reflect.ValueOf(fmt.Sprintf("any%d", seq())))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() || f.Anonymous {
				if v.Field(i).CanSet() {
					fillValue(v.Field(i), depth+1)
				}
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			fillValue(v.Index(i), depth)
		}
	case reflect.Pointer:
		if depth < fillDepth {
			p := reflect.New(v.Type().Elem())
			fillValue(p.Elem(), depth)
			v.Set(p)
		}
	case reflect.Slice:
		if depth < fillDepth {
			s := reflect.MakeSlice(v.Type(), 1, 1)
			fillValue(s.Index(0), depth)
			v.Set(s)
		}
	case reflect.Map:
		if depth < fillDepth {
			m := reflect.MakeMapWithSize(v.Type(), 1)
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillValue(k, depth)
			fillValue(e, depth)
			m.SetMapIndex(k, e)
			v.Set(m)
		}
	}
}

var fillSeq int64

var anyType = reflect.TypeOf((*any)(nil)).Elem()

// wireForms are the types whose codec is written by hand instead of
// generated, each with the type whose reflective encoding it must write
// and the conversion of a value to that type.
var wireForms = map[reflect.Type]struct {
	form reflect.Type
	to   func(reflect.Value) reflect.Value
}{
	reflect.TypeOf(NamedScores(nil)): {reflect.TypeOf(map[string]float64(nil)),
		func(v reflect.Value) reflect.Value { return reflect.ValueOf(v.Interface().(NamedScores).Map()) }},
}

// reflectionTwin is a type the codec encodes as it encodes t, built of
// unnamed types only, so that neither it nor anything in it has codec
// methods: structs become reflect.StructOf with the same exported fields
// and tags (embedded structs flattened, as the codec encodes them), named
// scalars their kind's basic type, types with a hand-written codec their
// wire form. Past fillDepth pointers, slices and maps, which fillValue
// leaves nil, become empty interfaces (also nil).
func reflectionTwin(t reflect.Type, depth int) reflect.Type {
	if t == timeType {
		return t
	}
	if w, ok := wireForms[t]; ok {
		if depth >= fillDepth {
			return anyType
		}
		return w.form
	}
	switch t.Kind() {
	case reflect.Struct:
		return reflect.StructOf(twinFields(t, depth+1))
	case reflect.Pointer:
		if depth >= fillDepth {
			return anyType
		}
		return reflect.PointerTo(reflectionTwin(t.Elem(), depth))
	case reflect.Slice:
		if depth >= fillDepth {
			return anyType
		}
		return reflect.SliceOf(reflectionTwin(t.Elem(), depth))
	case reflect.Map:
		if depth >= fillDepth {
			return anyType
		}
		return reflect.MapOf(reflectionTwin(t.Key(), depth), reflectionTwin(t.Elem(), depth))
	case reflect.Array:
		return reflect.ArrayOf(t.Len(), reflectionTwin(t.Elem(), depth))
	case reflect.Interface:
		return t
	}
	return basicTypes[t.Kind()]
}

func twinFields(t reflect.Type, depth int) []reflect.StructField {
	var fields []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("codec") == "" {
			fields = append(fields, twinFields(f.Type, depth)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		fields = append(fields, reflect.StructField{Name: f.Name, Type: reflectionTwin(f.Type, depth), Tag: f.Tag})
	}
	return fields
}

// copyToTwin copies v into its twin (built by reflectionTwin).
func copyToTwin(twin, v reflect.Value) {
	if v.Type() == timeType {
		twin.Set(v)
		return
	}
	if w, ok := wireForms[v.Type()]; ok {
		if twin.Kind() != reflect.Interface {
			twin.Set(w.to(v))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		i := 0
		copyFieldsToTwin(twin, v, &i)
	case reflect.Pointer:
		if v.IsNil() || twin.Kind() == reflect.Interface {
			return
		}
		p := reflect.New(twin.Type().Elem())
		copyToTwin(p.Elem(), v.Elem())
		twin.Set(p)
	case reflect.Slice:
		if v.IsNil() || twin.Kind() == reflect.Interface {
			return
		}
		s := reflect.MakeSlice(twin.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			copyToTwin(s.Index(i), v.Index(i))
		}
		twin.Set(s)
	case reflect.Map:
		if v.IsNil() || twin.Kind() == reflect.Interface {
			return
		}
		m := reflect.MakeMapWithSize(twin.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			k, e := reflect.New(twin.Type().Key()).Elem(), reflect.New(twin.Type().Elem()).Elem()
			copyToTwin(k, iter.Key())
			copyToTwin(e, iter.Value())
			m.SetMapIndex(k, e)
		}
		twin.Set(m)
	case reflect.Array:
		for i := range v.Len() {
			copyToTwin(twin.Index(i), v.Index(i))
		}
	case reflect.Interface:
		twin.Set(v)
	default:
		twin.Set(v.Convert(twin.Type()))
	}
}

// copyFieldsToTwin copies v's fields, flattening embedded structs as
// twinFields does; *i is the next field of twin.
func copyFieldsToTwin(twin, v reflect.Value, i *int) {
	t := v.Type()
	for j := range t.NumField() {
		f := t.Field(j)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("codec") == "" {
			copyFieldsToTwin(twin, v.Field(j), i)
			continue
		}
		if !f.IsExported() {
			continue
		}
		copyToTwin(twin.Field(*i), v.Field(j))
		*i++
	}
}

var basicTypes = map[reflect.Kind]reflect.Type{
	reflect.Bool:    reflect.TypeOf(false),
	reflect.Int:     reflect.TypeOf(int(0)),
	reflect.Int8:    reflect.TypeOf(int8(0)),
	reflect.Int16:   reflect.TypeOf(int16(0)),
	reflect.Int32:   reflect.TypeOf(int32(0)),
	reflect.Int64:   reflect.TypeOf(int64(0)),
	reflect.Uint:    reflect.TypeOf(uint(0)),
	reflect.Uint8:   reflect.TypeOf(uint8(0)),
	reflect.Uint16:  reflect.TypeOf(uint16(0)),
	reflect.Uint32:  reflect.TypeOf(uint32(0)),
	reflect.Uint64:  reflect.TypeOf(uint64(0)),
	reflect.Uintptr: reflect.TypeOf(uintptr(0)),
	reflect.Float32: reflect.TypeOf(float32(0)),
	reflect.Float64: reflect.TypeOf(float64(0)),
	reflect.String:  reflect.TypeOf(""),
}

// TestReflectionTwin_HasNoCodecMethods makes sure the comparison above
// compares against reflection: the twin of a type whose fields have
// generated codecs must encode through reflection all the way down.
func TestReflectionTwin_HasNoCodecMethods(t *testing.T) {
	twin := reflectionTwin(reflect.TypeOf(Job{}), 0)
	var walk func(reflect.Type, int)
	walk = func(rt reflect.Type, depth int) {
		if depth > 20 {
			return
		}
		if rt.Implements(reflect.TypeOf((*codec.Selfer)(nil)).Elem()) || reflect.PointerTo(rt).Implements(reflect.TypeOf((*codec.Selfer)(nil)).Elem()) {
			t.Fatalf("%s has codec methods", rt)
		}
		switch rt.Kind() {
		case reflect.Struct:
			for i := range rt.NumField() {
				walk(rt.Field(i).Type, depth+1)
			}
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(rt.Elem(), depth+1)
		case reflect.Map:
			walk(rt.Key(), depth+1)
			walk(rt.Elem(), depth+1)
		}
	}
	walk(twin, 0)
	if _, err := os.Stat("structs.generated.go"); err != nil {
		t.Fatal(err)
	}
}
