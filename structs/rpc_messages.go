package structs

import "time"

// ---- Jobs -----------------------------------------------------------------

// JobRegisterRequest registers or updates a job. The server attaches the
// evaluation it creates (Eval) so both land in one Raft entry.
type JobRegisterRequest struct {
	Job *Job
	// EnforceIndex makes the write conditional on JobModifyIndex (0 means
	// the job must not exist yet).
	EnforceIndex   bool
	JobModifyIndex uint64
	PreserveCounts bool
	// PreserveResources keeps each existing task's resources.
	PreserveResources bool
	PolicyOverride    bool
	EvalPriority      int
	Eval              *Evaluation
	// DeploymentUpdates, set by the server, cancel a deployment the new
	// version supersedes, in the same Raft entry.
	DeploymentUpdates []*DeploymentStatusUpdate
	// Submission is the job's source, kept with the version the
	// registration creates (none when the spec did not change).
	Submission *JobSubmission
	WriteRequest
}

// JobRegisterResponse answers a registration.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Warnings        string
	QueryMeta
}

// JobDeregisterRequest stops (or with Purge, removes) a job.
type JobDeregisterRequest struct {
	JobID           string
	Purge           bool
	Global          bool
	EvalPriority    int
	NoShutdownDelay bool
	// SubmitTime is stamped by the server so every replica records the same
	// version time.
	SubmitTime int64
	Eval       *Evaluation
	WriteRequest
}

// JobDeregisterResponse answers a deregistration.
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	QueryMeta
}

// JobBatchDeregisterRequest purges many jobs at once (garbage collection).
type JobBatchDeregisterRequest struct {
	Jobs  map[NamespacedID]*JobDeregisterOptions
	Evals []*Evaluation
	WriteRequest
}

// JobDeregisterOptions are per-job options of a batch deregistration.
type JobDeregisterOptions struct {
	Purge bool
}

// JobEvaluateRequest forces a new evaluation of a job.
type JobEvaluateRequest struct {
	JobID       string
	EvalOptions EvalOptions
	WriteRequest
}

// EvalOptions tune a forced evaluation.
type EvalOptions struct {
	ForceReschedule bool
}

// JobSpecificRequest reads one job (or its allocs, evals, summary, ...).
type JobSpecificRequest struct {
	JobID string
	// All includes allocs of earlier, purged jobs with the same ID.
	All bool
	QueryOptions
}

// JobListRequest lists jobs.
type JobListRequest struct {
	Fields *JobStubFields
	QueryOptions
}

// JobStubFields opts into optional stub fields.
type JobStubFields struct {
	Meta bool
}

// JobListResponse lists job stubs.
type JobListResponse struct {
	Jobs []*JobListStub
	QueryMeta
}

// SingleJobResponse returns one job, nil when it does not exist.
type SingleJobResponse struct {
	Job *Job
	QueryMeta
}

// JobSummaryResponse returns a job's summary.
type JobSummaryResponse struct {
	JobSummary *JobSummary
	QueryMeta
}

// JobAllocationsResponse lists a job's allocs.
type JobAllocationsResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// JobEvaluationsResponse lists a job's evals.
type JobEvaluationsResponse struct {
	Evaluations []*Evaluation
	QueryMeta
}

// JobVersionsRequest lists a job's versions. With Diffs, each version is
// diffed against the one before it, or, with DiffVersion or DiffTagName,
// against that version.
type JobVersionsRequest struct {
	JobID       string
	Diffs       bool
	DiffVersion *uint64
	DiffTagName string
	QueryOptions
}

// JobVersionsResponse lists versions newest first, optionally with diffs
// between consecutive versions.
type JobVersionsResponse struct {
	Versions []*Job
	Diffs    []*JobDiff
	QueryMeta
}

// JobPlanRequest dry-runs the scheduler for a job.
type JobPlanRequest struct {
	Job            *Job
	Diff           bool
	PolicyOverride bool
	WriteRequest
}

// JobPlanResponse is the dry-run's outcome.
type JobPlanResponse struct {
	Annotations        *PlanAnnotations
	FailedTGAllocs     map[string]*AllocMetric
	JobModifyIndex     uint64
	CreatedEvals       []*Evaluation
	Diff               *JobDiff
	NextPeriodicLaunch time.Time
	Warnings           string
	WriteMeta
}

// JobValidateRequest validates a job without registering it.
type JobValidateRequest struct {
	Job *Job
	WriteRequest
}

