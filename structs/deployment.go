package structs

import (
	"slices"
	"time"
)

// Deployment statuses ("cancelled" with two l, unlike evaluations).
const (
	DeploymentStatusRunning    = "running"
	DeploymentStatusPaused     = "paused"
	DeploymentStatusFailed     = "failed"
	DeploymentStatusSuccessful = "successful"
	DeploymentStatusCancelled  = "cancelled"
	DeploymentStatusPending    = "pending"
	DeploymentStatusBlocked    = "blocked"
	// Initializing and unblocking belong to multi-region deployments;
	// listed so every status a Nomad client may see has a name here.
	DeploymentStatusInitializing = "initializing"
	DeploymentStatusUnblocking   = "unblocking"
)

// Deployment status descriptions.
const (
	DeploymentStatusDescriptionRunning               = "Deployment is running"
	DeploymentStatusDescriptionSuccessful            = "Deployment completed successfully"
	DeploymentStatusDescriptionStoppedJob            = "Cancelled because job is stopped"
	DeploymentStatusDescriptionNewerJob              = "Cancelled due to newer version of job"
	DeploymentStatusDescriptionFailedAllocations     = "Failed due to unhealthy allocations"
	DeploymentStatusDescriptionProgressDeadline      = "Failed due to progress deadline"
	DeploymentStatusDescriptionRunningNeedsPromotion = "Deployment is running but requires manual promotion"
)

// Deployment tracks the roll-out of one job version.
type Deployment struct {
	ID                 string
	Namespace          string
	JobID              string
	JobVersion         uint64
	JobModifyIndex     uint64
	JobSpecModifyIndex uint64
	JobCreateIndex     uint64
	TaskGroups         map[string]*DeploymentState
	Status             string
	StatusDescription  string
	EvalPriority       int
	CreateIndex        uint64
	ModifyIndex        uint64
	CreateTime         int64
	ModifyTime         int64
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

// NewDeployment starts a deployment for the job's current version.
func NewDeployment(job *Job, evalPriority int, now time.Time) *Deployment {
	return &Deployment{
		ID:                 GenerateUUID(),
		Namespace:          job.Namespace,
		JobID:              job.ID,
		JobVersion:         job.Version,
		JobModifyIndex:     job.ModifyIndex,
		JobSpecModifyIndex: job.JobModifyIndex,
		JobCreateIndex:     job.CreateIndex,
		Status:             DeploymentStatusRunning,
		StatusDescription:  DeploymentStatusDescriptionRunning,
		TaskGroups:         make(map[string]*DeploymentState),
		EvalPriority:       evalPriority,
		CreateTime:         now.UnixNano(),
		ModifyTime:         now.UnixNano(),
	}
}

// Active reports whether the deployment is still in progress.
func (d *Deployment) Active() bool {
	switch d.Status {
	case DeploymentStatusRunning, DeploymentStatusPaused, DeploymentStatusBlocked, DeploymentStatusPending:
		return true
	}
	return false
}

// Copy returns a deep copy.
func (d *Deployment) Copy() *Deployment {
	if d == nil {
		return nil
	}
	n := *d
	n.TaskGroups = make(map[string]*DeploymentState, len(d.TaskGroups))
	for k, s := range d.TaskGroups {
		sc := *s
		sc.PlacedCanaries = slices.Clone(s.PlacedCanaries)
		n.TaskGroups[k] = &sc
	}
	return &n
}
