package jobspec

import (
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// The decoder walks the api types by reflection, guided by their `hcl`
// struct tags: `hcl:"name,optional"` is an attribute, `hcl:"name"` a
// required attribute, `hcl:"name,block"` a nested block and
// `hcl:"name,label"` (or `hcl:",label"`) a block label. Behaviour the tags
// cannot express (constraint shorthands, task scaling labels, blocks
// without an api type) lives in hooks.go.

type fieldKind int

const (
	attrField fieldKind = iota
	blockField
	labelField
)

type fieldSpec struct {
	name     string
	index    int
	kind     fieldKind
	required bool
}

type structSpec struct {
	fields []fieldSpec // attributes and blocks, in declaration order
	labels []fieldSpec
}

var specCache sync.Map // reflect.Type -> *structSpec

// specOf reads the hcl tags of a struct type.
func specOf(t reflect.Type) *structSpec {
	if s, ok := specCache.Load(t); ok {
		return s.(*structSpec)
	}
	s := &structSpec{}
	for i := range t.NumField() {
		tag, ok := t.Field(i).Tag.Lookup("hcl")
		if !ok {
			continue
		}
		name, kind, _ := strings.Cut(tag, ",")
		f := fieldSpec{name: name, index: i}
		switch kind {
		case "label":
			f.kind = labelField
			if f.name == "" {
				f.name = "name"
			}
			s.labels = append(s.labels, f)
			continue
		case "block":
			f.kind = blockField
		case "optional":
			f.kind = attrField
		case "":
			f.kind = attrField
			f.required = true
		default:
			panic(fmt.Sprintf("jobspec: unknown hcl tag kind %q on %s.%s", kind, t, t.Field(i).Name))
		}
		s.fields = append(s.fields, f)
	}
	specCache.Store(t, s)
	return s
}

var durationType = reflect.TypeOf(time.Duration(0))

// isFreeform reports whether a block field is a map written either as a
// block of attributes (`meta { k = "v" }`) or as an attribute
// (`meta = { k = "v" }`).
func isFreeform(t reflect.Type) bool {
	return t.Kind() == reflect.Map
}

// blockElem returns the struct type a block field decodes into, and
// whether the field is keyed by the block's label (map[string]*T).
func blockElem(t reflect.Type) (reflect.Type, bool) {
	keyed := false
	if t.Kind() == reflect.Map {
		keyed = true
	}
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t, keyed
}

func labelNames(t reflect.Type) []string {
	var names []string
	for _, l := range specOf(t).labels {
		names = append(names, l.name)
	}
	return names
}

// schemaFor is the body schema of struct type t with its hooks applied.
func schemaFor(t reflect.Type, h *typeHooks) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, f := range specOf(t).fields {
		if h.skips(f.name) {
			continue
		}
		ft := t.Field(f.index).Type
		switch {
		case f.kind == attrField:
			s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: f.name, Required: f.required})
		case isFreeform(ft) && !isStructMap(ft):
			s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: f.name})
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: f.name})
		default:
			elem, _ := blockElem(ft)
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: f.name, LabelNames: labelNames(elem)})
		}
	}
	if h != nil {
		s.Attributes = append(s.Attributes, h.extraAttrs...)
		s.Blocks = append(s.Blocks, h.extraBlocks...)
	}
	return s
}

// isStructMap reports a map of blocks keyed by label, e.g.
// map[string]*VolumeRequest.
func isStructMap(t reflect.Type) bool {
	if t.Kind() != reflect.Map {
		return false
	}
	e := t.Elem()
	if e.Kind() == reflect.Pointer {
		e = e.Elem()
	}
	return e.Kind() == reflect.Struct
}

// decodeStruct decodes body into the struct v. scope names the enclosing
// job, group or task in warnings.
func (p *parser) decodeStruct(body hcl.Body, v reflect.Value, scope string) {
	t := v.Type()
	h := hooksFor(t)
	content, diags := body.Content(schemaFor(t, h))
	p.diags = append(p.diags, diags...)
	if content == nil {
		return
	}

	blocks := map[string]hcl.Blocks{}
	for _, b := range content.Blocks {
		blocks[b.Type] = append(blocks[b.Type], b)
	}

	for _, f := range specOf(t).fields {
		if h.skips(f.name) {
			continue
		}
		field := v.Field(f.index)
		ft := field.Type()
		attr := content.Attributes[f.name]
		switch {
		case f.kind == attrField:
			if attr != nil {
				p.assignAttr(attr, field)
			}
		case isFreeform(ft) && !isStructMap(ft):
			p.decodeFreeformField(f.name, attr, blocks[f.name], field)
		default:
			p.decodeBlockField(f.name, blocks[f.name], field, scope)
		}
	}

	if h != nil {
		for _, name := range h.notActed {
			if len(blocks[name]) > 0 {
				p.warn(fmt.Sprintf("%s: %s blocks are parsed but not acted on by this server", scope, name))
			}
		}
		for _, name := range h.ignored {
			if len(blocks[name]) > 0 {
				p.warn(fmt.Sprintf("%s: %s blocks are not supported by this server and were ignored", scope, name))
			}
		}
		if h.after != nil {
			h.after(p, content, blocks, v, scope)
		}
	}
}

