package taskrunner

import (
	"fmt"
	"time"

	"github.com/opennomad/nomad/client/driver"
	"github.com/opennomad/nomad/structs"
)

// Restart reasons, worded as Nomad words them in task events.
const (
	ReasonNoRestartsAllowed = "Policy allows no restarts"
	ReasonUnrecoverable     = "Error was unrecoverable"
	ReasonWithinPolicy      = "Restart within policy"
	ReasonDelay             = "Exceeded allowed attempts, applying a delay"
)

// jitterFraction is the largest random extra delay, as a fraction of the
// policy's delay, so that tasks failing together do not restart in
// lockstep.
const jitterFraction = 0.25

// Decision is what to do after a task instance ended or failed to start.
type Decision struct {
	// State is structs.TaskRestarting (start again after Delay),
	// structs.TaskNotRestarting (the task failed for good) or
	// structs.TaskTerminated (the task completed; nothing to do).
	State  string
	Delay  time.Duration
	Reason string
}

// RestartTracker applies a group's restart policy to one task. It is a
// pure state machine: time comes in with every call and randomness from
// the jitter function, so it is tested without sleeping. Not safe for
// concurrent use; the task runner's goroutine owns it.
type RestartTracker struct {
	policy structs.RestartPolicy
	// restartOnSuccess is false for tasks meant to run to completion:
	// batch tasks, ephemeral prestart tasks, poststop tasks.
	restartOnSuccess bool
	jitter           func() float64

	count         int
	intervalStart time.Time
}

// NewRestartTracker builds the tracker for a task of a job type and
// lifecycle. now starts the first interval. jitter returns values in
// [0, 1); nil means no jitter. A nil policy means the job type's default.
func NewRestartTracker(policy *structs.RestartPolicy, jobType string, lc *structs.TaskLifecycleConfig, now time.Time, jitter func() float64) *RestartTracker {
	if policy == nil {
		policy = structs.DefaultRestartPolicy(jobType)
	}
	onSuccess := jobType != structs.JobTypeBatch && jobType != structs.JobTypeSysBatch
	if lc != nil {
		switch lc.Hook {
		case structs.TaskLifecycleHookPrestart, structs.TaskLifecycleHookPoststart:
			onSuccess = lc.Sidecar
		case structs.TaskLifecycleHookPoststop:
			onSuccess = false
		}
	}
	if jitter == nil {
		jitter = func() float64 { return 0 }
	}
	return &RestartTracker{policy: *policy, restartOnSuccess: onSuccess, jitter: jitter, intervalStart: now}
}

// Count is the number of failures counted in the current interval.
func (rt *RestartTracker) Count() int { return rt.count }

// OnExit decides what follows an instance that exited at now.
func (rt *RestartTracker) OnExit(now time.Time, res *driver.ExitResult) Decision {
	if res.Successful() && !rt.restartOnSuccess {
		return Decision{State: structs.TaskTerminated}
	}
	if rt.policy.Attempts == 0 {
		return Decision{State: structs.TaskNotRestarting, Reason: ReasonNoRestartsAllowed}
	}
	rt.tick(now)
	return rt.withinPolicy(now)
}

// OnStartError decides what follows a failed start. Only recoverable
// errors are retried.
func (rt *RestartTracker) OnStartError(now time.Time, err error) Decision {
	if !driver.IsRecoverable(err) {
		return Decision{State: structs.TaskNotRestarting, Reason: ReasonUnrecoverable}
	}
	if rt.policy.Attempts == 0 {
		return Decision{State: structs.TaskNotRestarting, Reason: ReasonNoRestartsAllowed}
	}
	rt.tick(now)
	return rt.withinPolicy(now)
}

// tick counts one failure, first starting a new interval if the current
// one is over. A policy without an interval never resets.
func (rt *RestartTracker) tick(now time.Time) {
	if rt.policy.Interval > 0 && now.After(rt.intervalStart.Add(rt.policy.Interval)) {
		rt.count = 0
		rt.intervalStart = now
	}
	rt.count++
}

func (rt *RestartTracker) withinPolicy(now time.Time) Decision {
	if rt.count <= rt.policy.Attempts {
		extra := time.Duration(rt.jitter() * jitterFraction * float64(rt.policy.Delay))
		return Decision{State: structs.TaskRestarting, Delay: rt.policy.Delay + extra, Reason: ReasonWithinPolicy}
	}
	if rt.policy.Mode == structs.RestartPolicyModeDelay {
		// Wait out the interval; the next failure then opens a new one.
		wait := rt.intervalStart.Add(rt.policy.Interval).Sub(now)
		return Decision{State: structs.TaskRestarting, Delay: max(wait, rt.policy.Delay), Reason: ReasonDelay}
	}
	return Decision{
		State:  structs.TaskNotRestarting,
		Reason: fmt.Sprintf("Exceeded allowed attempts %d in interval %v and mode is %q", rt.policy.Attempts, rt.policy.Interval, rt.policy.Mode),
	}
}
