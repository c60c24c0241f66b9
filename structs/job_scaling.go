package structs

import "time"

// Scaling a task group's count by hand or by an autoscaler, and the
// record of every such request.

// Keys of a scaling request's Target.
const (
	ScalingTargetNamespace = "Namespace"
	ScalingTargetJob       = "Job"
	ScalingTargetGroup     = "Group"
)

// JobTrackedScalingEvents is how many scaling events are kept per task
// group, newest first.
const JobTrackedScalingEvents = 20

// ScalingEvent records one scaling request of a task group: the count it
// asked for (nil for a request that only reports, such as an autoscaler's
// error), the count before, and the eval it created if any.
type ScalingEvent struct {
	// Time is when the request arrived, in Unix nanoseconds.
	Time          uint64
	Count         *int64
	PreviousCount int64
	Message       string
	Error         bool
	Meta          map[string]interface{}
	EvalID        *string
	CreateIndex   uint64
}

// NewScalingEvent starts an event at now with the message given.
func NewScalingEvent(message string, now time.Time) *ScalingEvent {
	return &ScalingEvent{Time: uint64(now.UnixNano()), Message: message}
}

// JobScalingEvents is the state row of a job's scaling events: per task
// group, newest first.
type JobScalingEvents struct {
	Namespace     string
	JobID         string
	ScalingEvents map[string][]*ScalingEvent
	ModifyIndex   uint64
}

// ScalingEventRequest is the body of the ScalingEventRegister Raft entry:
// one event for one task group of a job.
type ScalingEventRequest struct {
	Namespace    string
	JobID        string
	TaskGroup    string
	ScalingEvent *ScalingEvent
	WriteRequest
}

// JobScaleRequest changes a task group's count (Count set) and records
// the request as a scaling event; with Count nil it only records.
type JobScaleRequest struct {
	JobID   string
	Target  map[string]string
	Count   *int64
	Message string
	Error   bool
	Meta    map[string]interface{}
	// PolicyOverride is accepted as Nomad's clients send it; this server
	// has no policies to override.
	PolicyOverride bool
	// JobModifyIndex, when not 0, refuses the scale unless the job's
	// JobModifyIndex is this one.
	JobModifyIndex uint64
	WriteRequest
}

// Problems lists what is wrong with the request by itself, in Nomad's
// words.
func (r *JobScaleRequest) Problems() []string {
	var p []string
	if r.Target[ScalingTargetGroup] == "" {
		p = append(p, "missing task group name for scaling action")
	}
	if r.Count != nil {
		if *r.Count < 0 {
			p = append(p, "scaling action count can't be negative")
		}
		if r.Error {
			p = append(p, "scaling action should not contain count if error is true")
		}
	}
	return p
}

// JobScaleStatusRequest reads a job's scale status.
type JobScaleStatusRequest struct {
	JobID string
	QueryOptions
}

// JobScaleStatusResponse answers Job.ScaleStatus; JobScaleStatus is nil
// when the job does not exist.
type JobScaleStatusResponse struct {
	JobScaleStatus *JobScaleStatus
	QueryMeta
}

// JobScaleStatus is a job's count per task group, desired and actual,
// with the group's recent scaling events.
type JobScaleStatus struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]*TaskGroupScaleStatus
}

// TaskGroupScaleStatus counts a group's allocations: Placed are the
// non-terminal, non-canary ones; Running, Healthy and Unhealthy are among
// them.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
	Events    []*ScalingEvent
}