// decodeBlockField decodes the blocks of one type into a *T, []*T, []T or
// map[string]*T field.
func (p *parser) decodeBlockField(name string, blocks hcl.Blocks, field reflect.Value, scope string) {
	if len(blocks) == 0 {
		return
	}
	ft := field.Type()
	switch ft.Kind() {
	case reflect.Pointer:
		for _, dup := range blocks[1:] {
			p.errorf(&dup.DefRange, fmt.Sprintf("Duplicate %s block", name),
				"Only one %s block is allowed here; another was defined at %s.", name, blocks[0].DefRange)
		}
		elem := reflect.New(ft.Elem())
		p.decodeBlock(blocks[0], elem.Elem(), scope)
		field.Set(elem)
	case reflect.Slice:
		for _, b := range blocks {
			elemType := ft.Elem()
			ptr := elemType.Kind() == reflect.Pointer
			if ptr {
				elemType = elemType.Elem()
			}
			elem := reflect.New(elemType)
			p.decodeBlock(b, elem.Elem(), scope)
			if ptr {
				field.Set(reflect.Append(field, elem))
			} else {
				field.Set(reflect.Append(field, elem.Elem()))
			}
		}
	case reflect.Map:
		if field.IsNil() {
			field.Set(reflect.MakeMap(ft))
		}
		seen := map[string]*hcl.Block{}
		for _, b := range blocks {
			key := b.Labels[0]
			if prev, dup := seen[key]; dup {
				p.errorf(&b.DefRange, fmt.Sprintf("Duplicate %s block", name),
					"A %s block named %q was already defined at %s.", name, key, prev.DefRange)
				continue
			}
			seen[key] = b
			elem := reflect.New(ft.Elem().Elem())
			p.decodeBlock(b, elem.Elem(), scope)
			field.SetMapIndex(reflect.ValueOf(key), elem)
		}
	}
}

// decodeBlock fills a struct from one block: labels first, then body.
func (p *parser) decodeBlock(b *hcl.Block, v reflect.Value, scope string) {
	for i, l := range specOf(v.Type()).labels {
		if i >= len(b.Labels) {
			break
		}
		f := v.Field(l.index)
		if f.Kind() == reflect.Pointer {
			f.Set(reflect.ValueOf(new(b.Labels[i])))
		} else {
			f.SetString(b.Labels[i])
		}
	}
	p.decodeStruct(b.Body, v, childScope(scope, v.Type(), b.Labels))
}

// assignAttr evaluates an attribute into a field.
func (p *parser) assignAttr(a *hcl.Attribute, field reflect.Value) {
	val, diags := p.eval(a.Expr)
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return
	}
	val, _ = val.UnmarkDeep()
	if val.IsNull() {
		return
	}
	if !val.IsWhollyKnown() {
		p.errorf(a.Expr.Range().Ptr(), "Unknown value", "The value of %q cannot be determined when the job is parsed.", a.Name)
		return
	}
	if err := setValue(field, val); err != nil {
		p.errorf(a.Expr.Range().Ptr(), "Incorrect attribute value type",
			"Inappropriate value for attribute %q: %s.", a.Name, err)
	}
}

// setValue stores a known, non-null cty value into a Go field.
func setValue(f reflect.Value, val cty.Value) error {
	if f.Kind() == reflect.Pointer {
		n := reflect.New(f.Type().Elem())
		if err := setValue(n.Elem(), val); err != nil {
			return err
		}
		f.Set(n)
		return nil
	}
	if f.Type() == durationType {
		d, err := toDuration(val)
		if err != nil {
			return err
		}
		f.SetInt(int64(d))
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		s, err := convert.Convert(val, cty.String)
		if err != nil {
			return err
		}
		f.SetString(s.AsString())
	case reflect.Bool:
		b, err := convert.Convert(val, cty.Bool)
		if err != nil {
			return err
		}
		f.SetBool(b.True())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := toInt(val)
		if err != nil {
			return err
		}
		if f.OverflowInt(i) {
			return fmt.Errorf("%d is out of range", i)
		}
		f.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, err := toInt(val)
		if err != nil {
			return err
		}
		if i < 0 || f.OverflowUint(uint64(i)) {
			return fmt.Errorf("%d is out of range", i)
		}
		f.SetUint(uint64(i))
	case reflect.Slice:
		if f.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("unsupported field type %s", f.Type())
		}
		list, err := convert.Convert(val, cty.List(cty.String))
		if err != nil {
			return err
		}
		out := reflect.MakeSlice(f.Type(), 0, list.LengthInt())
		for it := list.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if e.IsNull() {
				return fmt.Errorf("list elements must not be null")
			}
			out = reflect.Append(out, reflect.ValueOf(e.AsString()).Convert(f.Type().Elem()))
		}
		f.Set(out)
	case reflect.Map:
		return setMap(f, val)
	default:
		return fmt.Errorf("unsupported field type %s", f.Type())
	}
	return nil
}

