package api

import (
	"net/http"
	"time"
)

// Deployment statuses.
const (
	DeploymentStatusRunning    = "running"
	DeploymentStatusPaused     = "paused"
	DeploymentStatusFailed     = "failed"
	DeploymentStatusSuccessful = "successful"
	DeploymentStatusCancelled  = "cancelled"
	DeploymentStatusPending    = "pending"
	DeploymentStatusBlocked    = "blocked"
	DeploymentStatusUnblocking = "unblocking"
)

// Deployment is the roll-out of one version of a service job: the servers
// place its allocs batch by batch as earlier ones turn healthy.
type Deployment struct {
	ID                 string
	Namespace          string
	JobID              string
	JobVersion         uint64
	JobModifyIndex     uint64
	JobSpecModifyIndex uint64
	JobCreateIndex     uint64
	// TaskGroups is the progress of each task group.
	TaskGroups        map[string]*DeploymentState
	Status            string
	StatusDescription string
	EvalPriority      int
	CreateIndex       uint64
	ModifyIndex       uint64
	CreateTime        int64
	ModifyTime        int64
}

// DeploymentState is a deployment's progress for one task group.
type DeploymentState struct {
	AutoRevert        bool
	AutoPromote       bool
	ProgressDeadline  time.Duration
	RequireProgressBy time.Time
	Promoted          bool
	PlacedCanaries    []string
	DesiredCanaries   int
	DesiredTotal      int
	PlacedAllocs      int
	HealthyAllocs     int
	UnhealthyAllocs   int
}

// DeploymentUpdateResponse answers the deployment writes: the eval that
// carries the roll-out on and, when the job was reverted, to which
// version.
type DeploymentUpdateResponse struct {
	EvalID                string
	EvalCreateIndex       uint64
	DeploymentModifyIndex uint64
	RevertedJobVersion    *uint64
}

// DeploymentPromoteRequest is the body of POST /v1/deployment/promote/:id.
type DeploymentPromoteRequest struct {
	DeploymentID string
	// All promotes the canaries of every task group; otherwise those of
	// Groups.
	All    bool
	Groups []string
}

// DeploymentPauseRequest is the body of POST /v1/deployment/pause/:id.
type DeploymentPauseRequest struct {
	DeploymentID string
	Pause        bool
}

// DeploymentAllocHealthRequest is the body of POST
// /v1/deployment/allocation-health/:id.
type DeploymentAllocHealthRequest struct {
	DeploymentID           string
	HealthyAllocationIDs   []string
	UnhealthyAllocationIDs []string
}

// DeploymentFailRequest is the body of POST /v1/deployment/fail/:id.
type DeploymentFailRequest struct {
	DeploymentID string
}

// Deployments is the /v1/deployments endpoint group.
type Deployments struct {
	client *Client
}

// Deployments returns the deployments endpoint group.
func (c *Client) Deployments() *Deployments { return &Deployments{client: c} }

// List returns the deployments of the namespace, newest first.
func (d *Deployments) List(q *QueryOptions) ([]*Deployment, *QueryMeta, error) {
	var resp []*Deployment
	qm, err := d.client.query("/v1/deployments", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// PrefixList returns the deployments whose ID starts with prefix.
func (d *Deployments) PrefixList(prefix string) ([]*Deployment, *QueryMeta, error) {
	return d.List(&QueryOptions{Prefix: prefix})
}

// Info returns one deployment.
func (d *Deployments) Info(deploymentID string, q *QueryOptions) (*Deployment, *QueryMeta, error) {
	var resp Deployment
	qm, err := d.client.query("/v1/deployment/"+escape(deploymentID), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Allocations returns the stubs of the deployment's allocations.
func (d *Deployments) Allocations(deploymentID string, q *QueryOptions) ([]*AllocationListStub, *QueryMeta, error) {
	var resp []*AllocationListStub
	qm, err := d.client.query("/v1/deployment/allocations/"+escape(deploymentID), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

func (d *Deployments) update(action, deploymentID string, body any, q *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	var resp DeploymentUpdateResponse
	wm, err := d.client.write(http.MethodPut, "/v1/deployment/"+action+"/"+escape(deploymentID), body, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// Fail fails the deployment; a deployment that auto-reverts reverts its
// job to the latest stable version.
func (d *Deployments) Fail(deploymentID string, q *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.update("fail", deploymentID, &DeploymentFailRequest{DeploymentID: deploymentID}, q)
}

// Pause pauses (pause true) or resumes the deployment.
func (d *Deployments) Pause(deploymentID string, pause bool, q *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.update("pause", deploymentID, &DeploymentPauseRequest{DeploymentID: deploymentID, Pause: pause}, q)
}

// PromoteAll promotes the canaries of every task group.
func (d *Deployments) PromoteAll(deploymentID string, q *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.update("promote", deploymentID, &DeploymentPromoteRequest{DeploymentID: deploymentID, All: true}, q)
}

// PromoteGroups promotes the canaries of the named task groups.
func (d *Deployments) PromoteGroups(deploymentID string, groups []string, q *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.update("promote", deploymentID, &DeploymentPromoteRequest{DeploymentID: deploymentID, Groups: groups}, q)
}

// SetAllocHealth marks allocations of the deployment healthy or unhealthy
// (the verdict a task group with health_check "manual" waits for).
func (d *Deployments) SetAllocHealth(deploymentID string, healthy, unhealthy []string, q *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.update("allocation-health", deploymentID, &DeploymentAllocHealthRequest{
		DeploymentID: deploymentID, HealthyAllocationIDs: healthy, UnhealthyAllocationIDs: unhealthy,
	}, q)
}

// Deployments returns the job's deployments, newest first; with all,
// also those of earlier jobs registered under the same ID.
func (j *Jobs) Deployments(jobID string, all bool, q *QueryOptions) ([]*Deployment, *QueryMeta, error) {
	path := "/v1/job/" + escape(jobID) + "/deployments"
	if all {
		path += "?all=true"
	}
	var resp []*Deployment
	qm, err := j.client.query(path, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// LatestDeployment returns the job's newest deployment, nil when it has
// none.
func (j *Jobs) LatestDeployment(jobID string, q *QueryOptions) (*Deployment, *QueryMeta, error) {
	var resp *Deployment
	qm, err := j.client.query("/v1/job/"+escape(jobID)+"/deployment", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// PeriodicForceResponse names the eval of a forced periodic launch.
type PeriodicForceResponse struct {
	EvalID          string
	EvalCreateIndex uint64
}

// PeriodicForce launches a child of a periodic job now and returns its
// eval's ID.
func (j *Jobs) PeriodicForce(jobID string, q *WriteOptions) (string, *WriteMeta, error) {
	var resp PeriodicForceResponse
	wm, err := j.client.write(http.MethodPut, "/v1/job/"+escape(jobID)+"/periodic/force", nil, &resp, q)
	if err != nil {
		return "", nil, err
	}
	return resp.EvalID, wm, nil
}
