package structs

import (
	"maps"
	"slices"
	"time"
)

// Job types. Each names the scheduler that places the job.
const (
	JobTypeService  = "service"
	JobTypeBatch    = "batch"
	JobTypeSystem   = "system"
	JobTypeSysBatch = "sysbatch"
	// JobTypeCore is the internal type of garbage-collection evaluations.
	JobTypeCore = "_core"
)

// Job statuses, computed by the state store from the job's evals and allocs.
const (
	JobStatusPending = "pending"
	JobStatusRunning = "running"
	JobStatusDead    = "dead"
)

// Job priority bounds and the defaults filled in by Canonicalize.
const (
	JobMinPriority     = 1
	JobDefaultPriority = 50
	JobMaxPriority     = 100
	// CoreJobPriority is higher than any user job so GC is never starved.
	CoreJobPriority = 32767

	DefaultNamespace = "default"
	DefaultRegion    = "global"
	// AllNamespaces is the wildcard accepted by list endpoints.
	AllNamespaces = "*"

	// JobTrackedVersions is how many old versions of a job are kept.
	JobTrackedVersions = 6
)

// Node pools built into every cluster.
const (
	NodePoolAll     = "all"
	NodePoolDefault = "default"
)

// Job is the unit a user submits: a specification of task groups the
// scheduler must keep placed.
type Job struct {
	// Stop marks the job as stopped; its allocations are stopped but the
	// job stays in state until garbage collected.
	Stop bool

	Region      string
	Namespace   string
	ID          string
	ParentID    string
	Name        string
	Type        string
	Priority    int
	AllAtOnce   bool
	Datacenters []string
	NodePool    string

	Constraints []*Constraint
	Affinities  []*Affinity
	Spreads     []*Spread
	TaskGroups  []*TaskGroup

	// Update is the job-wide default update strategy; groups may override it.
	Update UpdateStrategy

	Periodic         *PeriodicConfig
	ParameterizedJob *ParameterizedJobConfig
	Dispatched       bool
	Payload          []byte

	Meta map[string]string

	Status            string
	StatusDescription string
	Stable            bool
	Version           uint64
	SubmitTime        int64
	// VersionTag names this version (job tag apply); nil when untagged.
	// It is bookkeeping on the version, not part of the specification.
	VersionTag *JobVersionTag

	CreateIndex    uint64
	ModifyIndex    uint64
	JobModifyIndex uint64
}

// NamespacedID identifies an object within a namespace.
type NamespacedID struct {
	ID        string
	Namespace string
}

// String renders the ID as namespace/id, the form used in log lines.
func (n NamespacedID) String() string { return n.Namespace + "/" + n.ID }

// NamespacedID returns the job's (namespace, ID) pair.
func (j *Job) NamespacedID() NamespacedID {
	return NamespacedID{ID: j.ID, Namespace: j.Namespace}
}

// LookupTaskGroup returns the named group or nil.
func (j *Job) LookupTaskGroup(name string) *TaskGroup {
	if j == nil {
		return nil
	}
	for _, tg := range j.TaskGroups {
		if tg.Name == name {
			return tg
		}
	}
	return nil
}

// Stopped reports whether the job is stopped or absent.
func (j *Job) Stopped() bool { return j == nil || j.Stop }

// IsPeriodic reports whether the job is a periodic template. Periodic
// templates are never scheduled themselves; they launch child jobs.
func (j *Job) IsPeriodic() bool {
	return j != nil && j.Periodic != nil && j.Periodic.Enabled
}

// IsParameterized reports whether the job is a template for dispatch.
func (j *Job) IsParameterized() bool {
	return j != nil && j.ParameterizedJob != nil && !j.Dispatched
}

// IsSystemLike reports whether the job places one alloc per eligible node.
func (j *Job) IsSystemLike() bool {
	return j != nil && (j.Type == JobTypeSystem || j.Type == JobTypeSysBatch)
}

// RequiresEval reports whether registering the job must create an
// evaluation: templates (periodic, parameterized) do not.
func (j *Job) RequiresEval() bool {
	return !j.IsPeriodic() && !j.IsParameterized()
}

// Copy returns a deep copy of the job.
func (j *Job) Copy() *Job {
	if j == nil {
		return nil
	}
	n := *j
	n.Datacenters = slices.Clone(j.Datacenters)
	n.Constraints = CopyConstraints(j.Constraints)
	n.Affinities = CopyAffinities(j.Affinities)
	n.Spreads = CopySpreads(j.Spreads)
	if j.TaskGroups != nil {
		n.TaskGroups = make([]*TaskGroup, len(j.TaskGroups))
		for i, tg := range j.TaskGroups {
			n.TaskGroups[i] = tg.Copy()
		}
	}
	n.Periodic = j.Periodic.Copy()
	n.ParameterizedJob = j.ParameterizedJob.Copy()
	n.Payload = slices.Clone(j.Payload)
	n.Meta = maps.Clone(j.Meta)
	n.VersionTag = j.VersionTag.Copy()
	return &n
}

