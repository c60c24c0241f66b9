package structs

import (
	"fmt"
	"slices"
	"strings"
)

// This file holds the building blocks of Job.Diff: diffs of flat field
// maps, of nested objects, and of sets of objects matched by a key.

// fieldDiff compares one field. Unchanged fields are returned (type None)
// only in contextual mode.
func fieldDiff(name, old, new string, contextual bool) *FieldDiff {
	d := &FieldDiff{Name: name, Old: old, New: new}
	switch {
	case old == new:
		if !contextual {
			return nil
		}
		d.Type = DiffTypeNone
	case old == "":
		d.Type = DiffTypeAdded
	case new == "":
		d.Type = DiffTypeDeleted
	default:
		d.Type = DiffTypeEdited
	}
	return d
}

// fieldDiffs compares two flat maps field by field, sorted by name.
func fieldDiffs(old, new map[string]string, contextual bool) []*FieldDiff {
	var out []*FieldDiff
	for _, k := range unionKeys(old, new) {
		if d := fieldDiff(k, old[k], new[k], contextual); d != nil {
			out = append(out, d)
		}
	}
	return out
}

// composeObject types an object diff from whether each side exists and
// what changed inside: absent -> present is Added, present -> absent is
// Deleted, a change inside is Edited. An unchanged object is nil: it is
// never listed, contextual or not.
func composeObject(name string, oldPresent, newPresent bool, fields []*FieldDiff, objects []*ObjectDiff) *ObjectDiff {
	d := &ObjectDiff{Name: name, Fields: fields, Objects: objects}
	switch {
	case !oldPresent && !newPresent:
		return nil
	case !oldPresent:
		d.Type = DiffTypeAdded
	case !newPresent:
		d.Type = DiffTypeDeleted
	case anyFieldChanged(fields) || anyObjectChanged(objects):
		d.Type = DiffTypeEdited
	default:
		return nil
	}
	sortObjectDiffs(d.Objects)
	return d
}

// primitiveObjectDiff diffs two optional objects (typed nil pointers mean
// absent) by their primitive fields, leaving out the fields in skip.
func primitiveObjectDiff(name string, old, new interface{}, contextual bool, skip ...string) *ObjectDiff {
	oldFlat, newFlat := flattenPrimitives(old, skip...), flattenPrimitives(new, skip...)
	return composeObject(name, oldFlat != nil, newFlat != nil, fieldDiffs(oldFlat, newFlat, contextual), nil)
}

// flatObjectDiff diffs two already flattened maps; an empty map counts
// as absent.
func flatObjectDiff(name string, old, new map[string]string, contextual bool) *ObjectDiff {
	return composeObject(name, len(old) > 0, len(new) > 0, fieldDiffs(old, new, contextual), nil)
}

// stringSetDiff diffs two lists as sets; every member is a field named
// after the set. Order and duplicates do not matter.
func stringSetDiff(name string, old, new []string, contextual bool) *ObjectDiff {
	oldSet, newSet := map[string]bool{}, map[string]bool{}
	for _, s := range old {
		oldSet[s] = true
	}
	for _, s := range new {
		newSet[s] = true
	}
	var fields []*FieldDiff
	added, removed := false, false
	for _, k := range unionKeys(oldSet, newSet) {
		switch {
		case oldSet[k] && newSet[k]:
			if contextual {
				fields = append(fields, &FieldDiff{Type: DiffTypeNone, Name: name, Old: k, New: k})
			}
		case oldSet[k]:
			fields = append(fields, &FieldDiff{Type: DiffTypeDeleted, Name: name, Old: k})
			removed = true
		default:
			fields = append(fields, &FieldDiff{Type: DiffTypeAdded, Name: name, New: k})
			added = true
		}
	}
	d := &ObjectDiff{Name: name, Fields: fields}
	switch {
	case added && removed:
		d.Type = DiffTypeEdited
	case added:
		d.Type = DiffTypeAdded
	case removed:
		d.Type = DiffTypeDeleted
	default:
		return nil
	}
	return d
}

// keyedSetDiff diffs two lists of objects as sets keyed by value: an
// object is either unchanged, removed or added, so an edited constraint
// shows as the old one deleted and the new one added, as in Nomad.
func keyedSetDiff[T any](name string, old, new []*T, key func(*T) string, contextual bool) []*ObjectDiff {
	index := func(list []*T) map[string]*T {
		m := make(map[string]*T, len(list))
		for _, o := range list {
			if o != nil {
				m[key(o)] = o
			}
		}
		return m
	}
	oldSet, newSet := index(old), index(new)
	var out []*ObjectDiff
	for _, k := range unionKeys(oldSet, newSet) {
		o, n := oldSet[k], newSet[k]
		if o != nil && n != nil {
			continue
		}
		if d := primitiveObjectDiff(name, o, n, contextual); d != nil {
			out = append(out, d)
		}
	}
	return out
}

