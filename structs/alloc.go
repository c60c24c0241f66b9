package structs

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Allocation desired statuses, set by the servers.
const (
	AllocDesiredStatusRun   = "run"
	AllocDesiredStatusStop  = "stop"
	AllocDesiredStatusEvict = "evict"
)

// Allocation client statuses, reported by clients (lost and unknown are set
// by the servers on behalf of a node that stopped talking).
const (
	AllocClientStatusPending  = "pending"
	AllocClientStatusRunning  = "running"
	AllocClientStatusComplete = "complete"
	AllocClientStatusFailed   = "failed"
	AllocClientStatusLost     = "lost"
	AllocClientStatusUnknown  = "unknown"
)

// Descriptions set on allocations the scheduler stops, as Nomad words them.
const (
	AllocNotNeeded     = "alloc not needed due to job update"
	AllocMigrating     = "alloc is being migrated"
	AllocUpdating      = "alloc is being updated due to job update"
	AllocLost          = "alloc is lost since its node is down"
	AllocUnknown       = "alloc is unknown since its node is disconnected"
	AllocInPlace       = "alloc updating in-place"
	AllocNodeTainted   = "alloc not needed as node is tainted"
	AllocRescheduled   = "alloc was rescheduled because it failed"
	AllocJobStopped    = "alloc not needed since job is stopped"
	AllocStoppedByUser = "alloc was stopped by the user"
	AllocPreemptedBy   = "Preempted by alloc ID %v"
)

// Allocation places one instance of a task group on one node.
type Allocation struct {
	ID        string
	Namespace string
	EvalID    string
	// Name is "<job>.<group>[<index>]"; the index is stable across
	// replacements so a replaced alloc keeps its place in the count.
	Name      string
	NodeID    string
	NodeName  string
	JobID     string
	Job       *Job
	TaskGroup string

	AllocatedResources *AllocatedResources
	Metrics            *AllocMetric

	DesiredStatus      string
	DesiredDescription string
	DesiredTransition  DesiredTransition

	ClientStatus      string
	ClientDescription string
	TaskStates        map[string]*TaskState

	PreviousAllocation string
	NextAllocation     string

	DeploymentID     string
	DeploymentStatus *AllocDeploymentStatus

	RescheduleTracker *RescheduleTracker
	FollowupEvalID    string

	// NetworkStatus is reported by the client once it set up the
	// allocation's network; the servers keep the latest.
	NetworkStatus *AllocNetworkStatus

	PreemptedAllocations  []string
	PreemptedByAllocation string

	CreateIndex uint64
	ModifyIndex uint64
	// AllocModifyIndex changes only on server-side changes; clients diff on
	// it so their own status updates do not wake them.
	AllocModifyIndex uint64
	CreateTime       int64
	ModifyTime       int64
}

// DesiredTransition carries operator or drainer requests that the
// scheduler acts on at its next pass.
type DesiredTransition struct {
	Migrate         *bool
	Reschedule      *bool
	ForceReschedule *bool
	NoShutdownDelay *bool
}

// ShouldMigrate reports whether the drainer asked to move the alloc.
func (d DesiredTransition) ShouldMigrate() bool { return d.Migrate != nil && *d.Migrate }

// ShouldForceReschedule reports whether an operator forced a reschedule.
func (d DesiredTransition) ShouldForceReschedule() bool {
	return d.ForceReschedule != nil && *d.ForceReschedule
}

// Merge overlays the set fields of o.
func (d *DesiredTransition) Merge(o *DesiredTransition) {
	if o.Migrate != nil {
		d.Migrate = o.Migrate
	}
	if o.Reschedule != nil {
		d.Reschedule = o.Reschedule
	}
	if o.ForceReschedule != nil {
		d.ForceReschedule = o.ForceReschedule
	}
	if o.NoShutdownDelay != nil {
		d.NoShutdownDelay = o.NoShutdownDelay
	}
}

// AllocDeploymentStatus is the health of an alloc within a deployment.
type AllocDeploymentStatus struct {
	Healthy     *bool
	Timestamp   time.Time
	Canary      bool
	ModifyIndex uint64
}

// IsHealthy reports an explicitly healthy alloc.
func (a *AllocDeploymentStatus) IsHealthy() bool {
	return a != nil && a.Healthy != nil && *a.Healthy
}

// IsUnhealthy reports an explicitly unhealthy alloc.
func (a *AllocDeploymentStatus) IsUnhealthy() bool {
	return a != nil && a.Healthy != nil && !*a.Healthy
}

// ServerTerminalStatus reports whether the servers want the alloc gone.
func (a *Allocation) ServerTerminalStatus() bool {
	return a.DesiredStatus == AllocDesiredStatusStop || a.DesiredStatus == AllocDesiredStatusEvict
}

// ClientTerminalStatus reports whether the alloc stopped running for good.
func (a *Allocation) ClientTerminalStatus() bool {
	switch a.ClientStatus {
	case AllocClientStatusComplete, AllocClientStatusFailed, AllocClientStatusLost:
		return true
	}
	return false
}

