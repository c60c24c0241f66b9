package api

import "net/http"

// Scaling policy types.
const (
	ScalingPolicyTypeHorizontal  = "horizontal"
	ScalingPolicyTypeVerticalCPU = "vertical_cpu"
	ScalingPolicyTypeVerticalMem = "vertical_mem"
)

// ScalingPolicy bounds a group's count (group `scaling` block) or a task's
// resources (task `scaling "cpu"` / `scaling "mem"` blocks) for an
// autoscaler.
type ScalingPolicy struct {
	Min     *int64         `hcl:"min,optional"`
	Max     *int64         `hcl:"max,optional"`
	Policy  map[string]any `hcl:"policy,block"`
	Enabled *bool          `hcl:"enabled,optional"`
	Type    string         `hcl:"type,optional"`

	// Fields below are set by the server.

	ID          string
	Namespace   string
	Target      map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// Canonicalize enables the policy, defaults Min to the group's count and
// the type to horizontal.
func (p *ScalingPolicy) Canonicalize(groupCount int) {
	if p.Enabled == nil {
		p.Enabled = new(true)
	}
	if p.Min == nil {
		p.Min = new(int64(groupCount))
	}
	if p.Type == "" {
		p.Type = ScalingPolicyTypeHorizontal
	}
}

// ScalingRequest is the body of PUT /v1/job/:id/scale: the target group
// (Target "Job", "Group"), its new count (nil to only record an event),
// and what to record with it.
type ScalingRequest struct {
	Count   *int64
	Target  map[string]string
	Message string
	Error   bool
	Meta    map[string]any
	WriteRequest
	// PolicyOverride is accepted for compatibility.
	PolicyOverride bool
	// JobModifyIndex, when not 0, makes the scale conditional on the
	// job's JobModifyIndex.
	JobModifyIndex uint64
}

// JobScaleStatusResponse answers GET /v1/job/:id/scale.
type JobScaleStatusResponse struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]TaskGroupScaleStatus
}

// TaskGroupScaleStatus is a group's desired count and its allocations.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
	Events    []ScalingEvent
}

// ScalingEvent records one scaling request of a group.
type ScalingEvent struct {
	Count         *int64
	PreviousCount int64
	Error         bool
	Message       string
	Meta          map[string]any
	EvalID        *string
	Time          uint64
	CreateIndex   uint64
}

// Scale sets the count of a group of the job (count nil: only records
// the message as a scaling event).
func (j *Jobs) Scale(jobID, group string, count *int, message string, error bool, meta map[string]any, q *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	var count64 *int64
	if count != nil {
		c := int64(*count)
		count64 = &c
	}
	return j.ScaleWithRequest(jobID, &ScalingRequest{
		Count:   count64,
		Target:  map[string]string{"Job": jobID, "Group": group},
		Message: message,
		Error:   error,
		Meta:    meta,
	}, q)
}

// ScaleWithRequest scales the job as req says.
func (j *Jobs) ScaleWithRequest(jobID string, req *ScalingRequest, q *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	var resp JobRegisterResponse
	wm, err := j.client.repeatableWrite(http.MethodPut, "/v1/job/"+escape(jobID)+"/scale", req, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// ScaleStatus returns the job's counts and scaling events per group.
func (j *Jobs) ScaleStatus(jobID string, q *QueryOptions) (*JobScaleStatusResponse, *QueryMeta, error) {
	var resp JobScaleStatusResponse
	qm, err := j.client.query("/v1/job/"+escape(jobID)+"/scale", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}
