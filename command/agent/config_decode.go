package agent

import (
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Agent configuration files are decoded straight onto a Config that
// already holds the defaults and every earlier file: an attribute present
// in the file overwrites the field, an absent one leaves it alone, a map
// attribute adds or replaces keys. That makes "later files win" fall out
// of decoding in order, with no separate merge step.
//
// The schema of each block comes from the `hcl` tags of the Go struct, so
// a key the struct does not declare is an "Unsupported argument" or
// "Unsupported block type" error at its file:line:column.

// configDecoder decodes one file; diags collects every problem so that a
// user sees all of them at once.
type configDecoder struct {
	cfg   *Config
	diags hcl.Diagnostics
}

// tagInfo is the parsed `hcl` tag of a struct field.
type tagInfo struct {
	name  string
	block bool
}

func parseTag(f reflect.StructField) (tagInfo, bool) {
	tag, ok := f.Tag.Lookup("hcl")
	if !ok {
		return tagInfo{}, false
	}
	name, opt, _ := strings.Cut(tag, ",")
	return tagInfo{name: name, block: opt == "block"}, true
}

var durationType = reflect.TypeOf(time.Duration(0))

// isStringMap reports fields like `meta`, which may be written either as
// an attribute holding an object or as a block of attributes.
func isStringMap(t reflect.Type) bool {
	return t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String
}

// isFreeform reports map[string]any fields such as a plugin's config.
func isFreeform(t reflect.Type) bool {
	return t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Interface
}

// isLabeledBlocks reports map[string]*T fields: blocks with one label.
func isLabeledBlocks(t reflect.Type) bool {
	return t.Kind() == reflect.Map && t.Key().Kind() == reflect.String &&
		t.Elem().Kind() == reflect.Pointer && t.Elem().Elem().Kind() == reflect.Struct
}

func schemaOf(t reflect.Type) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for i := 0; i < t.NumField(); i++ {
		tag, ok := parseTag(t.Field(i))
		if !ok {
			continue
		}
		ft := t.Field(i).Type
		switch {
		case tag.block && isLabeledBlocks(ft):
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: tag.name, LabelNames: []string{"name"}})
		case tag.block:
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: tag.name})
		case isStringMap(ft):
			s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: tag.name})
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: tag.name})
		default:
			s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: tag.name})
		}
	}
	return s
}

// decodeStruct decodes body onto the struct v; path is the dotted key of
// the block ("server.server_join"), "" at the top level.
func (d *configDecoder) decodeStruct(body hcl.Body, v reflect.Value, path string) {
	content, diags := body.Content(schemaOf(v.Type()))
	d.diags = append(d.diags, diags...)
	if content == nil {
		return
	}
	blocks := content.Blocks.ByType()
	for i := 0; i < v.NumField(); i++ {
		tag, ok := parseTag(v.Type().Field(i))
		if !ok {
			continue
		}
		field := v.Field(i)
		key := joinKey(path, tag.name)
		attr := content.Attributes[tag.name]
		bs := blocks[tag.name]
		switch {
		case tag.block && isLabeledBlocks(field.Type()):
			for _, b := range bs {
				d.decodeLabeledBlock(b, field, key)
			}
		case tag.block && isFreeform(field.Type()):
			if d.single(bs, key) {
				d.decodeFreeform(bs[0].Body, field, key)
				d.cfg.setOrigin(key, rangeString(bs[0].DefRange))
			}
		case tag.block:
			if d.single(bs, key) {
				d.decodeStruct(bs[0].Body, field, key)
			}
		case isStringMap(field.Type()):
			d.decodeStringMap(attr, bs, field, key)
		case attr != nil:
			d.decodeAttr(attr, field, key)
		}
	}
}

// single reports whether exactly one block was given, flagging repeats.
func (d *configDecoder) single(bs hcl.Blocks, key string) bool {
	if len(bs) == 0 {
		return false
	}
	for _, dup := range bs[1:] {
		d.errorf(dup.DefRange, "Duplicate "+key+" block",
			fmt.Sprintf("Only one %s block is allowed per file; the first is on line %d.", key, bs[0].DefRange.Start.Line))
	}
	return true
}

