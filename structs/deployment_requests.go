package structs

import (
	"fmt"
	"time"
)

// More deployment status descriptions, as Nomad words them.
const (
	DeploymentStatusDescriptionPaused               = "Deployment is paused"
	DeploymentStatusDescriptionFailedByUser         = "Deployment marked as failed"
	DeploymentStatusDescriptionRunningAutoPromotion = "Deployment is running pending automatic promotion"
)

// DeploymentStatusDescriptionRollback describes a failed deployment whose
// job is being reverted to version.
func DeploymentStatusDescriptionRollback(base string, version uint64) string {
	return fmt.Sprintf("%s - rolling back to job version %d", base, version)
}

// DeploymentStatusDescriptionRollbackNoop describes a failed deployment
// whose stable version has the same specification as the failed one, so
// reverting would change nothing.
func DeploymentStatusDescriptionRollbackNoop(base string, version uint64) string {
	return fmt.Sprintf("%s - not rolling back to stable job version %d as current job has same specification", base, version)
}

// DeploymentStatusDescriptionNoRollbackTarget describes a failed
// deployment that should auto-revert but has no stable version to go to.
func DeploymentStatusDescriptionNoRollbackTarget(base string) string {
	return fmt.Sprintf("%s - no stable job version to auto revert to", base)
}

// DeploymentPromoteRequest promotes the canaries of a deployment: of
// every group (All) or of the named groups.
type DeploymentPromoteRequest struct {
	DeploymentID string
	All          bool
	Groups       []string
	WriteRequest
}

// ApplyDeploymentPromoteRequest is the Raft entry of a promotion
// (DeploymentPromoteRequestType): the promotion and the eval that places
// the rest of the roll-out, in one transaction.
type ApplyDeploymentPromoteRequest struct {
	DeploymentPromoteRequest
	Eval *Evaluation
}

// DeploymentAllocHealthRequest sets the health of allocs of a deployment
// (an operator's manual verdict).
type DeploymentAllocHealthRequest struct {
	DeploymentID           string
	HealthyAllocationIDs   []string
	UnhealthyAllocationIDs []string
	WriteRequest
}

// ApplyDeploymentAllocHealthRequest is the Raft entry of alloc health
// verdicts (DeploymentAllocHealthRequestType). Besides the verdicts, the
// entry may fail the deployment (DeploymentUpdate), register the stable
// job version it reverts to (Job), and carry the eval that continues or
// reverts the roll-out, all in one transaction.
type ApplyDeploymentAllocHealthRequest struct {
	DeploymentAllocHealthRequest
	// Timestamp is the leader's clock when the verdicts were reached; it
	// becomes each alloc's DeploymentStatus.Timestamp.
	Timestamp        time.Time
	DeploymentUpdate *DeploymentStatusUpdate
	Job              *Job
	Eval             *Evaluation
}

// DeploymentAllocHealthBatchRequest is the Raft entry of the health
// verdicts the deployment watcher reached in one pass about several
// deployments (DeploymentAllocHealthBatchRequestType). Each request
// applies as its own DeploymentAllocHealth entry would, in order, and all
// in one transaction: when the state store refuses one, nothing of the
// entry is written. Only servers of MinVersionAllocHealthBatch or later
// apply it.
type DeploymentAllocHealthBatchRequest struct {
	Requests []*ApplyDeploymentAllocHealthRequest
}

// MinVersionAllocHealthBatch is the first server version that applies
// DeploymentAllocHealthBatch entries. An older server would refuse the
// entry while the leader applied it, so the deployment watcher writes
// one only once every server runs at least this version.
const MinVersionAllocHealthBatch = "0.3.0"

// DeploymentPauseRequest pauses or resumes a deployment.
type DeploymentPauseRequest struct {
	DeploymentID string
	Pause        bool
	WriteRequest
}

// DeploymentFailRequest fails a deployment (reverting the job when the
// deployment auto-reverts).
type DeploymentFailRequest struct {
	DeploymentID string
	WriteRequest
}

// DeploymentUpdateResponse answers the deployment writes above.
type DeploymentUpdateResponse struct {
	EvalID                string
	EvalCreateIndex       uint64
	DeploymentModifyIndex uint64
	// RevertedJobVersion is the version the job was reverted to, if any.
	RevertedJobVersion *uint64
	WriteMeta
}

// DeploymentListRequest lists the deployments of a namespace ("*" for
// all) whose ID starts with Prefix.
type DeploymentListRequest struct {
	QueryOptions
}

// DeploymentListResponse answers Deployment.List and Job.Deployments,
// newest first.
type DeploymentListResponse struct {
	Deployments []*Deployment
	QueryMeta
}

// DeploymentSpecificRequest names one deployment.
type DeploymentSpecificRequest struct {
	DeploymentID string
	QueryOptions
}

// SingleDeploymentResponse answers Deployment.GetDeployment and
// Job.LatestDeployment; Deployment is nil when there is none.
type SingleDeploymentResponse struct {
	Deployment *Deployment
	QueryMeta
}
