package structs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Annotations `job plan` attaches to diffs, spelled as Nomad spells them.
const (
	AnnotationForcesCreate            = "forces create"
	AnnotationForcesDestroy           = "forces destroy"
	AnnotationForcesInplaceUpdate     = "forces in-place update"
	AnnotationForcesDestructiveUpdate = "forces create/destroy update"
)

// Keys of TaskGroupDiff.Updates, as Nomad's `job plan` prints them.
const (
	UpdateTypeIgnore            = "ignore"
	UpdateTypeCreate            = "create"
	UpdateTypeDestroy           = "destroy"
	UpdateTypeMigrate           = "migrate"
	UpdateTypeCanary            = "canary"
	UpdateTypeInplaceUpdate     = "in-place update"
	UpdateTypeDestructiveUpdate = "create/destroy update"
)

// Job fields the diff leaves out: identity, and bookkeeping the servers
// change on every write. The job-level Update is merged into each group by
// Canonicalize and diffed there.
var jobDiffSkip = []string{"ID", "Status", "StatusDescription", "Stable", "Version",
	"VersionTag", "SubmitTime", "CreateIndex", "ModifyIndex", "JobModifyIndex", "Update"}

// Diff returns the difference from j (the old version, may be nil) to
// other (the new version, may be nil). Field and object names are the Go
// field names, as in Nomad, so `job plan` renders them unchanged.
//
// With contextual set, an object that changed also lists its unchanged
// fields (type None), so a reader sees each change in its context.
// Unchanged objects are left out either way; every task group and every
// task of an edited group is listed, with type None when unchanged.
//
// Task diffs are annotated with what the change forces ("forces create",
// "forces destroy", "forces create/destroy update", "forces in-place
// update") and a group's Count field with "forces create" / "forces
// destroy"; AnnotateUpdates adds the scheduler's counts afterwards.
func (j *Job) Diff(other *Job, contextual bool) (*JobDiff, error) {
	diff := &JobDiff{Type: DiffTypeNone}
	// The missing side of an added or deleted job has no fields at all,
	// rather than zero-valued ones.
	var oldFlat, newFlat map[string]string
	switch {
	case j == nil && other == nil:
		return diff, nil
	case j == nil:
		diff.Type, diff.ID = DiffTypeAdded, other.ID
		j = &Job{}
		newFlat = flattenPrimitives(other, jobDiffSkip...)
	case other == nil:
		diff.Type, diff.ID = DiffTypeDeleted, j.ID
		other = &Job{}
		oldFlat = flattenPrimitives(j, jobDiffSkip...)
	default:
		if j.ID != other.ID {
			return nil, fmt.Errorf("cannot diff jobs with different IDs: %q and %q", j.ID, other.ID)
		}
		diff.ID = other.ID
		oldFlat, newFlat = flattenPrimitives(j, jobDiffSkip...), flattenPrimitives(other, jobDiffSkip...)
	}

	diff.Fields = fieldDiffs(oldFlat, newFlat, false)
	diff.Objects = appendObjects(diff.Objects, stringSetDiff("Datacenters", j.Datacenters, other.Datacenters, contextual))
	diff.Objects = append(diff.Objects, constraintDiffs(j.Constraints, other.Constraints, contextual)...)
	diff.Objects = append(diff.Objects, affinityDiffs(j.Affinities, other.Affinities, contextual)...)
	diff.Objects = append(diff.Objects, spreadDiffs(j.Spreads, other.Spreads, contextual)...)
	diff.Objects = appendObjects(diff.Objects, periodicDiff(j.Periodic, other.Periodic, contextual))
	diff.Objects = appendObjects(diff.Objects, parameterizedDiff(j.ParameterizedJob, other.ParameterizedJob, contextual))
	sortObjectDiffs(diff.Objects)

	groups, err := taskGroupDiffs(j.TaskGroups, other.TaskGroups, contextual)
	if err != nil {
		return nil, err
	}
	diff.TaskGroups = groups

	if diff.Type == DiffTypeNone && (anyFieldChanged(diff.Fields) || anyObjectChanged(diff.Objects) ||
		slices.ContainsFunc(diff.TaskGroups, func(g *TaskGroupDiff) bool { return g.Type != DiffTypeNone })) {
		diff.Type = DiffTypeEdited
	}
	return diff, nil
}