func (d *configDecoder) decodeLabeledBlock(b *hcl.Block, field reflect.Value, key string) {
	label := b.Labels[0]
	if field.IsNil() {
		field.Set(reflect.MakeMap(field.Type()))
	}
	elem := field.MapIndex(reflect.ValueOf(label))
	if !elem.IsValid() || elem.IsNil() {
		elem = reflect.New(field.Type().Elem().Elem())
	}
	d.decodeStruct(b.Body, elem.Elem(), fmt.Sprintf("%s.%s", key, label))
	field.SetMapIndex(reflect.ValueOf(label), elem)
}

// decodeStringMap reads `meta = { k = "v" }` or `meta { k = "v" }` and
// adds the keys to the map.
func (d *configDecoder) decodeStringMap(attr *hcl.Attribute, bs hcl.Blocks, field reflect.Value, key string) {
	var vals map[string]cty.Value
	var where hcl.Range
	switch {
	case attr != nil && len(bs) > 0:
		d.errorf(bs[0].DefRange, "Duplicate "+key,
			fmt.Sprintf("%s is already set as an attribute on line %d.", key, attr.Range.Start.Line))
		return
	case attr != nil:
		val, ok := d.eval(attr.Expr, key)
		if !ok || val.IsNull() {
			return
		}
		m, err := convert.Convert(val, cty.Map(cty.String))
		if err != nil {
			d.errorf(attr.Expr.Range(), "Invalid value for "+key, "A map of strings is required: "+err.Error())
			return
		}
		vals, where = m.AsValueMap(), attr.Range
	case d.single(bs, key):
		attrs, diags := bs[0].Body.JustAttributes()
		d.diags = append(d.diags, diags...)
		vals, where = map[string]cty.Value{}, bs[0].DefRange
		for name, a := range attrs {
			val, ok := d.eval(a.Expr, key+"."+name)
			if !ok {
				continue
			}
			s, err := convert.Convert(val, cty.String)
			if err != nil || s.IsNull() {
				d.errorf(a.Expr.Range(), "Invalid value for "+key+"."+name, "A string is required.")
				continue
			}
			vals[name] = s
		}
	default:
		return
	}
	if field.IsNil() {
		field.Set(reflect.MakeMap(field.Type()))
	}
	for k, v := range vals {
		field.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(v.AsString()))
	}
	d.cfg.setOrigin(key, rangeString(where))
}

// decodeFreeform reads a block without schema (a plugin's config) into a
// map: attributes become values, nested blocks become lists of maps.
func (d *configDecoder) decodeFreeform(body hcl.Body, field reflect.Value, key string) {
	m := d.freeformBody(body, key)
	if field.IsNil() {
		field.Set(reflect.MakeMap(field.Type()))
	}
	for k, v := range m {
		field.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(&v).Elem())
	}
}

func (d *configDecoder) freeformBody(body hcl.Body, key string) map[string]any {
	out := map[string]any{}
	syn, ok := body.(*hclsyntax.Body)
	if !ok {
		// JSON bodies have no blocks: nested objects are attributes.
		attrs, diags := body.JustAttributes()
		d.diags = append(d.diags, diags...)
		for name, a := range attrs {
			if val, ok := d.eval(a.Expr, key+"."+name); ok {
				out[name] = ctyToGo(val)
			}
		}
		return out
	}
	for name, a := range syn.Attributes {
		if val, ok := d.eval(a.Expr, key+"."+name); ok {
			out[name] = ctyToGo(val)
		}
	}
	for _, b := range syn.Blocks {
		inner := d.freeformBody(b.Body, key+"."+b.Type)
		for i := len(b.Labels) - 1; i >= 0; i-- {
			inner = map[string]any{b.Labels[i]: []map[string]any{inner}}
		}
		list, _ := out[b.Type].([]map[string]any)
		out[b.Type] = append(list, inner)
	}
	return out
}

// eval evaluates an expression without variables or functions: agent
// configuration is literal.
func (d *configDecoder) eval(expr hcl.Expression, key string) (cty.Value, bool) {
	val, diags := expr.Value(nil)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	return val, true
}

// decodeAttr converts one attribute to the field's type. A null value
// leaves the field unchanged.
func (d *configDecoder) decodeAttr(attr *hcl.Attribute, field reflect.Value, key string) {
	val, ok := d.eval(attr.Expr, key)
	if !ok || val.IsNull() {
		return
	}
	if err := assign(field, val); err != nil {
		d.errorf(attr.Expr.Range(), "Invalid value for "+key, err.Error())
		return
	}
	d.cfg.setOrigin(key, rangeString(attr.Range))
}