// setMap stores an object or map value into a map[string]string,
// map[string][]string or map[string]any field.
func setMap(f reflect.Value, val cty.Value) error {
	switch f.Type().Elem().Kind() {
	case reflect.String:
		m, err := convert.Convert(val, cty.Map(cty.String))
		if err != nil {
			return err
		}
		out := reflect.MakeMap(f.Type())
		for k, v := range m.AsValueMap() {
			if v.IsNull() {
				return fmt.Errorf("value of %q must not be null", k)
			}
			out.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(v.AsString()))
		}
		f.Set(out)
	case reflect.Slice:
		m, err := convert.Convert(val, cty.Map(cty.List(cty.String)))
		if err != nil {
			return err
		}
		out := reflect.MakeMap(f.Type())
		for k, v := range m.AsValueMap() {
			var list []string
			for _, e := range v.AsValueSlice() {
				list = append(list, e.AsString())
			}
			out.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(list))
		}
		f.Set(out)
	case reflect.Interface:
		if !val.Type().IsObjectType() && !val.Type().IsMapType() {
			return fmt.Errorf("an object is required")
		}
		v, err := ctyToInterface(val)
		if err != nil {
			return err
		}
		f.Set(reflect.ValueOf(v))
	default:
		return fmt.Errorf("unsupported field type %s", f.Type())
	}
	return nil
}

// toDuration accepts a duration string ("30s", "1h30m") or a number of
// nanoseconds.
func toDuration(val cty.Value) (time.Duration, error) {
	switch val.Type() {
	case cty.String:
		d, err := time.ParseDuration(val.AsString())
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (use a number and unit, e.g. \"30s\", \"5m\", \"1h\")", val.AsString())
		}
		return d, nil
	case cty.Number:
		i, err := toInt(val)
		return time.Duration(i), err
	}
	return 0, fmt.Errorf("a duration string is required, not %s", val.Type().FriendlyName())
}

func toInt(val cty.Value) (int64, error) {
	n, err := convert.Convert(val, cty.Number)
	if err != nil {
		return 0, err
	}
	bf := n.AsBigFloat()
	if !bf.IsInt() {
		return 0, fmt.Errorf("a whole number is required, not %s", bf.Text('f', -1))
	}
	i, acc := bf.Int64()
	if acc != big.Exact {
		return 0, fmt.Errorf("%s is out of range", bf.Text('f', -1))
	}
	return i, nil
}

// ctyToInterface converts a value to the plain Go values Nomad keeps in
// free-form maps: string, int or float64, bool, []any, []map[string]any
// (a list whose elements are all objects) and map[string]any.
func ctyToInterface(val cty.Value) (any, error) {
	if val.IsNull() {
		return nil, nil
	}
	if !val.IsKnown() {
		return nil, fmt.Errorf("value is not known when the job is parsed")
	}
	t := val.Type()
	switch {
	case t == cty.String:
		return val.AsString(), nil
	case t == cty.Bool:
		return val.True(), nil
	case t == cty.Number:
		bf := val.AsBigFloat()
		if bf.IsInt() {
			if i, acc := bf.Int64(); acc == big.Exact {
				if int64(int(i)) == i {
					return int(i), nil
				}
				return i, nil
			}
		}
		f, _ := bf.Float64()
		return f, nil
	case t.IsListType() || t.IsSetType() || t.IsTupleType():
		var items []any
		allMaps := val.LengthInt() > 0
		for it := val.ElementIterator(); it.Next(); {
			_, e := it.Element()
			v, err := ctyToInterface(e)
			if err != nil {
				return nil, err
			}
			if _, ok := v.(map[string]any); !ok {
				allMaps = false
			}
			items = append(items, v)
		}
		if allMaps {
			maps := make([]map[string]any, len(items))
			for i, v := range items {
				maps[i] = v.(map[string]any)
			}
			return maps, nil
		}
		if items == nil {
			items = []any{}
		}
		return items, nil
	case t.IsMapType() || t.IsObjectType():
		out := map[string]any{}
		for it := val.ElementIterator(); it.Next(); {
			k, e := it.Element()
			v, err := ctyToInterface(e)
			if err != nil {
				return nil, err
			}
			out[k.AsString()] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot use a value of type %s", t.FriendlyName())
}

// sortedAttributes orders attributes as they appear in the source, so
// diagnostics come out in reading order.
func sortedAttributes(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Range, out[j].Range
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
	return out
}
