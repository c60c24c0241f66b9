package api

import (
	"net/http"
	"time"
)

// Allocation desired and client statuses.
const (
	AllocDesiredStatusRun   = "run"
	AllocDesiredStatusStop  = "stop"
	AllocDesiredStatusEvict = "evict"

	AllocClientStatusPending  = "pending"
	AllocClientStatusRunning  = "running"
	AllocClientStatusComplete = "complete"
	AllocClientStatusFailed   = "failed"
	AllocClientStatusLost     = "lost"
	AllocClientStatusUnknown  = "unknown"
)

// Allocation is a task group placed on a node. The server omits
// zero-valued fields from allocation JSON.
type Allocation struct {
	ID                    string
	Namespace             string
	EvalID                string
	Name                  string
	NodeID                string
	NodeName              string
	JobID                 string
	Job                   *Job
	TaskGroup             string
	Resources             *Resources
	TaskResources         map[string]*Resources
	AllocatedResources    *AllocatedResources
	Services              map[string]string
	Metrics               *AllocationMetric
	DesiredStatus         string
	DesiredDescription    string
	DesiredTransition     DesiredTransition
	ClientStatus          string
	ClientDescription     string
	TaskStates            map[string]*TaskState
	DeploymentID          string
	DeploymentStatus      *AllocDeploymentStatus
	FollowupEvalID        string
	PreviousAllocation    string
	NextAllocation        string
	RescheduleTracker     *RescheduleTracker
	NetworkStatus         *AllocNetworkStatus
	PreemptedAllocations  []string
	PreemptedByAllocation string
	CreateIndex           uint64
	ModifyIndex           uint64
	AllocModifyIndex      uint64
	CreateTime            int64
	ModifyTime            int64
}

// AllocNetworkStatus is an allocation's network as its client set it up:
// in host mode the node's interface and address.
type AllocNetworkStatus struct {
	InterfaceName string
	Address       string
	AddressIPv6   string
	DNS           *DNSConfig
}

// AllocationListStub is the compact form of an allocation returned by list
// endpoints.
type AllocationListStub struct {
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
	TaskStates            map[string]*TaskState
	DeploymentStatus      *AllocDeploymentStatus
	FollowupEvalID        string
	NextAllocation        string
	RescheduleTracker     *RescheduleTracker
	PreemptedAllocations  []string
	PreemptedByAllocation string
	CreateIndex           uint64
	ModifyIndex           uint64
	CreateTime            int64
	ModifyTime            int64
}

// DesiredTransition is a server-side request that an allocation move:
// migrate off a draining node, or be rescheduled.
type DesiredTransition struct {
	Migrate                 *bool
	Reschedule              *bool
	ForceReschedule         *bool
	NoShutdownDelay         *bool
	MigrateDisablePlacement *bool
}

// AllocDeploymentStatus is an allocation's health within a deployment.
type AllocDeploymentStatus struct {
	Healthy     *bool
	Timestamp   time.Time
	Canary      bool
	ModifyIndex uint64
}

// RescheduleTracker records the allocations this one replaced.
type RescheduleTracker struct {
	Events         []*RescheduleEvent
	LastReschedule string
}

// RescheduleEvent is one earlier reschedule.
type RescheduleEvent struct {
	RescheduleTime int64
	PrevAllocID    string
	PrevNodeID     string
}

// Task states.
const (
	TaskStatePending = "pending"
	TaskStateRunning = "running"
	TaskStateDead    = "dead"
)

// TaskState is a task's state on its client with the events that led there.
type TaskState struct {
	State       string
	Failed      bool
	Restarts    uint64
	LastRestart time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	Events      []*TaskEvent
}

// TaskEvent is one step in a task's life ("Received", "Started",
// "Terminated", ...).
type TaskEvent struct {
	Type             string
	Time             int64
	DisplayMessage   string
	Details          map[string]string
	Message          string
	FailsTask        bool
	RestartReason    string
	SetupError       string
	DriverError      string
	DriverMessage    string
	ExitCode         int
	Signal           int
	KillReason       string
	KillTimeout      time.Duration
	KillError        string
	StartDelay       int64
	DownloadError    string
	ValidationError  string
	DiskLimit        int64
	FailedSibling    string
	TaskSignalReason string
	TaskSignal       string
	GenericSource    string
}

// AllocatedResources is what the scheduler assigned to an allocation.
type AllocatedResources struct {
	Tasks  map[string]*AllocatedTaskResources
	Shared AllocatedSharedResources
}

// AllocatedTaskResources is what one task was assigned.
type AllocatedTaskResources struct {
	Cpu      AllocatedCpuResources
	Memory   AllocatedMemoryResources
	Networks []*NetworkResource
}

// AllocatedSharedResources is what the group's tasks share.
type AllocatedSharedResources struct {
	DiskMB   int64
	Networks []*NetworkResource
	Ports    []PortMapping
}

// PortMapping is an assigned port: host port Value, task port To.
type PortMapping struct {
	Label  string
	Value  int
	To     int
	HostIP string
}

// AllocatedCpuResources is CPU in MHz shares and reserved cores.
type AllocatedCpuResources struct {
	CpuShares     int64
	ReservedCores []uint16
}

// AllocatedMemoryResources is memory in MB; MemoryMaxMB is the
// oversubscription limit.
type AllocatedMemoryResources struct {
	MemoryMB    int64
	MemoryMaxMB int64
}

// AllocStopResponse answers a stop with the evaluation that replaces the
// allocation.
type AllocStopResponse struct {
	EvalID string
}

// Allocations is the /v1/allocations endpoint group.
type Allocations struct {
	client *Client
}

// Allocations returns the allocations endpoint group.
func (c *Client) Allocations() *Allocations { return &Allocations{client: c} }

// List returns allocations (Params "resources" and "task_states" tune the
// stub contents).
func (a *Allocations) List(q *QueryOptions) ([]*AllocationListStub, *QueryMeta, error) {
	var resp []*AllocationListStub
	qm, err := a.client.query("/v1/allocations", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// PrefixList lists the allocations whose ID starts with prefix.
func (a *Allocations) PrefixList(prefix string) ([]*AllocationListStub, *QueryMeta, error) {
	return a.List(&QueryOptions{Prefix: prefix})
}

// Info returns one allocation in full.
func (a *Allocations) Info(allocID string, q *QueryOptions) (*Allocation, *QueryMeta, error) {
	var resp Allocation
	qm, err := a.client.query("/v1/allocation/"+escape(allocID), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Stop stops an allocation; the scheduler replaces it if the job still
// wants it. Params "no_shutdown_delay" skips the shutdown delay.
func (a *Allocations) Stop(allocID string, q *WriteOptions) (*AllocStopResponse, *WriteMeta, error) {
	var resp AllocStopResponse
	wm, err := a.client.write(http.MethodPut, "/v1/allocation/"+escape(allocID)+"/stop", nil, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}
