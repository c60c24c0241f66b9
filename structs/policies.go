package structs

import "time"

// Restart modes: what a client does when a task exhausts its restarts.
const (
	RestartPolicyModeFail  = "fail"
	RestartPolicyModeDelay = "delay"
)

// Reschedule delay functions.
const (
	RescheduleDelayConstant    = "constant"
	RescheduleDelayExponential = "exponential"
	RescheduleDelayFibonacci   = "fibonacci"
)

// Update health checks.
const (
	UpdateHealthCheckChecks     = "checks"
	UpdateHealthCheckTaskStates = "task_states"
	UpdateHealthCheckManual     = "manual"
)

// Lower bounds enforced by validation.
const (
	MinRestartInterval    = 5 * time.Second
	MinRescheduleInterval = 15 * time.Second
	MinRescheduleDelay    = 5 * time.Second
)

// RestartPolicy is applied locally by the client to a failing task.
type RestartPolicy struct {
	Attempts        int
	Interval        time.Duration
	Delay           time.Duration
	Mode            string
	RenderTemplates bool
}

// Copy returns a copy.
func (r *RestartPolicy) Copy() *RestartPolicy {
	if r == nil {
		return nil
	}
	n := *r
	return &n
}

// ReschedulePolicy is applied by the servers to a failed allocation: it
// decides whether and when a replacement is placed, possibly elsewhere.
type ReschedulePolicy struct {
	Attempts      int
	Interval      time.Duration
	Delay         time.Duration
	DelayFunction string
	MaxDelay      time.Duration
	Unlimited     bool
}

// Copy returns a copy.
func (r *ReschedulePolicy) Copy() *ReschedulePolicy {
	if r == nil {
		return nil
	}
	n := *r
	return &n
}

// Enabled reports whether the policy allows any rescheduling at all.
func (r *ReschedulePolicy) Enabled() bool {
	return r != nil && (r.Unlimited || (r.Attempts > 0 && r.Interval > 0))
}

// UpdateStrategy controls rolling (destructive) updates of a group.
type UpdateStrategy struct {
	Stagger          time.Duration
	MaxParallel      int
	HealthCheck      string
	MinHealthyTime   time.Duration
	HealthyDeadline  time.Duration
	ProgressDeadline time.Duration
	AutoRevert       bool
	AutoPromote      bool
	Canary           int
}

// Copy returns a copy.
func (u *UpdateStrategy) Copy() *UpdateStrategy {
	if u == nil {
		return nil
	}
	n := *u
	return &n
}

// IsEmpty reports whether the strategy imposes no rolling limit: a group
// without one replaces everything at once.
func (u *UpdateStrategy) IsEmpty() bool {
	return u == nil || u.MaxParallel == 0
}

// MigrateStrategy controls how allocations move off a draining node.
type MigrateStrategy struct {
	MaxParallel     int
	HealthCheck     string
	MinHealthyTime  time.Duration
	HealthyDeadline time.Duration
}

// Copy returns a copy.
func (m *MigrateStrategy) Copy() *MigrateStrategy {
	if m == nil {
		return nil
	}
	n := *m
	return &n
}

// DefaultUpdateStrategy is what an `update {}` block without settings means.
func DefaultUpdateStrategy() *UpdateStrategy {
	return &UpdateStrategy{
		Stagger:          30 * time.Second,
		MaxParallel:      1,
		HealthCheck:      UpdateHealthCheckChecks,
		MinHealthyTime:   10 * time.Second,
		HealthyDeadline:  5 * time.Minute,
		ProgressDeadline: 10 * time.Minute,
	}
}

// DefaultMigrateStrategy applies to service groups without a migrate block.
func DefaultMigrateStrategy() *MigrateStrategy {
	return &MigrateStrategy{
		MaxParallel:     1,
		HealthCheck:     UpdateHealthCheckChecks,
		MinHealthyTime:  10 * time.Second,
		HealthyDeadline: 5 * time.Minute,
	}
}

// DefaultRestartPolicy returns Nomad's restart defaults for a job type.
func DefaultRestartPolicy(jobType string) *RestartPolicy {
	if jobType == JobTypeBatch || jobType == JobTypeSysBatch {
		return &RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: RestartPolicyModeFail}
	}
	return &RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: RestartPolicyModeFail}
}

// DefaultReschedulePolicy returns Nomad's reschedule defaults for a job
// type. System jobs are never rescheduled (they are tied to their node).
func DefaultReschedulePolicy(jobType string) *ReschedulePolicy {
	switch jobType {
	case JobTypeService:
		return &ReschedulePolicy{Delay: 30 * time.Second, DelayFunction: RescheduleDelayExponential, MaxDelay: time.Hour, Unlimited: true}
	case JobTypeBatch:
		return &ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second, DelayFunction: RescheduleDelayConstant}
	default:
		return nil
	}
}

// DefaultEphemeralDisk is the scratch space a group gets when it asks for none.
func DefaultEphemeralDisk() *EphemeralDisk { return &EphemeralDisk{SizeMB: 300} }

// DefaultLogConfig keeps ten 10 MB files per stream.
func DefaultLogConfig() *LogConfig { return &LogConfig{MaxFiles: 10, MaxFileSizeMB: 10} }

// DefaultKillTimeout is how long a task gets between SIGINT and SIGKILL.
const DefaultKillTimeout = 5 * time.Second
