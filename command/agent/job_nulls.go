package agent

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

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
	w := nullWalk{path: make([]pathStep, 0, 8)}
	w.value(reflect.ValueOf(job).Elem())
	if len(w.problems) == 0 {
		return nil
	}
	return &structs.ValidationError{Problems: w.problems}
}

// Every registration is walked, so the walk skips what cannot hold a
// list or map of objects (strings, numbers, free-form values): which
// fields of a struct type are worth entering is worked out once per type
// (walkFields). The path of a value is kept as steps and written out
// only when a null entry is found there.

// nullWalk is one walk: the steps from the job to the value at hand, and
// the problems found.
type nullWalk struct {
	path     []pathStep
	problems []string
}

// pathStep is a field name, a list index or a map key.
type pathStep struct {
	field string
	key   string
	index int
	kind  pathKind
}

type pathKind uint8

const (
	pathField pathKind = iota
	pathIndex
	pathKey
)

// pathString renders the steps as "TaskGroups[0].Tasks[1]" or
// `TaskGroups[0].Volumes["data"]`.
func (w *nullWalk) pathString() string {
	var b strings.Builder
	for _, s := range w.path {
		switch s.kind {
		case pathIndex:
			fmt.Fprintf(&b, "[%d]", s.index)
		case pathKey:
			fmt.Fprintf(&b, "[%q]", s.key)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.field)
		}
	}
	return b.String()
}

func (w *nullWalk) value(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			w.value(v.Elem())
		}
	case reflect.Struct:
		for _, f := range walkFields(v.Type()) {
			if f.promoted {
				// encoding/json promotes an embedded struct's fields.
				w.value(v.Field(f.index))
				continue
			}
			w.path = append(w.path, pathStep{field: f.name, kind: pathField})
			w.value(v.Field(f.index))
			w.path = w.path[:len(w.path)-1]
		}
	case reflect.Slice, reflect.Array:
		if !holdsObjects(v.Type().Elem()) {
			return
		}
		for i := range v.Len() {
			w.entry(v.Index(i), pathStep{index: i, kind: pathIndex})
		}
	case reflect.Map:
		if !holdsObjects(v.Type().Elem()) || v.Len() == 0 {
			return
		}
		keys := v.MapKeys()
		// Reported in key order, so the answer is the same every time.
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			w.entry(v.MapIndex(k), pathStep{key: fmt.Sprint(k), kind: pathKey})
		}
	}
}

// entry looks at one list or map entry, reached by step.
func (w *nullWalk) entry(e reflect.Value, step pathStep) {
	w.path = append(w.path, step)
	if e.Kind() == reflect.Pointer && e.IsNil() {
		w.problems = append(w.problems, w.pathString()+": null entry is not allowed")
	} else {
		w.value(e)
	}
	w.path = w.path[:len(w.path)-1]
}

// walkField is a field of a struct type that may hold a list or map of
// objects: its index, its JSON name, and whether encoding/json promotes
// its fields (an embedded struct without a name of its own).
type walkField struct {
	index    int
	name     string
	promoted bool
}

// walkPlans caches walkFields by struct type.
var walkPlans sync.Map // reflect.Type -> []walkField

// walkFields returns the fields of struct type t that findNullEntries
// enters: those encoding/json reads whose type may hold a list or map of
// objects.
func walkFields(t reflect.Type) []walkField {
	if plan, ok := walkPlans.Load(t); ok {
		return plan.([]walkField)
	}
	var plan []walkField
	for i := range t.NumField() {
		f := t.Field(i)
		name, ok := jsonFieldName(f)
		if !ok || !mayHoldEntries(f.Type, map[reflect.Type]bool{}) {
			continue
		}
		plan = append(plan, walkField{index: i, name: name, promoted: f.Anonymous && f.Tag.Get("json") == ""})
	}
	walkPlans.Store(t, plan)
	return plan
}

// mayHoldEntries reports whether a value of type t can hold a list or
// map of objects, where a null entry could be. A type met again within
// itself (a recursive type) is taken to hold some.
func mayHoldEntries(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	defer delete(seen, t)
	switch t.Kind() {
	case reflect.Pointer:
		return mayHoldEntries(t.Elem(), seen)
	case reflect.Slice, reflect.Array, reflect.Map:
		return holdsObjects(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if _, ok := jsonFieldName(f); ok && mayHoldEntries(f.Type, seen) {
				return true
			}
		}
	}
	return false
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