// assign sets field from val, converting as HCL does (a quoted "3" is a
// number, "true" a bool) and checking integer ranges and durations.
func assign(field reflect.Value, val cty.Value) error {
	t := field.Type()
	switch {
	case t == durationType:
		if val.Type() != cty.String {
			return fmt.Errorf("a duration string such as \"10s\" is required, got %s", val.Type().FriendlyName())
		}
		dur, err := time.ParseDuration(val.AsString())
		if err != nil {
			return fmt.Errorf("invalid duration %q: %s", val.AsString(), strings.TrimPrefix(err.Error(), "time: "))
		}
		field.SetInt(int64(dur))
	case t.Kind() == reflect.String:
		s, err := convert.Convert(val, cty.String)
		if err != nil {
			return fmt.Errorf("a string is required, got %s", val.Type().FriendlyName())
		}
		field.SetString(s.AsString())
	case t.Kind() == reflect.Bool:
		b, err := convert.Convert(val, cty.Bool)
		if err != nil {
			return fmt.Errorf("a bool is required, got %s", val.Type().FriendlyName())
		}
		field.SetBool(b.True())
	case t.Kind() == reflect.Int:
		n, err := convert.Convert(val, cty.Number)
		if err != nil {
			return fmt.Errorf("a whole number is required, got %s", val.Type().FriendlyName())
		}
		bf := n.AsBigFloat()
		i, acc := bf.Int64()
		if !bf.IsInt() || acc != big.Exact || int64(int(i)) != i {
			return fmt.Errorf("a whole number is required, got %s", bf.Text('g', -1))
		}
		field.SetInt(i)
	case t.Kind() == reflect.Float64:
		n, err := convert.Convert(val, cty.Number)
		if err != nil {
			return fmt.Errorf("a number is required, got %s", val.Type().FriendlyName())
		}
		f, _ := n.AsBigFloat().Float64()
		field.SetFloat(f)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		l, err := convert.Convert(val, cty.List(cty.String))
		if err != nil {
			return fmt.Errorf("a list of strings is required, got %s", val.Type().FriendlyName())
		}
		out := []string{}
		for _, e := range l.AsValueSlice() {
			if e.IsNull() {
				return fmt.Errorf("list elements must not be null")
			}
			out = append(out, e.AsString())
		}
		field.Set(reflect.ValueOf(out))
	default:
		return fmt.Errorf("unsupported field type %s", t)
	}
	return nil
}

// ctyToGo converts a free-form value: numbers become int64 when whole,
// float64 otherwise; objects and maps become map[string]any; lists,
// tuples and sets become []any.
func ctyToGo(val cty.Value) any {
	if val.IsNull() || !val.IsKnown() {
		return nil
	}
	t := val.Type()
	switch {
	case t == cty.String:
		return val.AsString()
	case t == cty.Bool:
		return val.True()
	case t == cty.Number:
		bf := val.AsBigFloat()
		if i, acc := bf.Int64(); bf.IsInt() && acc == big.Exact {
			return i
		}
		f, _ := bf.Float64()
		return f
	case t.IsObjectType() || t.IsMapType():
		out := map[string]any{}
		for k, v := range val.AsValueMap() {
			out[k] = ctyToGo(v)
		}
		return out
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		out := []any{}
		for _, v := range val.AsValueSlice() {
			out = append(out, ctyToGo(v))
		}
		return out
	}
	return nil
}

func (d *configDecoder) errorf(rng hcl.Range, summary, detail string) {
	r := rng
	d.diags = append(d.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &r})
}

func joinKey(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// rangeString renders a position as file:line:column, as job file errors do.
func rangeString(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

// diagsError renders every error diagnostic, one per line, each with its
// position, sorted by file and position (HCL reports some in map order).
func diagsError(diags hcl.Diagnostics) error {
	var errs []*hcl.Diagnostic
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i].Subject, errs[j].Subject
		switch {
		case a == nil || b == nil:
			return a != nil && b == nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
	lines := make([]string, 0, len(errs))
	for _, d := range errs {
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Subject != nil {
			msg = rangeString(*d.Subject) + ": " + msg
		}
		lines = append(lines, msg)
	}
	return &ConfigError{Problems: lines}
}

// ConfigError lists every problem of a configuration, each prefixed with
// the file:line:column (or flag) it comes from.
type ConfigError struct {
	Problems []string
}

// Error renders the problems one per line.
func (e *ConfigError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d configuration errors:\n  * %s", len(e.Problems), strings.Join(e.Problems, "\n  * "))
}