// JobValidateResponse lists validation problems.
type JobValidateResponse struct {
	DriverConfigValidated bool
	ValidationErrors      []string
	Error                 string
	Warnings              string
}

// JobStabilityRequest marks a job version stable or not.
type JobStabilityRequest struct {
	JobID      string
	JobVersion uint64
	Stable     bool
	WriteRequest
}

// ---- Nodes ----------------------------------------------------------------

// NodeRegisterRequest registers a client node.
type NodeRegisterRequest struct {
	Node      *Node
	NodeEvent *NodeEvent
	WriteRequest
}

// NodeDeregisterRequest removes nodes from state.
type NodeDeregisterRequest struct {
	NodeIDs []string
	WriteRequest
}

// NodeUpdateStatusRequest is a heartbeat or a status change.
type NodeUpdateStatusRequest struct {
	NodeID    string
	SecretID  string
	Status    string
	NodeEvent *NodeEvent
	UpdatedAt int64
	// Evals, set by the server, re-evaluate the node's jobs (a node gone
	// down has its allocs replaced). They ride in the status change's Raft
	// entry so a leader failing in between cannot leave a down node whose
	// allocs nobody replaces; the FSM stamps their NodeModifyIndex.
	Evals []*Evaluation
	// ForceIdentityRenewal is a client asking for a new node identity
	// with this heartbeat: it has none yet, its identity nears expiry, or
	// an operator asked it to renew. A heartbeat that proves the node's
	// secret gets one in NodeUpdateResponse.SignedIdentity.
	ForceIdentityRenewal bool
	WriteRequest
}

// NodeUpdateDrainRequest starts or cancels a drain.
type NodeUpdateDrainRequest struct {
	NodeID        string
	DrainStrategy *DrainStrategy
	MarkEligible  bool
	NodeEvent     *NodeEvent
	UpdatedAt     int64
	Meta          map[string]string
	WriteRequest
}

// BatchNodeUpdateDrainRequest updates many drains at once (the drainer
// finishing drains).
type BatchNodeUpdateDrainRequest struct {
	Updates    map[string]*DrainUpdate
	NodeEvents map[string]*NodeEvent
	UpdatedAt  int64
	WriteRequest
}

// DrainUpdate is one node's drain change in a batch.
type DrainUpdate struct {
	DrainStrategy *DrainStrategy
	MarkEligible  bool
}

// NodeUpdateEligibilityRequest changes scheduling eligibility.
type NodeUpdateEligibilityRequest struct {
	NodeID      string
	Eligibility string
	NodeEvent   *NodeEvent
	UpdatedAt   int64
	WriteRequest
}

// NodeEvaluateRequest forces evaluations of a node's jobs.
type NodeEvaluateRequest struct {
	NodeID string
	WriteRequest
}

// NodeSpecificRequest reads one node or its allocations.
type NodeSpecificRequest struct {
	NodeID   string
	SecretID string
	QueryOptions
}

// NodeUpdateResponse answers node writes and heartbeats.
type NodeUpdateResponse struct {
	HeartbeatTTL    time.Duration
	EvalIDs         []string
	EvalCreateIndex uint64
	NodeModifyIndex uint64
	// LeaderRPCAddr and Servers let clients discover and fail over
	// between servers.
	LeaderRPCAddr string
	NumNodes      int32
	Servers       []*NodeServerInfo
	// SignedIdentity is a new node identity (a JWT the servers signed
	// with the keyring's active key) for the client to keep; nil when
	// none was issued with this answer.
	SignedIdentity *string
	QueryMeta
}

// NodeServerInfo describes a server a client may talk to.
type NodeServerInfo struct {
	RPCAdvertiseAddr string
	Datacenter       string
}

// NodeDrainUpdateResponse answers drain and eligibility changes.
type NodeDrainUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	WriteMeta
}

// NodeEligibilityUpdateResponse answers eligibility changes.
type NodeEligibilityUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	WriteMeta
}

// NodeListRequest lists nodes.
type NodeListRequest struct {
	Fields *NodeStubFields
	QueryOptions
}

// NodeStubFields opts into optional stub fields.
type NodeStubFields struct {
	Resources bool
	OS        bool
}

// NodeListResponse lists node stubs.
type NodeListResponse struct {
	Nodes []*NodeListStub
	QueryMeta
}

// SingleNodeResponse returns one node, nil when unknown.
type SingleNodeResponse struct {
	Node *Node
	QueryMeta
}