// taskGroupDiffs pairs groups by name and returns one diff per group of
// either version, sorted by name.
func taskGroupDiffs(old, new []*TaskGroup, contextual bool) ([]*TaskGroupDiff, error) {
	oldByName, newByName := groupsByName(old), groupsByName(new)
	names := unionKeys(oldByName, newByName)
	out := make([]*TaskGroupDiff, 0, len(names))
	for _, name := range names {
		d, err := taskGroupDiff(oldByName[name], newByName[name], contextual)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func taskGroupDiff(old, new *TaskGroup, contextual bool) (*TaskGroupDiff, error) {
	diff := &TaskGroupDiff{Type: DiffTypeNone}
	switch {
	case old == nil && new == nil:
		return diff, nil
	case old == nil:
		diff.Type, diff.Name = DiffTypeAdded, new.Name
		old = &TaskGroup{}
	case new == nil:
		diff.Type, diff.Name = DiffTypeDeleted, old.Name
		new = &TaskGroup{}
	default:
		if old.Name != new.Name {
			return nil, fmt.Errorf("cannot diff task groups with different names: %q and %q", old.Name, new.Name)
		}
		diff.Name = new.Name
	}

	oldFlat, newFlat := groupPrimitives(old, diff.Type != DiffTypeAdded), groupPrimitives(new, diff.Type != DiffTypeDeleted)
	diff.Fields = fieldDiffs(oldFlat, newFlat, false)
	annotateCount(diff.Fields)

	diff.Objects = append(diff.Objects, constraintDiffs(old.Constraints, new.Constraints, contextual)...)
	diff.Objects = append(diff.Objects, affinityDiffs(old.Affinities, new.Affinities, contextual)...)
	diff.Objects = append(diff.Objects, spreadDiffs(old.Spreads, new.Spreads, contextual)...)
	diff.Objects = appendObjects(diff.Objects,
		primitiveObjectDiff("RestartPolicy", old.RestartPolicy, new.RestartPolicy, contextual),
		primitiveObjectDiff("ReschedulePolicy", old.ReschedulePolicy, new.ReschedulePolicy, contextual),
		primitiveObjectDiff("EphemeralDisk", old.EphemeralDisk, new.EphemeralDisk, contextual),
		// Stagger is deprecated and no longer read; a change to it alone
		// would show a plan that changes nothing.
		primitiveObjectDiff("Update", old.Update, new.Update, contextual, "Stagger"),
		primitiveObjectDiff("Migrate", old.Migrate, new.Migrate, contextual),
		// The server sets a policy's ID, target and indexes.
		primitiveObjectDiff("Scaling", old.Scaling, new.Scaling, contextual, "ID", "Target", "CreateIndex", "ModifyIndex"),
	)
	diff.Objects = append(diff.Objects, networkDiffs(old.Networks, new.Networks, contextual)...)
	diff.Objects = append(diff.Objects, serviceDiffs(old.Services, new.Services, contextual)...)
	diff.Objects = append(diff.Objects, volumeDiffs(old.Volumes, new.Volumes, contextual)...)
	sortObjectDiffs(diff.Objects)

	tasks, err := taskDiffs(old.Tasks, new.Tasks, contextual)
	if err != nil {
		return nil, err
	}
	diff.Tasks = tasks
	for _, t := range diff.Tasks {
		annotateTask(t, diff.Type)
	}

	if diff.Type == DiffTypeNone && (anyFieldChanged(diff.Fields) || anyObjectChanged(diff.Objects) ||
		slices.ContainsFunc(diff.Tasks, func(t *TaskDiff) bool { return t.Type != DiffTypeNone })) {
		diff.Type = DiffTypeEdited
	}
	return diff, nil
}

// groupPrimitives flattens a group's primitive fields, including its
// optional durations (unset renders as ""). present is false for the
// missing side of an added or deleted group, which has no fields at all.
func groupPrimitives(tg *TaskGroup, present bool) map[string]string {
	if !present {
		return nil
	}
	flat := flattenPrimitives(tg, "Name")
	flat["ShutdownDelay"] = durationPtrString(tg.ShutdownDelay)
	flat["StopAfterClientDisconnect"] = durationPtrString(tg.StopAfterClientDisconnect)
	flat["MaxClientDisconnect"] = durationPtrString(tg.MaxClientDisconnect)
	return flat
}

// annotateCount marks a count change with what it forces.
func annotateCount(fields []*FieldDiff) {
	for _, f := range fields {
		if f.Name != "Count" {
			continue
		}
		oldN, _ := strconv.Atoi(f.Old)
		newN, _ := strconv.Atoi(f.New)
		switch {
		case newN > oldN:
			f.Annotations = append(f.Annotations, AnnotationForcesCreate)
		case newN < oldN:
			f.Annotations = append(f.Annotations, AnnotationForcesDestroy)
		}
	}
}

func taskDiffs(old, new []*Task, contextual bool) ([]*TaskDiff, error) {
	oldByName, newByName := tasksByName(old), tasksByName(new)
	names := unionKeys(oldByName, newByName)
	out := make([]*TaskDiff, 0, len(names))
	for _, name := range names {
		d, err := taskDiff(oldByName[name], newByName[name], contextual)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// taskDiffSkip leaves out the name (tasks are matched by it) and the
// driver config, which is diffed as its own object.
var taskDiffSkip = []string{"Name", "Config"}

func taskDiff(old, new *Task, contextual bool) (*TaskDiff, error) {
	diff := &TaskDiff{Type: DiffTypeNone}
	var oldFlat, newFlat map[string]string
	switch {
	case old == nil && new == nil:
		return diff, nil
	case old == nil:
		diff.Type, diff.Name = DiffTypeAdded, new.Name
		old = &Task{}
		newFlat = flattenPrimitives(new, taskDiffSkip...)
	case new == nil:
		diff.Type, diff.Name = DiffTypeDeleted, old.Name
		new = &Task{}
		oldFlat = flattenPrimitives(old, taskDiffSkip...)
	default:
		if old.Name != new.Name {
			return nil, fmt.Errorf("cannot diff tasks with different names: %q and %q", old.Name, new.Name)
		}
		diff.Name = new.Name
		oldFlat, newFlat = flattenPrimitives(old, taskDiffSkip...), flattenPrimitives(new, taskDiffSkip...)
	}
	diff.Fields = fieldDiffs(oldFlat, newFlat, false)

	diff.Objects = append(diff.Objects, constraintDiffs(old.Constraints, new.Constraints, contextual)...)
	diff.Objects = append(diff.Objects, affinityDiffs(old.Affinities, new.Affinities, contextual)...)
	diff.Objects = appendObjects(diff.Objects,
		flatObjectDiff("Config", flattenConfig(old.Config), flattenConfig(new.Config), contextual),
		resourcesDiff(old.Resources, new.Resources, contextual),
		primitiveObjectDiff("LogConfig", old.LogConfig, new.LogConfig, contextual),
		primitiveObjectDiff("Lifecycle", old.Lifecycle, new.Lifecycle, contextual),
		primitiveObjectDiff("DispatchPayload", old.DispatchPayload, new.DispatchPayload, contextual),
	)
	diff.Objects = append(diff.Objects, serviceDiffs(old.Services, new.Services, contextual)...)
	diff.Objects = append(diff.Objects, volumeMountDiffs(old.VolumeMounts, new.VolumeMounts, contextual)...)
	diff.Objects = append(diff.Objects, actionDiffs(old.Actions, new.Actions, contextual)...)
	sortObjectDiffs(diff.Objects)

	if diff.Type == DiffTypeNone && (anyFieldChanged(diff.Fields) || anyObjectChanged(diff.Objects)) {
		diff.Type = DiffTypeEdited
	}
	return diff, nil
}

// inPlaceTaskObjects are the task objects a client can apply to a running
// task without replacing the allocation.
var inPlaceTaskObjects = []string{"LogConfig", "Constraint", "Service", "Action"}

// annotateTask records what a task change forces. Tasks of a group that
// appears or disappears are simply created or destroyed; otherwise any
// change but the kill timeout, log settings or task constraints replaces
// the allocation.
func annotateTask(d *TaskDiff, groupType DiffType) {
	if d.Type == DiffTypeNone {
		return
	}
	switch {
	case groupType == DiffTypeAdded && d.Type == DiffTypeAdded:
		d.Annotations = append(d.Annotations, AnnotationForcesCreate)
		return
	case groupType == DiffTypeDeleted && d.Type == DiffTypeDeleted:
		d.Annotations = append(d.Annotations, AnnotationForcesDestroy)
		return
	}
	destructive := d.Type != DiffTypeEdited ||
		slices.ContainsFunc(d.Fields, func(f *FieldDiff) bool { return f.Type != DiffTypeNone && f.Name != "KillTimeout" }) ||
		slices.ContainsFunc(d.Objects, func(o *ObjectDiff) bool {
			return o.Type != DiffTypeNone && !slices.Contains(inPlaceTaskObjects, o.Name)
		})
	if destructive {
		d.Annotations = append(d.Annotations, AnnotationForcesDestructiveUpdate)
	} else {
		d.Annotations = append(d.Annotations, AnnotationForcesInplaceUpdate)
	}
}

// AnnotateUpdates copies the scheduler's per-group counts from a plan's
// annotations into the diff's TaskGroupDiff.Updates, keyed as `job plan`
// prints them ("create", "destroy", "in-place update", ...). Zero counts
// are left out.
func (d *JobDiff) AnnotateUpdates(ann *PlanAnnotations) {
	if d == nil || ann == nil {
		return
	}
	for _, g := range d.TaskGroups {
		u, ok := ann.DesiredTGUpdates[g.Name]
		if !ok || u == nil {
			continue
		}
		counts := map[string]uint64{
			UpdateTypeIgnore:            u.Ignore,
			UpdateTypeCreate:            u.Place,
			UpdateTypeMigrate:           u.Migrate,
			UpdateTypeDestroy:           u.Stop,
			UpdateTypeInplaceUpdate:     u.InPlaceUpdate,
			UpdateTypeDestructiveUpdate: u.DestructiveUpdate,
			UpdateTypeCanary:            u.Canary,
		}
		for k, n := range counts {
			if n == 0 {
				continue
			}
			if g.Updates == nil {
				g.Updates = map[string]uint64{}
			}
			g.Updates[k] = n
		}
	}
}

// String renders the diff compactly, one change per line, for logs and
// test failures. The CLI renders its own format.
func (d *JobDiff) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Job %q (%s)\n", d.ID, d.Type)
	writeFields(&b, "  ", d.Fields)
	writeObjects(&b, "  ", d.Objects)
	for _, g := range d.TaskGroups {
		fmt.Fprintf(&b, "  Group %q (%s)%s\n", g.Name, g.Type, updatesSuffix(g.Updates))
		writeFields(&b, "    ", g.Fields)
		writeObjects(&b, "    ", g.Objects)
		for _, t := range g.Tasks {
			fmt.Fprintf(&b, "    Task %q (%s)%s\n", t.Name, t.Type, annotationSuffix(t.Annotations))
			writeFields(&b, "      ", t.Fields)
			writeObjects(&b, "      ", t.Objects)
		}
	}
	return b.String()
}

func writeFields(b *strings.Builder, indent string, fields []*FieldDiff) {
	for _, f := range fields {
		fmt.Fprintf(b, "%s%s (%s): %q => %q%s\n", indent, f.Name, f.Type, f.Old, f.New, annotationSuffix(f.Annotations))
	}
}

func writeObjects(b *strings.Builder, indent string, objs []*ObjectDiff) {
	for _, o := range objs {
		fmt.Fprintf(b, "%s%s (%s)\n", indent, o.Name, o.Type)
		writeFields(b, indent+"  ", o.Fields)
		writeObjects(b, indent+"  ", o.Objects)
	}
}

func annotationSuffix(a []string) string {
	if len(a) == 0 {
		return ""
	}
	return " (" + strings.Join(a, ", ") + ")"
}

func updatesSuffix(u map[string]uint64) string {
	if len(u) == 0 {
		return ""
	}
	keys := make([]string, 0, len(u))
	for k := range u {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", u[k], k)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func groupsByName(gs []*TaskGroup) map[string]*TaskGroup {
	m := make(map[string]*TaskGroup, len(gs))
	for _, g := range gs {
		if g != nil {
			m[g.Name] = g
		}
	}
	return m
}

func tasksByName(ts []*Task) map[string]*Task {
	m := make(map[string]*Task, len(ts))
	for _, t := range ts {
		if t != nil {
			m[t.Name] = t
		}
	}
	return m
}

// unionKeys returns the keys of both maps, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
