package structs

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"
)

// This file turns objects into flat name -> value maps, the form every
// diff is computed on. Values are rendered the way Nomad's `job plan`
// shows them: booleans as "true"/"false", numbers in decimal, durations
// as integer nanoseconds, and map entries as `Name[key]`.

// flattenPrimitives flattens the primitive fields of a struct (or pointer
// to one) and its maps of primitives; nested structs, pointers and slices
// are left to dedicated object diffs. Fields named in skip are left out.
// A nil input flattens to nil, which diffs as "object absent".
func flattenPrimitives(obj interface{}, skip ...string) map[string]string {
	v := reflect.ValueOf(obj)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]string{}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || slices.Contains(skip, f.Name) {
			continue
		}
		fv := v.Field(i)
		if s, ok := primitiveString(fv); ok {
			out[f.Name] = s
			continue
		}
		if fv.Kind() == reflect.Map && fv.Type().Key().Kind() == reflect.String {
			for _, k := range fv.MapKeys() {
				if s, ok := primitiveString(fv.MapIndex(k)); ok {
					out[f.Name+"["+k.String()+"]"] = s
				}
			}
		}
	}
	return out
}

// primitiveString renders a primitive value; ok is false for anything
// else (structs, pointers, slices, maps, interfaces).
func primitiveString(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), true
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64), true
	case reflect.String:
		return v.String(), true
	}
	return "", false
}

// flattenConfig flattens a free-form driver config completely: nested maps
// become `key[sub]`, list elements `key[0]`, so a change deep inside shows
// as one field.
func flattenConfig(m map[string]interface{}) map[string]string {
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range m {
		flattenValue(out, k, reflect.ValueOf(v))
	}
	return out
}

func flattenValue(out map[string]string, path string, v reflect.Value) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			out[path] = ""
			return
		}
		v = v.Elem()
	}
	if s, ok := primitiveString(v); ok {
		out[path] = s
		return
	}
	switch v.Kind() {
	case reflect.Map:
		for _, k := range v.MapKeys() {
			flattenValue(out, path+"["+fmt.Sprint(k.Interface())+"]", v.MapIndex(k))
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			flattenValue(out, path+"["+strconv.Itoa(i)+"]", v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				flattenValue(out, path+"["+f.Name+"]", v.Field(i))
			}
		}
	case reflect.Invalid:
		out[path] = ""
	default:
		out[path] = fmt.Sprint(v.Interface())
	}
}

// durationPtrString renders an optional duration; unset is "".
func durationPtrString(d *time.Duration) string {
	if d == nil {
		return ""
	}
	return strconv.FormatInt(int64(*d), 10)
}