// NodeAllocsResponse lists a node's allocations.
type NodeAllocsResponse struct {
	Allocs []*Allocation
	QueryMeta
}

// NodeClientAllocsResponse maps a node's alloc IDs to their
// AllocModifyIndex so the client fetches only what changed server side.
type NodeClientAllocsResponse struct {
	Allocs map[string]uint64
	QueryMeta
}

// ---- Allocations -----------------------------------------------------------

// AllocUpdateRequest carries client alloc status updates (and, in plan
// results, the allocs the applier commits).
type AllocUpdateRequest struct {
	// Alloc is the client-reported updates.
	Alloc []*Allocation
	// AllocsStopped and AllocsUpdated are used by plan results: the
	// allocs to stop, as decisions the state store applies to the allocs
	// it holds, and the new and updated allocs, whole.
	AllocsStopped []*AllocStop
	AllocsUpdated []*Allocation
	// Evals created alongside (reschedule evals for failed allocs).
	Evals []*Evaluation
	Job   *Job
	WriteRequest
}

// ApplyPlanResultsRequest is the Raft entry the plan applier writes.
type ApplyPlanResultsRequest struct {
	AllocUpdateRequest
	// AllocsPreempted are the allocs evicted to make room for placements.
	AllocsPreempted   []*AllocStop
	Deployment        *Deployment
	DeploymentUpdates []*DeploymentStatusUpdate
	EvalID            string
	// PreemptionEvals re-evaluate jobs that lost allocs to preemption.
	PreemptionEvals []*Evaluation
	IneligibleNodes []string
	// UpdatedAt is the applier's clock in unix nanoseconds, and the modify
	// time of the allocs the entry stops and preempts.
	UpdatedAt int64
	// JobRef, when set instead of Job, names the stored job version the
	// new and updated allocs sent without a job belong to. Only servers
	// of MinVersionPlanJobRef or later apply it; the plan applier writes
	// it only when every server is one.
	JobRef *JobVersionRef
	// Eval, when set, is the plan's eval (ID EvalID) in its final form,
	// written in this entry as an EvalUpdate of it would be, instead of
	// only moving its ModifyIndex. Only servers of MinVersionPlanEval or
	// later apply it; the plan applier writes it only when every server
	// is one and the plan committed whole.
	Eval *Evaluation
}

// AllocUpdateDesiredTransitionRequest sets desired transitions (migrate,
// reschedule) on allocs and creates the evals that act on them.
type AllocUpdateDesiredTransitionRequest struct {
	Allocs map[string]*DesiredTransition
	Evals  []*Evaluation
	WriteRequest
}

// AllocSpecificRequest reads one alloc.
type AllocSpecificRequest struct {
	AllocID string
	QueryOptions
}

// AllocsGetRequest reads many allocs by ID (clients fetching changes).
type AllocsGetRequest struct {
	AllocIDs []string
	QueryOptions
}

// AllocsGetResponse returns the requested allocs.
type AllocsGetResponse struct {
	Allocs []*Allocation
	QueryMeta
}

// AllocListRequest lists allocs.
type AllocListRequest struct {
	Fields *AllocStubFields
	QueryOptions
}

// AllocStubFields opts into optional stub fields.
type AllocStubFields struct {
	Resources  bool
	TaskStates bool
}

// AllocListResponse lists alloc stubs.
type AllocListResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// SingleAllocResponse returns one alloc, nil when unknown.
type SingleAllocResponse struct {
	Alloc *Allocation
	QueryMeta
}

// AllocStopRequest stops one alloc (it is then replaced).
type AllocStopRequest struct {
	AllocID         string
	NoShutdownDelay bool
	// Reschedule marks the stopped alloc for rescheduling
	// (DesiredTransition.Reschedule), as Nomad's ?reschedule=true does.
	Reschedule bool
	WriteRequest
}

// AllocStopResponse returns the eval created for the stop.
type AllocStopResponse struct {
	EvalID string
	WriteMeta
}

// ---- Evaluations -----------------------------------------------------------

// EvalUpdateRequest writes evals; workers carry their delivery token.
type EvalUpdateRequest struct {
	Evals     []*Evaluation
	EvalToken string
	WriteRequest
}

// EvalDeleteRequest removes evals and allocs (garbage collection).
type EvalDeleteRequest struct {
	Evals  []string
	Allocs []string
	WriteRequest
}