func constraintDiffs(old, new []*Constraint, contextual bool) []*ObjectDiff {
	return keyedSetDiff("Constraint", old, new, (*Constraint).String, contextual)
}

func affinityDiffs(old, new []*Affinity, contextual bool) []*ObjectDiff {
	return keyedSetDiff("Affinity", old, new, (*Affinity).String, contextual)
}

// spreadDiffs pairs spreads by attribute, so a changed weight or target
// shows as an edit of that spread.
func spreadDiffs(old, new []*Spread, contextual bool) []*ObjectDiff {
	byAttr := func(list []*Spread) map[string]*Spread {
		m := map[string]*Spread{}
		for _, s := range list {
			if s != nil {
				m[s.Attribute] = s
			}
		}
		return m
	}
	oldSet, newSet := byAttr(old), byAttr(new)
	var out []*ObjectDiff
	for _, attr := range unionKeys(oldSet, newSet) {
		o, n := oldSet[attr], newSet[attr]
		var oldTargets, newTargets []*SpreadTarget
		if o != nil {
			oldTargets = o.SpreadTarget
		}
		if n != nil {
			newTargets = n.SpreadTarget
		}
		fields := fieldDiffs(flattenPrimitives(o), flattenPrimitives(n), contextual)
		if d := composeObject("Spread", o != nil, n != nil, fields, spreadTargetDiffs(oldTargets, newTargets, contextual)); d != nil {
			out = append(out, d)
		}
	}
	return out
}

func spreadTargetDiffs(old, new []*SpreadTarget, contextual bool) []*ObjectDiff {
	byValue := func(list []*SpreadTarget) map[string]*SpreadTarget {
		m := map[string]*SpreadTarget{}
		for _, t := range list {
			if t != nil {
				m[t.Value] = t
			}
		}
		return m
	}
	oldSet, newSet := byValue(old), byValue(new)
	var out []*ObjectDiff
	for _, v := range unionKeys(oldSet, newSet) {
		if d := primitiveObjectDiff("SpreadTarget", oldSet[v], newSet[v], contextual); d != nil {
			out = append(out, d)
		}
	}
	return out
}

func periodicDiff(old, new *PeriodicConfig, contextual bool) *ObjectDiff {
	var oldSpecs, newSpecs []string
	if old != nil {
		oldSpecs = old.Specs
	}
	if new != nil {
		newSpecs = new.Specs
	}
	fields := fieldDiffs(flattenPrimitives(old), flattenPrimitives(new), contextual)
	return composeObject("Periodic", old != nil, new != nil, fields,
		appendObjects(nil, stringSetDiff("Specs", oldSpecs, newSpecs, contextual)))
}

func parameterizedDiff(old, new *ParameterizedJobConfig, contextual bool) *ObjectDiff {
	var oldReq, newReq, oldOpt, newOpt []string
	if old != nil {
		oldReq, oldOpt = old.MetaRequired, old.MetaOptional
	}
	if new != nil {
		newReq, newOpt = new.MetaRequired, new.MetaOptional
	}
	fields := fieldDiffs(flattenPrimitives(old), flattenPrimitives(new), contextual)
	return composeObject("ParameterizedJob", old != nil, new != nil, fields, appendObjects(nil,
		stringSetDiff("MetaRequired", oldReq, newReq, contextual),
		stringSetDiff("MetaOptional", oldOpt, newOpt, contextual)))
}

func resourcesDiff(old, new *Resources, contextual bool) *ObjectDiff {
	var oldNets, newNets Networks
	if old != nil {
		oldNets = old.Networks
	}
	if new != nil {
		newNets = new.Networks
	}
	fields := fieldDiffs(flattenPrimitives(old), flattenPrimitives(new), contextual)
	return composeObject("Resources", old != nil, new != nil, fields, networkDiffs(oldNets, newNets, contextual))
}

// networkFieldsSkipped are node-side or deprecated settings that never
// change what a job asks for.
var networkFieldsSkipped = []string{"Device", "CIDR", "IP", "MBits"}

// networkDiffs pairs networks by position: a group has at most one, so
// its changes show as an edit with the ports that changed inside.
func networkDiffs(old, new Networks, contextual bool) []*ObjectDiff {
	var out []*ObjectDiff
	for i := range max(len(old), len(new)) {
		var o, n *NetworkResource
		if i < len(old) {
			o = old[i]
		}
		if i < len(new) {
			n = new[i]
		}
		var oldStatic, newStatic, oldDyn, newDyn []Port
		if o != nil {
			oldStatic, oldDyn = o.ReservedPorts, o.DynamicPorts
		}
		if n != nil {
			newStatic, newDyn = n.ReservedPorts, n.DynamicPorts
		}
		fields := fieldDiffs(flattenPrimitives(o, networkFieldsSkipped...), flattenPrimitives(n, networkFieldsSkipped...), contextual)
		ports := append(portDiffs("Static Port", oldStatic, newStatic, contextual),
			portDiffs("Dynamic Port", oldDyn, newDyn, contextual, "Value")...)
		if d := composeObject("Network", o != nil, n != nil, fields, ports); d != nil {
			out = append(out, d)
		}
	}
	return out
}