// TerminalStatus reports whether the alloc no longer uses (or will soon
// release) its node's resources.
func (a *Allocation) TerminalStatus() bool {
	return a.ServerTerminalStatus() || a.ClientTerminalStatus()
}

// Index returns the index in the alloc's name, or -1 when the name is
// malformed.
func (a *Allocation) Index() int {
	return AllocIndexFromName(a.Name)
}

// AllocName builds "<job>.<group>[<index>]".
func AllocName(job, group string, idx int) string {
	return job + "." + group + "[" + strconv.Itoa(idx) + "]"
}

// AllocIndexFromName parses the index out of an alloc name.
func AllocIndexFromName(name string) int {
	l := strings.LastIndexByte(name, '[')
	r := strings.LastIndexByte(name, ']')
	if l < 0 || r <= l+1 {
		return -1
	}
	i, err := strconv.Atoi(name[l+1 : r])
	if err != nil {
		return -1
	}
	return i
}

// Copy returns a deep copy. The Job pointer is shared: jobs in state are
// immutable and an alloc's job is replaced, never edited.
func (a *Allocation) Copy() *Allocation {
	if a == nil {
		return nil
	}
	n := *a
	n.AllocatedResources = a.AllocatedResources.Copy()
	n.Metrics = a.Metrics.Copy()
	if a.TaskStates != nil {
		n.TaskStates = make(map[string]*TaskState, len(a.TaskStates))
		for k, s := range a.TaskStates {
			n.TaskStates[k] = s.Copy()
		}
	}
	if a.DeploymentStatus != nil {
		ds := *a.DeploymentStatus
		n.DeploymentStatus = &ds
	}
	n.RescheduleTracker = a.RescheduleTracker.Copy()
	n.NetworkStatus = a.NetworkStatus.Copy()
	n.PreemptedAllocations = slices.Clone(a.PreemptedAllocations)
	return &n
}

// CopySkipJob is Copy without the job, for callers that will set their own.
func (a *Allocation) CopySkipJob() *Allocation {
	n := a.Copy()
	if n != nil {
		n.Job = nil
	}
	return n
}

// ComparableResources returns the alloc's resource vector for fit checks.
func (a *Allocation) ComparableResources() *ComparableResources {
	if a.AllocatedResources == nil {
		return &ComparableResources{}
	}
	return a.AllocatedResources.Comparable()
}

// NamespacedJobID returns the alloc's job as a (namespace, id) pair.
func (a *Allocation) NamespacedJobID() NamespacedID {
	return NamespacedID{ID: a.JobID, Namespace: a.Namespace}
}

// Stub returns the compact list view.
func (a *Allocation) Stub() *AllocListStub {
	s := &AllocListStub{
		ID:                    a.ID,
		EvalID:                a.EvalID,
		Name:                  a.Name,
		Namespace:             a.Namespace,
		NodeID:                a.NodeID,
		NodeName:              a.NodeName,
		JobID:                 a.JobID,
		TaskGroup:             a.TaskGroup,
		DesiredStatus:         a.DesiredStatus,
		DesiredDescription:    a.DesiredDescription,
		ClientStatus:          a.ClientStatus,
		ClientDescription:     a.ClientDescription,
		DesiredTransition:     a.DesiredTransition,
		NextAllocation:        a.NextAllocation,
		TaskStates:            a.TaskStates,
		DeploymentStatus:      a.DeploymentStatus,
		FollowupEvalID:        a.FollowupEvalID,
		RescheduleTracker:     a.RescheduleTracker,
		PreemptedAllocations:  a.PreemptedAllocations,
		PreemptedByAllocation: a.PreemptedByAllocation,
		CreateIndex:           a.CreateIndex,
		ModifyIndex:           a.ModifyIndex,
		CreateTime:            a.CreateTime,
		ModifyTime:            a.ModifyTime,
	}
	if a.Job != nil {
		s.JobType = a.Job.Type
		s.JobVersion = a.Job.Version
	}
	return s
}

// AllocListStub is the compact alloc view of list endpoints.
type AllocListStub struct {
	ID                    string
	EvalID                string
	Name                  string
	Namespace             string
	NodeID                string
	NodeName              string
	JobID                 string
	JobType               string
	JobVersion            uint64
	TaskGroup             string
	AllocatedResources    *AllocatedResources `json:",omitempty"`
	DesiredStatus         string
	DesiredDescription    string
	ClientStatus          string
	ClientDescription     string
	DesiredTransition     DesiredTransition
	TaskStates            map[string]*TaskState
	NextAllocation        string
	DeploymentStatus      *AllocDeploymentStatus
	FollowupEvalID        string
	RescheduleTracker     *RescheduleTracker
	PreemptedAllocations  []string
	PreemptedByAllocation string
	CreateIndex           uint64
	ModifyIndex           uint64
	CreateTime            int64
	ModifyTime            int64
}

// Task states.
const (
	TaskStatePending = "pending"
	TaskStateRunning = "running"
	TaskStateDead    = "dead"
)

// TaskState is the client-reported state of one task.
type TaskState struct {
	State       string
	Failed      bool
	Restarts    uint64
	LastRestart time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	Events      []*TaskEvent
}

