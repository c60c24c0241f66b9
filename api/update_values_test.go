package api

import (
	"reflect"
	"testing"
	"time"
)

// filledUpdate sets every field of an UpdateStrategy, found by
// reflection so that a field added later is covered, to a value unlike
// the defaults.
func filledUpdate(t *testing.T) *UpdateStrategy {
	t.Helper()
	u := &UpdateStrategy{}
	v := reflect.ValueOf(u).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		p := reflect.New(f.Type().Elem())
		switch e := p.Elem(); e.Kind() {
		case reflect.Int64:
			e.SetInt(int64(7*time.Minute) + int64(i))
		case reflect.Int:
			e.SetInt(int64(40 + i))
		case reflect.String:
			e.SetString("filled")
		case reflect.Bool:
			e.SetBool(true)
		default:
			t.Fatalf("field %s: no value for %s", v.Type().Field(i).Name, e.Kind())
		}
		f.Set(p)
	}
	return u
}

// ownValues fails when a field of a shares its value with b's.
func ownValues(t *testing.T, what string, a, b *UpdateStrategy) {
	t.Helper()
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := range va.NumField() {
		pa, pb := va.Field(i), vb.Field(i)
		if !pa.IsNil() && !pb.IsNil() && pa.Pointer() == pb.Pointer() {
			t.Errorf("%s: %s shares its value", what, va.Type().Field(i).Name)
		}
	}
}

// TestUpdateStrategy_CopyCanonicalizeEveryField holds Copy and
// Canonicalize to Merge's meaning on every field: values carried over,
// none shared with the source or with another strategy.
func TestUpdateStrategy_CopyCanonicalizeEveryField(t *testing.T) {
	src := filledUpdate(t)
	cp := src.Copy()
	if !reflect.DeepEqual(src, cp) {
		t.Fatalf("copy differs:\n%+v\n%+v", src, cp)
	}
	ownValues(t, "copy", src, cp)

	canon := src.Copy()
	canon.Canonicalize()
	if !reflect.DeepEqual(src, canon) {
		t.Fatalf("canonicalizing a full strategy changed it:\n%+v\n%+v", src, canon)
	}
	ownValues(t, "canonical", src, canon)

	// Unset fields take the defaults; set ones keep their values.
	partial := &UpdateStrategy{MaxParallel: new(9), AutoRevert: new(true)}
	kept := partial.MaxParallel
	partial.Canonicalize()
	want := DefaultUpdateStrategy()
	want.Merge(&UpdateStrategy{MaxParallel: new(9), AutoRevert: new(true)})
	if !reflect.DeepEqual(want, partial) {
		t.Fatalf("canonical partial strategy:\n%+v, want\n%+v", partial, want)
	}
	if partial.MaxParallel == kept {
		t.Error("canonicalizing kept the caller's pointer")
	}
	a, b := DefaultUpdateStrategy(), DefaultUpdateStrategy()
	ownValues(t, "two defaults", a, b)
	*a.MaxParallel = 5
	if *b.MaxParallel != 1 {
		t.Error("a default changed with another")
	}
	if (*UpdateStrategy)(nil).Copy() != nil {
		t.Error("copy of nil is not nil")
	}
}
