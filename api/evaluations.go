package api

import (
	"net/http"
	"time"
)

// Evaluation statuses.
const (
	EvalStatusPending  = "pending"
	EvalStatusBlocked  = "blocked"
	EvalStatusComplete = "complete"
	EvalStatusFailed   = "failed"
	EvalStatusCanceled = "canceled"
)

// Evaluation is the servers' unit of scheduling work: "something about this
// job or node changed; reconcile it". The server omits zero-valued fields
// from evaluation JSON, which decodes to the same zero values here.
type Evaluation struct {
	ID                string
	Priority          int
	Type              string
	TriggeredBy       string
	Namespace         string
	JobID             string
	JobModifyIndex    uint64
	NodeID            string
	NodeModifyIndex   uint64
	DeploymentID      string
	Status            string
	StatusDescription string
	Wait              time.Duration
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	// RelatedEvals is only filled by Info (which asks with related=true).
	RelatedEvals []*EvaluationStub
	// FailedTGAllocs explains, per task group, why placements failed.
	FailedTGAllocs          map[string]*AllocationMetric
	PlanAnnotations         *PlanAnnotations
	ClassEligibility        map[string]bool
	EscapedComputedClass    bool
	QuotaLimitReached       string
	MissingNonNodeResources []string
	AnnotatePlan            bool
	QueuedAllocations       map[string]int
	SnapshotIndex           uint64
	CreateIndex             uint64
	ModifyIndex             uint64
	CreateTime              int64
	ModifyTime              int64
}

// EvaluationStub is the compact form of a related evaluation.
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

// AllocationMetric records how the scheduler evaluated nodes for one
// placement: how many it looked at, why it filtered or exhausted them, and
// the scores of the best candidates. It is Allocation.Metrics and the value
// of Evaluation.FailedTGAllocs.
type AllocationMetric struct {
	NodesEvaluated     int
	NodesFiltered      int
	NodesInPool        int
	NodePool           string
	NodesAvailable     map[string]int
	ClassFiltered      map[string]int
	ConstraintFiltered map[string]int
	NodesExhausted     int
	ClassExhausted     map[string]int
	DimensionExhausted map[string]int
	QuotaExhausted     []string
	ResourcesExhausted map[string]*Resources
	// Scores is deprecated in favour of ScoreMetaData.
	Scores            map[string]float64
	AllocationTime    time.Duration
	CoalescedFailures int
	ScoreMetaData     []*NodeScoreMeta
	// ClosestNodes are, for a failed placement, the nodes that lacked the
	// least for it (ours; Nomad's servers do not send it).
	ClosestNodes []*NodeShortfall
}

// NodeShortfall is what a node lacked for a placement: CPU (MHz),
// memory and disk (MB) beyond what it had free.
type NodeShortfall struct {
	NodeID   string
	NodeName string
	CPU      int64
	MemoryMB int64
	DiskMB   int64
}

// NodeScoreMeta is the scoring of one candidate node.
type NodeScoreMeta struct {
	NodeID    string
	Scores    map[string]float64
	NormScore float64
}

// Evaluations is the /v1/evaluations endpoint group.
type Evaluations struct {
	client *Client
}

// Evaluations returns the evaluations endpoint group.
func (c *Client) Evaluations() *Evaluations { return &Evaluations{client: c} }

// List returns evaluations; Params "job" and "status" filter by job ID and
// status.
func (e *Evaluations) List(q *QueryOptions) ([]*Evaluation, *QueryMeta, error) {
	var resp []*Evaluation
	qm, err := e.client.query("/v1/evaluations", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// PrefixList lists the evaluations whose ID starts with prefix.
func (e *Evaluations) PrefixList(prefix string) ([]*Evaluation, *QueryMeta, error) {
	return e.List(&QueryOptions{Prefix: prefix})
}

// Info returns one evaluation with its related evaluations.
func (e *Evaluations) Info(evalID string, q *QueryOptions) (*Evaluation, *QueryMeta, error) {
	var resp Evaluation
	qm, err := e.client.query("/v1/evaluation/"+escape(evalID)+"?related=true", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Allocations lists the allocations an evaluation created or changed.
func (e *Evaluations) Allocations(evalID string, q *QueryOptions) ([]*AllocationListStub, *QueryMeta, error) {
	var resp []*AllocationListStub
	qm, err := e.client.query("/v1/evaluation/"+escape(evalID)+"/allocations", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// EvalDeleteRequest names the evaluations to delete: by ID, or by filter
// (which this server refuses with 501).
type EvalDeleteRequest struct {
	EvalIDs []string
	Filter  string
	WriteRequest
}

// Delete deletes evaluations by ID. The servers refuse unless the eval
// broker is paused (the scheduler configuration's PauseEvalBroker).
func (e *Evaluations) Delete(evalIDs []string, w *WriteOptions) (*WriteMeta, error) {
	return e.client.write(http.MethodDelete, "/v1/evaluations", &EvalDeleteRequest{EvalIDs: evalIDs}, nil, w)
}
