package command

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
)

// The plan diff is printed as a tree. Every line starts with a marker that
// says what the change does:
//
//	+    added          -    deleted
//	+/-  edited         (blank) unchanged, shown for context
//
// Markers of siblings are padded to the same width and field values are
// aligned, so a reader scans one column for the kind of change and another
// for the values:
//
//	+/- Job: "example"
//	+/- Task Group: "cache" (1 create/destroy update)
//	  +/- Task: "redis" (forces create/destroy update)
//	    +/- Config {
//	      +/- image:    "redis:7" => "redis:8"
//	          ports[0]: "db"
//	        }
//
// An object's contents are indented so their names start two columns
// right of the object's name, whatever the width of their markers.
//
// Without -verbose, added and deleted jobs, groups and tasks are shown by
// their header line only: their fields are all new or all gone.

// diffMarker returns the marker of a diff type.
func diffMarker(t string) string {
	switch t {
	case api.DiffTypeAdded:
		return "+"
	case api.DiffTypeDeleted:
		return "-"
	case api.DiffTypeEdited:
		return "+/-"
	}
	return ""
}

// diffPrinter accumulates the lines of a rendered diff.
type diffPrinter struct {
	verbose bool
	lines   []string
}

// formatJobDiff renders a job diff.
func formatJobDiff(d *api.JobDiff, verbose bool) string {
	if d == nil {
		return ""
	}
	p := &diffPrinter{verbose: verbose}
	// The job line and the group lines are siblings: their markers align.
	width := len(diffMarker(d.Type))
	for _, g := range d.TaskGroups {
		width = max(width, len(diffMarker(g.Type)))
	}
	p.add("", width, d.Type, fmt.Sprintf("Job: %q", d.ID))
	if p.showContents(d.Type) {
		p.fieldsAndObjects("", d.Fields, d.Objects)
	}
	for _, g := range d.TaskGroups {
		p.group(g, width)
	}
	return strings.Join(p.lines, "\n")
}

// showContents reports whether the fields of an object of this type are
// printed: always for edits, for additions and deletions only with
// -verbose.
func (p *diffPrinter) showContents(t string) bool {
	return p.verbose || t == api.DiffTypeEdited
}

func (p *diffPrinter) group(g *api.TaskGroupDiff, width int) {
	header := fmt.Sprintf("Task Group: %q", g.Name)
	if u := formatUpdates(g.Updates); u != "" {
		header += " (" + u + ")"
	}
	p.add("", width, g.Type, header)
	if p.showContents(g.Type) {
		p.fieldsAndObjects("  ", g.Fields, g.Objects)
	}
	taskWidth := 0
	for _, t := range g.Tasks {
		taskWidth = max(taskWidth, len(diffMarker(t.Type)))
	}
	for _, t := range g.Tasks {
		header := fmt.Sprintf("Task: %q", t.Name)
		if len(t.Annotations) > 0 {
			header += " (" + strings.Join(t.Annotations, ", ") + ")"
		}
		p.add("  ", taskWidth, t.Type, header)
		if p.showContents(t.Type) {
			p.fieldsAndObjects("    ", t.Fields, t.Objects)
		}
	}
}

// fieldsAndObjects prints fields then objects at one level, markers padded
// to the widest marker among them and field values aligned.
func (p *diffPrinter) fieldsAndObjects(indent string, fields []*api.FieldDiff, objects []*api.ObjectDiff) {
	width, nameWidth := 0, 0
	for _, f := range fields {
		width = max(width, len(diffMarker(f.Type)))
		nameWidth = max(nameWidth, len(f.Name)+1)
	}
	for _, o := range objects {
		width = max(width, len(diffMarker(o.Type)))
	}
	for _, f := range fields {
		p.add(indent, width, f.Type, pad(f.Name+":", nameWidth)+" "+fieldValue(f))
	}
	for _, o := range objects {
		p.add(indent, width, o.Type, o.Name+" {")
		// An object's contents start two columns right of its name, and the
		// closing brace lines up with the name.
		nameCol := len(indent) + width + 1
		p.nested(nameCol+2, o.Fields, o.Objects)
		p.lines = append(p.lines, strings.Repeat(" ", nameCol)+"}")
	}
}

// nested prints an object's contents so that their names start at
// nameCol whatever the width of their markers.
func (p *diffPrinter) nested(nameCol int, fields []*api.FieldDiff, objects []*api.ObjectDiff) {
	width := 0
	for _, f := range fields {
		width = max(width, len(diffMarker(f.Type)))
	}
	for _, o := range objects {
		width = max(width, len(diffMarker(o.Type)))
	}
	indent := nameCol
	if width > 0 {
		indent -= width + 1
	}
	p.fieldsAndObjects(strings.Repeat(" ", indent), fields, objects)
}

// add appends one line: indent, marker padded to width, then the text.
// Unchanged lines get a blank marker of the same width.
func (p *diffPrinter) add(indent string, width int, diffType, text string) {
	marker := diffMarker(diffType)
	prefix := indent
	if width > 0 {
		prefix += pad(marker, width) + " "
	}
	p.lines = append(p.lines, prefix+text)
}

// fieldValue renders a field change: `"old" => "new"` for an edit, the one
// side for an addition or deletion, plus its annotations.
func fieldValue(f *api.FieldDiff) string {
	var v string
	switch f.Type {
	case api.DiffTypeAdded:
		v = strconv.Quote(f.New)
	case api.DiffTypeDeleted:
		v = strconv.Quote(f.Old)
	case api.DiffTypeEdited:
		v = strconv.Quote(f.Old) + " => " + strconv.Quote(f.New)
	default:
		v = strconv.Quote(f.New)
	}
	if len(f.Annotations) > 0 {
		v += " (" + strings.Join(f.Annotations, ", ") + ")"
	}
	return v
}

// formatUpdates renders a group's planned changes, e.g.
// "1 create, 2 ignore", in alphabetical order of the kind of change.
func formatUpdates(u map[string]uint64) string {
	kinds := make([]string, 0, len(u))
	for k, n := range u {
		if n > 0 {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", u[k], k)
	}
	return strings.Join(parts, ", ")
}
