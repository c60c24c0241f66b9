package agent

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// A JSON body may hold null where the api types expect an object in a
// list or map ("Tasks": [null]). Canonicalization, conversion and
// validation all read such entries; rather than guard every one of them,
// a job holding any is refused whole before anything reads it. The walk
// is driven by the types, so a list added to them later is covered too.

// nullEntries returns a *structs.ValidationError (a 400) naming the path
// of every null entry in a list or map of objects in job, such as
// "TaskGroups[0].Tasks[1]: null entry is not allowed", or nil. A null
// field is not an entry: it means unset. Free-form values (a task's
// driver Config, a scaling Policy) may hold nulls as data and are not
// looked into.
func nullEntries(job *api.Job) error {
	if job == nil {
		return nil
	}
	var problems []string
	findNullEntries(reflect.ValueOf(job).Elem(), "", &problems)
	if len(problems) == 0 {
		return nil
	}
	return &structs.ValidationError{Problems: problems}
}

func findNullEntries(v reflect.Value, path string, out *[]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			findNullEntries(v.Elem(), path, out)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := jsonFieldName(f)
			switch {
			case !ok:
			case f.Anonymous && f.Tag.Get("json") == "":
				// encoding/json promotes an embedded struct's fields.
				findNullEntries(v.Field(i), path, out)
			default:
				findNullEntries(v.Field(i), joinFieldPath(path, name), out)
			}
		}
	case reflect.Slice, reflect.Array:
		if !holdsObjects(v.Type().Elem()) {
			return
		}
		for i := range v.Len() {
			entry(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Map:
		if !holdsObjects(v.Type().Elem()) {
			return
		}
		keys := v.MapKeys()
		// Reported in key order, so the answer is the same every time.
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			entry(v.MapIndex(k), fmt.Sprintf("%s[%q]", path, fmt.Sprint(k)), out)
		}
	}
}

func entry(e reflect.Value, path string, out *[]string) {
	if e.Kind() == reflect.Pointer && e.IsNil() {
		*out = append(*out, path+": null entry is not allowed")
		return
	}
	findNullEntries(e, path, out)
}

// holdsObjects reports whether entries of type t are objects (or point
// to them): those a null entry would leave missing.
func holdsObjects(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		return true
	}
	return t.Kind() == reflect.Struct
}

// jsonFieldName is the name encoding/json gives f; ok is false for a
// field it skips.
func jsonFieldName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return "", false
	case "":
		return f.Name, true
	}
	return name, true
}

func joinFieldPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
