package structs

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Evaluation statuses. Note the single "l" in canceled (deployments use
// "cancelled"); clients match on these strings.
const (
	EvalStatusPending  = "pending"
	EvalStatusBlocked  = "blocked"
	EvalStatusComplete = "complete"
	EvalStatusFailed   = "failed"
	EvalStatusCanceled = "canceled"
)

// What triggered an evaluation.
const (
	EvalTriggerJobRegister          = "job-register"
	EvalTriggerJobDeregister        = "job-deregister"
	EvalTriggerPeriodicJob          = "periodic-job"
	EvalTriggerNodeDrain            = "node-drain"
	EvalTriggerNodeUpdate           = "node-update"
	EvalTriggerAllocStop            = "alloc-stop"
	EvalTriggerScheduled            = "scheduled"
	EvalTriggerRollingUpdate        = "rolling-update"
	EvalTriggerDeploymentWatcher    = "deployment-watcher"
	EvalTriggerFailedFollowUp       = "failed-follow-up"
	EvalTriggerMaxPlans             = "max-plan-attempts"
	EvalTriggerRetryFailedAlloc     = "alloc-failure"
	EvalTriggerQueuedAllocs         = "queued-allocs"
	EvalTriggerPreemption           = "preemption"
	EvalTriggerScaling              = "job-scaling"
	EvalTriggerMaxDisconnectTimeout = "max-disconnect-timeout"
	EvalTriggerReconnect            = "reconnect"
	EvalTriggerAllocReschedule      = "alloc-reschedule"
	EvalTriggerForceGC              = "force-gc"
)

// Core (garbage collection) job IDs; their evals never go through Raft.
const (
	CoreJobEvalGC       = "eval-gc"
	CoreJobNodeGC       = "node-gc"
	CoreJobJobGC        = "job-gc"
	CoreJobDeploymentGC = "deployment-gc"
	CoreJobForceGC      = "force-gc"
	// CoreJobACLExpiredGC removes expired ACL tokens and one-time tokens.
	CoreJobACLExpiredGC = "acl-expired-gc"
)

// Status descriptions written by the servers.
const (
	EvalDescBlocked        = "created to place remaining allocations"
	EvalDescMaxPlans       = "created due to placement conflicts"
	EvalDescDelayedResched = "created for delayed rescheduling"
	EvalDescCanceledNewer  = "canceled after more recent eval was processed"
	EvalDescDuplicateBlock = "existing blocked evaluation exists for job %q"
	EvalDescDeliveryLimit  = "evaluation reached delivery limit (%d)"
	EvalDescRollingUpdate  = "created for the next step of a rolling update"
	EvalDescContinuation   = "created to place the rest of a count larger than one pass places"
)

// Evaluation is a request to reconcile one job's desired and actual state.
type Evaluation struct {
	ID          string
	Namespace   string
	Priority    int
	Type        string
	TriggeredBy string
	JobID       string

	JobModifyIndex  uint64
	NodeID          string
	NodeModifyIndex uint64
	DeploymentID    string

	Status            string
	StatusDescription string

	// Wait is a relative delay before the eval may be scheduled; WaitUntil
	// an absolute one. Both are honoured by the broker, never by a sleep.
	Wait      time.Duration
	WaitUntil time.Time

	NextEval     string
	PreviousEval string
	BlockedEval  string
	RelatedEvals []*EvaluationStub `json:",omitempty"`

	// FailedTGAllocs explains, per task group, why allocs were not placed.
	FailedTGAllocs  map[string]*AllocMetric
	PlanAnnotations *PlanAnnotations

	// ClassEligibility records, for every computed node class the scheduler
	// saw, whether it could have hosted the job; blocked evals are released
	// only by capacity changes in classes that were not ineligible.
	ClassEligibility map[string]bool
	// EscapedComputedClass is set when a constraint reads unique.*
	// attributes: then any capacity change releases the blocked eval.
	EscapedComputedClass bool
	QuotaLimitReached    string
	// MissingNonNodeResources names resources outside any node (volumes,
	// quotas) whose absence blocked placement; always empty here, kept so
	// Nomad clients decode the same shape.
	MissingNonNodeResources []string
	AnnotatePlan            bool

	QueuedAllocations map[string]int
	LeaderACL         string `json:"-"`

	// SnapshotIndex is the state index the scheduler worked from; the
	// blocked-eval tracker compares it with unblock events it may have missed.
	SnapshotIndex uint64

	CreateIndex uint64
	ModifyIndex uint64
	CreateTime  int64
	ModifyTime  int64
}

// EvaluationStub is the compact view used for related evals.
type EvaluationStub struct {
	ID                string
	Namespace         string
	Priority          int
	Type              string
	TriggeredBy       string
	JobID             string
	NodeID            string
	DeploymentID      string
	Status            string
	StatusDescription string
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	CreateIndex       uint64
	ModifyIndex       uint64
	CreateTime        int64
	ModifyTime        int64
}

// Stub returns the compact view.
func (e *Evaluation) Stub() *EvaluationStub {
	return &EvaluationStub{
		ID: e.ID, Namespace: e.Namespace, Priority: e.Priority, Type: e.Type,
		TriggeredBy: e.TriggeredBy, JobID: e.JobID, NodeID: e.NodeID,
		DeploymentID: e.DeploymentID, Status: e.Status, StatusDescription: e.StatusDescription,
		WaitUntil: e.WaitUntil, NextEval: e.NextEval, PreviousEval: e.PreviousEval,
		BlockedEval: e.BlockedEval, CreateIndex: e.CreateIndex, ModifyIndex: e.ModifyIndex,
		CreateTime: e.CreateTime, ModifyTime: e.ModifyTime,
	}
}

// ValidEvalStatus reports whether s is one of the closed set of statuses.
func ValidEvalStatus(s string) bool {
	switch s {
	case EvalStatusPending, EvalStatusBlocked, EvalStatusComplete, EvalStatusFailed, EvalStatusCanceled:
		return true
	}
	return false
}

// TerminalStatus reports whether the eval will never be scheduled again.
func (e *Evaluation) TerminalStatus() bool {
	switch e.Status {
	case EvalStatusComplete, EvalStatusFailed, EvalStatusCanceled:
		return true
	}
	return false
}

// ShouldEnqueue reports whether the eval belongs in the broker.
func (e *Evaluation) ShouldEnqueue() bool { return e.Status == EvalStatusPending }

// ShouldBlock reports whether the eval belongs in the blocked tracker.
func (e *Evaluation) ShouldBlock() bool { return e.Status == EvalStatusBlocked }

// NamespacedJobID returns the eval's job as a (namespace, id) pair.
func (e *Evaluation) NamespacedJobID() NamespacedID {
	return NamespacedID{ID: e.JobID, Namespace: e.Namespace}
}

// String renders the eval for log lines.
func (e *Evaluation) String() string {
	return fmt.Sprintf("<Eval %q JobID: %q Namespace: %q>", e.ID, e.JobID, e.Namespace)
}

// Copy returns a deep copy.
func (e *Evaluation) Copy() *Evaluation {
	if e == nil {
		return nil
	}
	n := *e
	if e.FailedTGAllocs != nil {
		n.FailedTGAllocs = make(map[string]*AllocMetric, len(e.FailedTGAllocs))
		for k, m := range e.FailedTGAllocs {
			n.FailedTGAllocs[k] = m.Copy()
		}
	}
	n.PlanAnnotations = e.PlanAnnotations.Copy()
	n.ClassEligibility = maps.Clone(e.ClassEligibility)
	n.QueuedAllocations = maps.Clone(e.QueuedAllocations)
	n.MissingNonNodeResources = slices.Clone(e.MissingNonNodeResources)
	if e.RelatedEvals != nil {
		n.RelatedEvals = slices.Clone(e.RelatedEvals)
	}
	return &n
}

// MakePlan starts an empty plan for this eval and job.
func (e *Evaluation) MakePlan(j *Job) *Plan {
	p := &Plan{
		EvalID:          e.ID,
		Priority:        e.Priority,
		Job:             j,
		NodeUpdate:      make(map[string][]*AllocStop),
		NodeAllocation:  make(map[string][]*Allocation),
		NodePreemptions: make(map[string][]*AllocStop),
	}
	if j != nil {
		p.AllAtOnce = j.AllAtOnce
	}
	return p
}

// newChild returns a pending eval for the same job, linked to e.
func (e *Evaluation) newChild(triggeredBy string, now time.Time) *Evaluation {
	return &Evaluation{
		ID:             GenerateUUID(),
		Namespace:      e.Namespace,
		Priority:       e.Priority,
		Type:           e.Type,
		TriggeredBy:    triggeredBy,
		JobID:          e.JobID,
		JobModifyIndex: e.JobModifyIndex,
		Status:         EvalStatusPending,
		PreviousEval:   e.ID,
		CreateTime:     now.UnixNano(),
		ModifyTime:     now.UnixNano(),
	}
}

// CreateBlockedEval returns the eval that waits for capacity to place what
// e could not.
func (e *Evaluation) CreateBlockedEval(classEligibility map[string]bool, escaped bool, failed map[string]*AllocMetric, now time.Time) *Evaluation {
	b := e.newChild(EvalTriggerQueuedAllocs, now)
	b.Status = EvalStatusBlocked
	b.StatusDescription = EvalDescBlocked
	b.EscapedComputedClass = escaped
	b.FailedTGAllocs = failed
	if !escaped {
		b.ClassEligibility = classEligibility
	}
	return b
}

// CreateFailedFollowUpEval returns the delayed retry written when e
// exhausted its delivery limit.
func (e *Evaluation) CreateFailedFollowUpEval(wait time.Duration, now time.Time) *Evaluation {
	f := e.newChild(EvalTriggerFailedFollowUp, now)
	f.Wait = wait
	return f
}

// NextRollingEval returns the eval that continues a rolling update.
func (e *Evaluation) NextRollingEval(wait time.Duration, now time.Time) *Evaluation {
	n := e.newChild(EvalTriggerRollingUpdate, now)
	n.Wait = wait
	n.StatusDescription = EvalDescRollingUpdate
	return n
}

// CreateContinuationEval returns the eval that goes on placing what e's
// pass left queued because a count asked for more new allocs than one
// pass places.
func (e *Evaluation) CreateContinuationEval(now time.Time) *Evaluation {
	n := e.newChild(EvalTriggerQueuedAllocs, now)
	n.StatusDescription = EvalDescContinuation
	return n
}

// UpdateModifyTime stamps the eval with now, never moving time backwards
// relative to its creation.
func (e *Evaluation) UpdateModifyTime(now time.Time) {
	t := now.UnixNano()
	if t < e.CreateTime {
		t = e.CreateTime
	}
	e.ModifyTime = t
}