// CombinedTaskMeta merges job, group and task meta, the innermost winning.
// Tasks see the result as NOMAD_META_* variables.
func (j *Job) CombinedTaskMeta(group, task string) map[string]string {
	tg := j.LookupTaskGroup(group)
	if tg == nil {
		return nil
	}
	out := maps.Clone(j.Meta)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, tg.Meta)
	if t := tg.LookupTask(task); t != nil {
		maps.Copy(out, t.Meta)
	}
	return out
}

// Stub returns the list view of the job, with its summary attached.
func (j *Job) Stub(summary *JobSummary) *JobListStub {
	return &JobListStub{
		ID:                j.ID,
		ParentID:          j.ParentID,
		Name:              j.Name,
		Namespace:         j.Namespace,
		Datacenters:       slices.Clone(j.Datacenters),
		NodePool:          j.NodePool,
		Type:              j.Type,
		Priority:          j.Priority,
		Periodic:          j.IsPeriodic(),
		ParameterizedJob:  j.IsParameterized(),
		Stop:              j.Stop,
		Status:            j.Status,
		StatusDescription: j.StatusDescription,
		JobSummary:        summary,
		CreateIndex:       j.CreateIndex,
		ModifyIndex:       j.ModifyIndex,
		JobModifyIndex:    j.JobModifyIndex,
		SubmitTime:        j.SubmitTime,
	}
}

// JobListStub is the compact form of a job returned by list endpoints.
type JobListStub struct {
	ID                string
	ParentID          string
	Name              string
	Namespace         string
	Datacenters       []string
	NodePool          string
	Type              string
	Priority          int
	Periodic          bool
	ParameterizedJob  bool
	Stop              bool
	Status            string
	StatusDescription string
	JobSummary        *JobSummary
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64
	SubmitTime        int64
	Meta              map[string]string `json:",omitempty"`
}

// TaskGroup is a set of tasks that are always placed together on one node.
type TaskGroup struct {
	Name  string
	Count int

	Update           *UpdateStrategy
	Migrate          *MigrateStrategy
	Constraints      []*Constraint
	Affinities       []*Affinity
	Spreads          []*Spread
	RestartPolicy    *RestartPolicy
	ReschedulePolicy *ReschedulePolicy
	EphemeralDisk    *EphemeralDisk
	Networks         Networks
	Services         []*Service
	Tasks            []*Task
	Meta             map[string]string
	// Volumes are the group's `volume` blocks, by name.
	Volumes map[string]*VolumeRequest
	// Scaling bounds the count for an autoscaler; nil without one.
	Scaling *ScalingPolicy

	ShutdownDelay             *time.Duration
	StopAfterClientDisconnect *time.Duration
	MaxClientDisconnect       *time.Duration
}