// EvalUserDeleteRequest is an operator's deletion of evaluations by ID
// (DELETE /v1/evaluations).
type EvalUserDeleteRequest struct {
	EvalIDs []string
	// Filter selects evals by expression; not built, refused.
	Filter string
	WriteRequest
}

// EvalUserDeleteResponse says how many evals were deleted.
type EvalUserDeleteResponse struct {
	Count int
	WriteMeta
}

// EvalDequeueRequest asks the broker for work.
type EvalDequeueRequest struct {
	Schedulers       []string
	Timeout          time.Duration
	SchedulerVersion uint16
	// WorkerID names the dequeuing worker in the leader's evaluation
	// timeline (ours; Nomad's workers do not send it).
	WorkerID string
	WriteRequest
}

// EvalDequeueResponse hands a worker an eval and its delivery token.
type EvalDequeueResponse struct {
	Eval  *Evaluation
	Token string
	// WaitIndex is the index the worker's state must reach before it
	// schedules: the newest ModifyIndex among the job's evals.
	WaitIndex uint64
	QueryMeta
}

// GetWaitIndex returns the index to wait for, falling back to the
// response index.
func (e *EvalDequeueResponse) GetWaitIndex() uint64 {
	if e.WaitIndex != 0 {
		return e.WaitIndex
	}
	if e.Eval != nil {
		return e.Eval.ModifyIndex
	}
	return e.Index
}

// EvalAckRequest acks or nacks a delivery.
type EvalAckRequest struct {
	EvalID string
	Token  string
	WriteRequest
}

// EvalSpecificRequest reads one eval.
// EvalTimelineResponse is an evaluation's timeline as the leader
// recorded it (package evaltrace); empty when it holds none.
type EvalTimelineResponse struct {
	EvalID string
	Events []EvalTimelineEvent
	QueryMeta
}

// EvalTimelineEvent is one stage an evaluation passed.
type EvalTimelineEvent struct {
	Time   time.Time
	Stage  string
	Detail string
}

type EvalSpecificRequest struct {
	EvalID         string
	IncludeRelated bool
	QueryOptions
}

// SingleEvalResponse returns one eval, nil when unknown.
type SingleEvalResponse struct {
	Eval *Evaluation
	QueryMeta
}

// EvalListRequest lists evals.
type EvalListRequest struct {
	FilterJobID      string
	FilterEvalStatus string
	QueryOptions
}

// EvalListResponse lists evals.
type EvalListResponse struct {
	Evaluations []*Evaluation
	QueryMeta
}

// EvalAllocationsResponse lists the allocs an eval created.
type EvalAllocationsResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// ---- Plans -----------------------------------------------------------------

// PlanRequest submits a plan to the leader's plan queue.
type PlanRequest struct {
	Plan *Plan
	WriteRequest
}

// PlanResponse returns the applier's result.
type PlanResponse struct {
	Result *PlanResult
	WriteMeta
}

// ---- Deployments -------------------------------------------------------------

// DeploymentStatusUpdateRequest changes a deployment's status, optionally
// with a job version to register (an auto-revert) and an eval, in one Raft
// entry.
type DeploymentStatusUpdateRequest struct {
	Eval             *Evaluation
	DeploymentUpdate *DeploymentStatusUpdate
	Job              *Job
	WriteRequest
}

// DeploymentDeleteRequest removes deployments (garbage collection).
type DeploymentDeleteRequest struct {
	Deployments []string
	WriteRequest
}

// ---- Operator --------------------------------------------------------------

// SchedulerSetConfigRequest replaces the cluster scheduler configuration,
// optionally as a check-and-set on ModifyIndex.
type SchedulerSetConfigRequest struct {
	Config SchedulerConfiguration
	CAS    bool
	WriteRequest
}

// SchedulerSetConfigurationResponse reports whether a CAS write applied.
type SchedulerSetConfigurationResponse struct {
	Updated bool
	WriteMeta
}

// SchedulerConfigurationResponse returns the configuration.
type SchedulerConfigurationResponse struct {
	SchedulerConfig *SchedulerConfiguration
	QueryMeta
}

// ClusterMetadata identifies the cluster; written once by the first leader.
type ClusterMetadata struct {
	ClusterID  string
	CreateTime int64
}

// ClusterMetadataRequest writes the cluster metadata.
type ClusterMetadataRequest struct {
	Metadata ClusterMetadata
	WriteRequest
}