// portDiffs pairs ports by label. Dynamic ports leave out Value: it is
// chosen by the scheduler, not asked for.
func portDiffs(name string, old, new []Port, contextual bool, skip ...string) []*ObjectDiff {
	byLabel := func(list []Port) map[string]*Port {
		m := make(map[string]*Port, len(list))
		for i := range list {
			m[list[i].Label] = &list[i]
		}
		return m
	}
	oldSet, newSet := byLabel(old), byLabel(new)
	var out []*ObjectDiff
	for _, label := range unionKeys(oldSet, newSet) {
		if d := primitiveObjectDiff(name, oldSet[label], newSet[label], contextual, skip...); d != nil {
			out = append(out, d)
		}
	}
	return out
}

// appendObjects appends the non-nil diffs.
func appendObjects(list []*ObjectDiff, diffs ...*ObjectDiff) []*ObjectDiff {
	for _, d := range diffs {
		if d != nil {
			list = append(list, d)
		}
	}
	return list
}

func anyFieldChanged(fields []*FieldDiff) bool {
	return slices.ContainsFunc(fields, func(f *FieldDiff) bool { return f.Type != DiffTypeNone })
}

func anyObjectChanged(objects []*ObjectDiff) bool {
	return slices.ContainsFunc(objects, func(o *ObjectDiff) bool { return o.Type != DiffTypeNone })
}

// diffTypeOrder lists edits first, then additions, then deletions, as
// Nomad orders objects of the same name.
func diffTypeOrder(t DiffType) int {
	switch t {
	case DiffTypeEdited:
		return 0
	case DiffTypeAdded:
		return 1
	case DiffTypeDeleted:
		return 2
	}
	return 3
}

// sortObjectDiffs orders objects by name, then type, then content, so a
// diff renders the same way every time.
func sortObjectDiffs(objs []*ObjectDiff) {
	slices.SortStableFunc(objs, func(a, b *ObjectDiff) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := diffTypeOrder(a.Type) - diffTypeOrder(b.Type); c != 0 {
			return c
		}
		return strings.Compare(objectSortKey(a), objectSortKey(b))
	})
}

func objectSortKey(o *ObjectDiff) string {
	var b strings.Builder
	for _, f := range o.Fields {
		b.WriteString(f.Name + "=" + f.Old + ">" + f.New + ";")
	}
	return b.String()
}

// volumeDiffs diffs a group's volume blocks by name; a changed block is
// one edited object.
func volumeDiffs(old, new map[string]*VolumeRequest, contextual bool) []*ObjectDiff {
	var out []*ObjectDiff
	for _, name := range unionKeys(old, new) {
		d := primitiveObjectDiff("Volume", old[name], new[name], contextual)
		var o, n *CSIMountOptions
		if v := old[name]; v != nil {
			o = v.MountOptions
		}
		if v := new[name]; v != nil {
			n = v.MountOptions
		}
		if mo := mountOptionsDiff(o, n, contextual); mo != nil {
			if d == nil {
				d = &ObjectDiff{Type: DiffTypeEdited, Name: "Volume"}
			}
			d.Objects = append(d.Objects, mo)
		}
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

func mountOptionsDiff(old, new *CSIMountOptions, contextual bool) *ObjectDiff {
	var oldFlat, newFlat map[string]string
	var oldFlags, newFlags []string
	if old != nil {
		oldFlat, oldFlags = map[string]string{"FSType": old.FSType}, old.MountFlags
	}
	if new != nil {
		newFlat, newFlags = map[string]string{"FSType": new.FSType}, new.MountFlags
	}
	return composeObject("MountOptions", old != nil, new != nil, fieldDiffs(oldFlat, newFlat, contextual),
		appendObjects(nil, stringSetDiff("MountFlags", oldFlags, newFlags, contextual)))
}

// volumeMountDiffs diffs a task's volume mounts as a set: an edited
// mount shows as the old one deleted and the new one added.
func volumeMountDiffs(old, new []*VolumeMount, contextual bool) []*ObjectDiff {
	return keyedSetDiff("VolumeMount", old, new, func(m *VolumeMount) string { return fmt.Sprintf("%+v", *m) }, contextual)
}