// Copy returns a deep copy.
func (t *TaskState) Copy() *TaskState {
	if t == nil {
		return nil
	}
	n := *t
	if t.Events != nil {
		n.Events = make([]*TaskEvent, len(t.Events))
		for i, e := range t.Events {
			n.Events[i] = e.Copy()
		}
	}
	return &n
}

// Successful reports a task that finished without failing.
func (t *TaskState) Successful() bool {
	return t.State == TaskStateDead && !t.Failed
}

// Task event types, as Nomad names them.
const (
	TaskReceived          = "Received"
	TaskSetup             = "Task Setup"
	TaskStarted           = "Started"
	TaskTerminated        = "Terminated"
	TaskRestarting        = "Restarting"
	TaskNotRestarting     = "Not Restarting"
	TaskKilling           = "Killing"
	TaskKilled            = "Killed"
	TaskDriverFailure     = "Driver Failure"
	TaskSetupFailure      = "Setup Failure"
	TaskFailedValidation  = "Failed Validation"
	TaskSignaling         = "Signaling"
	TaskRestartSignal     = "Restart Signaled"
	TaskSiblingFailed     = "Sibling Task Failed"
	TaskLeaderDead        = "Leader Task Dead"
	TaskMainDead          = "Main Tasks Dead"
	TaskClientReconnected = "Reconnected"
)

// TaskEvent is one entry of a task's history.
type TaskEvent struct {
	Type           string
	Time           int64
	Message        string
	DisplayMessage string
	Details        map[string]string
	FailsTask      bool
	RestartReason  string
	SetupError     string
	DriverError    string
	ExitCode       int
	Signal         int
	KillReason     string
	KillTimeout    time.Duration
	KillError      string
	StartDelay     int64
	// Signalling is not a Nomad field and no Nomad client reads it.
	//
	// Deprecated: use TaskSignal and TaskSignalReason.
	Signalling string

	// The remaining fields carry details of specific event types, named
	// as in Nomad so its clients render them.
	TaskSignal       string
	TaskSignalReason string
	DriverMessage    string
	ValidationError  string
	DownloadError    string
	FailedSibling    string
	GenericSource    string
}

// Copy returns a deep copy.
func (e *TaskEvent) Copy() *TaskEvent {
	if e == nil {
		return nil
	}
	n := *e
	n.Details = maps.Clone(e.Details)
	return &n
}

// NewTaskEvent creates an event of the type stamped with now.
func NewTaskEvent(typ string, now time.Time) *TaskEvent {
	return &TaskEvent{Type: typ, Time: now.UnixNano(), Details: map[string]string{}}
}

// SetMessage sets the human-readable message and mirrors it into Details.
func (e *TaskEvent) SetMessage(msg string) *TaskEvent {
	e.Message = msg
	e.DisplayMessage = msg
	e.Details["message"] = msg
	return e
}

// SetExitCode records a process exit code.
func (e *TaskEvent) SetExitCode(c int) *TaskEvent {
	e.ExitCode = c
	e.Details["exit_code"] = strconv.Itoa(c)
	return e
}

// SetSignal records the signal that ended a process.
func (e *TaskEvent) SetSignal(s int) *TaskEvent {
	e.Signal = s
	e.Details["signal"] = strconv.Itoa(s)
	return e
}

// SetFailsTask marks the event as one that fails the task.
func (e *TaskEvent) SetFailsTask() *TaskEvent {
	e.FailsTask = true
	e.Details["fails_task"] = "true"
	return e
}

// SetRestartDelay records how long the client waits before restarting.
func (e *TaskEvent) SetRestartDelay(d time.Duration) *TaskEvent {
	e.StartDelay = int64(d)
	e.Details["start_delay"] = strconv.FormatInt(int64(d), 10)
	return e
}

// SetRestartReason records why the client restarts (or not) a task.
func (e *TaskEvent) SetRestartReason(r string) *TaskEvent {
	e.RestartReason = r
	e.Details["restart_reason"] = r
	return e
}

// SetKillTimeout records the grace period given to a task being killed.
func (e *TaskEvent) SetKillTimeout(d time.Duration) *TaskEvent {
	e.KillTimeout = d
	e.Details["kill_timeout"] = d.String()
	return e
}

// SetDriverError records a driver failure.
func (e *TaskEvent) SetDriverError(err error) *TaskEvent {
	if err != nil {
		e.DriverError = err.Error()
		e.Details["driver_error"] = err.Error()
	}
	return e
}

// String is a one-line rendering for logs.
func (e *TaskEvent) String() string {
	return fmt.Sprintf("%s: %s", e.Type, e.DisplayMessage)
}

// ValidClientStatus reports whether s is a status a client may report for
// an allocation.
func ValidClientStatus(s string) bool {
	switch s {
	case AllocClientStatusPending, AllocClientStatusRunning,
		AllocClientStatusComplete, AllocClientStatusFailed,
		AllocClientStatusLost, AllocClientStatusUnknown:
		return true
	}
	return false
}
