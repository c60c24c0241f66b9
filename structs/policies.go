package structs

import (
	"math"
	"time"
)

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

// Enabled reports whether the policy allows any rescheduling at all. As in
// Nomad, any positive attempt count enables it; validation then insists on
// an interval long enough to count the attempts in.
func (r *ReschedulePolicy) Enabled() bool {
	return r != nil && (r.Unlimited || r.Attempts > 0)
}

// Delays returns the delay before each of the first n replacements of a
// chain of failures: the base delay, then grown by the delay function and
// capped by MaxDelay. It is the sequence Allocation.NextDelay walks one
// step at a time, for as long as no reset happens:
//
//	constant:    d, d, d, d, ...
//	exponential: d, 2d, 4d, 8d, ... (each the previous doubled)
//	fibonacci:   d, d, 2d, 3d, 5d, ... (each the sum of the previous two)
func (r *ReschedulePolicy) Delays(n int) []time.Duration {
	if r == nil || n <= 0 {
		return nil
	}
	capped := func(d time.Duration) time.Duration {
		if r.MaxDelay > 0 && d > r.MaxDelay {
			return r.MaxDelay
		}
		return d
	}
	out := make([]time.Duration, n)
	for i := range out {
		switch {
		case i == 0:
			out[i] = r.Delay
		case r.DelayFunction == RescheduleDelayExponential:
			out[i] = capped(saturatingAdd(out[i-1], out[i-1]))
		case r.DelayFunction == RescheduleDelayFibonacci && i >= 2:
			out[i] = capped(saturatingAdd(out[i-1], out[i-2]))
		case r.DelayFunction == RescheduleDelayFibonacci:
			out[i] = r.Delay
		default:
			out[i] = r.Delay
		}
	}
	return out
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

// saturatingAdd adds two non-negative durations without wrapping: an
// uncapped exponential series overflows int64 after ~60 steps.
func saturatingAdd(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