// LookupTask returns the named task or nil.
func (tg *TaskGroup) LookupTask(name string) *Task {
	for _, t := range tg.Tasks {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Copy returns a deep copy of the group.
func (tg *TaskGroup) Copy() *TaskGroup {
	if tg == nil {
		return nil
	}
	n := *tg
	n.Update = tg.Update.Copy()
	n.Migrate = tg.Migrate.Copy()
	n.Constraints = CopyConstraints(tg.Constraints)
	n.Affinities = CopyAffinities(tg.Affinities)
	n.Spreads = CopySpreads(tg.Spreads)
	n.RestartPolicy = tg.RestartPolicy.Copy()
	n.ReschedulePolicy = tg.ReschedulePolicy.Copy()
	n.EphemeralDisk = tg.EphemeralDisk.Copy()
	n.Networks = tg.Networks.Copy()
	n.Services = CopyServices(tg.Services)
	n.Volumes = CopyVolumeRequests(tg.Volumes)
	if tg.Tasks != nil {
		n.Tasks = make([]*Task, len(tg.Tasks))
		for i, t := range tg.Tasks {
			n.Tasks[i] = t.Copy()
		}
	}
	n.Meta = maps.Clone(tg.Meta)
	n.Scaling = tg.Scaling.Copy()
	n.ShutdownDelay = copyDurationPtr(tg.ShutdownDelay)
	n.StopAfterClientDisconnect = copyDurationPtr(tg.StopAfterClientDisconnect)
	n.MaxClientDisconnect = copyDurationPtr(tg.MaxClientDisconnect)
	return &n
}

// Task is one process (or container) run by a driver.
type Task struct {
	Name   string
	Driver string
	User   string
	// Config is the driver-specific configuration, passed through as is.
	Config map[string]interface{}
	Env    map[string]string

	Constraints []*Constraint
	Affinities  []*Affinity
	Resources   *Resources
	Services    []*Service
	Meta        map[string]string

	KillTimeout time.Duration
	KillSignal  string
	LogConfig   *LogConfig
	Lifecycle   *TaskLifecycleConfig
	Leader      bool
	// VolumeMounts place the group's volumes inside the task.
	VolumeMounts []*VolumeMount

	DispatchPayload *DispatchPayloadConfig
	// Actions are the commands the task offers to run on demand.
	Actions []*Action
}

// Copy returns a deep copy of the task.
func (t *Task) Copy() *Task {
	if t == nil {
		return nil
	}
	n := *t
	n.Config = copyConfigMap(t.Config)
	n.Env = maps.Clone(t.Env)
	n.Constraints = CopyConstraints(t.Constraints)
	n.Affinities = CopyAffinities(t.Affinities)
	n.Resources = t.Resources.Copy()
	n.Services = CopyServices(t.Services)
	n.Meta = maps.Clone(t.Meta)
	n.VolumeMounts = CopyVolumeMounts(t.VolumeMounts)
	if t.LogConfig != nil {
		lc := *t.LogConfig
		n.LogConfig = &lc
	}
	if t.Lifecycle != nil {
		lc := *t.Lifecycle
		n.Lifecycle = &lc
	}
	if t.DispatchPayload != nil {
		dp := *t.DispatchPayload
		n.DispatchPayload = &dp
	}
	n.Actions = CopyActions(t.Actions)
	return &n
}

// IsPrestart reports whether the task runs before the main tasks.
func (t *Task) IsPrestart() bool {
	return t.Lifecycle != nil && t.Lifecycle.Hook == TaskLifecycleHookPrestart
}

// IsPoststop reports whether the task runs after the main tasks stop.
func (t *Task) IsPoststop() bool {
	return t.Lifecycle != nil && t.Lifecycle.Hook == TaskLifecycleHookPoststop
}

// Task lifecycle hooks.
const (
	TaskLifecycleHookPrestart  = "prestart"
	TaskLifecycleHookPoststart = "poststart"
	TaskLifecycleHookPoststop  = "poststop"
)

// TaskLifecycleConfig orders a task relative to the main tasks of its group.
type TaskLifecycleConfig struct {
	Hook    string
	Sidecar bool
}

// LogConfig bounds how much of a task's stdout/stderr is kept.
type LogConfig struct {
	MaxFiles      int
	MaxFileSizeMB int
	Disabled      bool
}

// DispatchPayloadConfig says where a dispatched job's payload is written.
type DispatchPayloadConfig struct {
	File string
}

// EphemeralDisk is the scratch space shared by a group's tasks.
type EphemeralDisk struct {
	Sticky  bool
	SizeMB  int
	Migrate bool
}

// Copy returns a copy of the disk request.
func (d *EphemeralDisk) Copy() *EphemeralDisk {
	if d == nil {
		return nil
	}
	n := *d
	return &n
}

// PeriodicSpecCron is the only periodic spec type: a cron expression.
const PeriodicSpecCron = "cron"

// Payload requirements of a parameterized job.
const (
	DispatchPayloadOptional  = "optional"
	DispatchPayloadRequired  = "required"
	DispatchPayloadForbidden = "forbidden"
)

// PeriodicConfig makes a job a template launched on a cron schedule.
type PeriodicConfig struct {
	Enabled         bool
	Spec            string
	Specs           []string
	SpecType        string
	ProhibitOverlap bool
	TimeZone        string
}

// Copy returns a deep copy.
func (p *PeriodicConfig) Copy() *PeriodicConfig {
	if p == nil {
		return nil
	}
	n := *p
	n.Specs = slices.Clone(p.Specs)
	return &n
}

// ParameterizedJobConfig makes a job a template instantiated by dispatch.
type ParameterizedJobConfig struct {
	Payload      string
	MetaRequired []string
	MetaOptional []string
}

// Copy returns a deep copy.
func (p *ParameterizedJobConfig) Copy() *ParameterizedJobConfig {
	if p == nil {
		return nil
	}
	n := *p
	n.MetaRequired = slices.Clone(p.MetaRequired)
	n.MetaOptional = slices.Clone(p.MetaOptional)
	return &n
}

func copyDurationPtr(d *time.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	v := *d
	return &v
}

// copyConfigMap deep-copies a free-form driver config so that a scheduler
// or client editing a copy never aliases the stored job.
func copyConfigMap(m map[string]interface{}) map[string]interface{} {
	if m == nil {
		return nil
	}
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = copyConfigValue(v)
	}
	return out
}

func copyConfigValue(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		return copyConfigMap(t)
	case []interface{}:
		out := make([]interface{}, len(t))
		for i, e := range t {
			out[i] = copyConfigValue(e)
		}
		return out
	case []string:
		return slices.Clone(t)
	case []map[string]interface{}:
		out := make([]map[string]interface{}, len(t))
		for i, e := range t {
			out[i] = copyConfigMap(e)
		}
		return out
	default:
		return v
	}
}
