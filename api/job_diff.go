package api

// Diff types used in JobDiff, TaskGroupDiff, TaskDiff, FieldDiff and
// ObjectDiff.
const (
	DiffTypeNone    = "None"
	DiffTypeAdded   = "Added"
	DiffTypeDeleted = "Deleted"
	DiffTypeEdited  = "Edited"
)

// JobDiff is the difference between a submitted job and the stored version,
// returned by plan (with Diff=true) and by versions (with diffs=true).
type JobDiff struct {
	Type       string
	ID         string
	Fields     []*FieldDiff
	Objects    []*ObjectDiff
	TaskGroups []*TaskGroupDiff
}

// TaskGroupDiff is the difference of one task group. Updates counts the
// planned changes by kind ("create", "destroy", "in-place update",
// "create/destroy update", "ignore", ...).
type TaskGroupDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
	Tasks   []*TaskDiff
	Updates map[string]uint64
}

// TaskDiff is the difference of one task; Annotations say whether the
// change forces a destructive update.
type TaskDiff struct {
	Type        string
	Name        string
	Fields      []*FieldDiff
	Objects     []*ObjectDiff
	Annotations []string
}

// FieldDiff is the change of one field.
type FieldDiff struct {
	Type        string
	Name        string
	Old, New    string
	Annotations []string
}

// ObjectDiff is the change of a nested object such as a constraint.
type ObjectDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
}

// PlanAnnotations explain what the scheduler would do in a plan.
type PlanAnnotations struct {
	DesiredTGUpdates map[string]*DesiredUpdates
	PreemptedAllocs  []*AllocationListStub
}

// DesiredUpdates counts the scheduler's intended changes to one group.
type DesiredUpdates struct {
	Ignore            uint64
	Place             uint64
	Migrate           uint64
	Stop              uint64
	InPlaceUpdate     uint64
	DestructiveUpdate uint64
	Canary            uint64
	Preemptions       uint64
	Disconnect        uint64
	Reconnect         uint64
	RescheduleNow     uint64
	RescheduleLater   uint64
}
