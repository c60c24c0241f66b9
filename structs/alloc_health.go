package structs

import (
	"fmt"
	"time"
)

// AllocHealthStatus is the verdict on an allocation's health.
type AllocHealthStatus int

// Health verdicts.
const (
	// AllocHealthPending means not decided yet: tasks are starting, or
	// have not run for the minimum healthy time.
	AllocHealthPending AllocHealthStatus = iota
	AllocHealthHealthy
	AllocHealthUnhealthy
)

// String names the verdict for logs.
func (s AllocHealthStatus) String() string {
	switch s {
	case AllocHealthHealthy:
		return "healthy"
	case AllocHealthUnhealthy:
		return "unhealthy"
	default:
		return "pending"
	}
}

// AllocHealthCheck is how an allocation is judged: the group's update
// block inside a deployment, its migrate block during a drain.
type AllocHealthCheck struct {
	// MinHealthyTime is how long every task must have run, without a
	// restart, before the alloc is healthy.
	MinHealthyTime time.Duration
	// HealthyDeadline bounds how long after Since the alloc may take to
	// become healthy; past it the alloc is unhealthy. Zero: no bound.
	HealthyDeadline time.Duration
	// Since is when judging started (the later of the alloc's creation
	// and the deployment's start); HealthyDeadline counts from here.
	Since time.Time
}

// AllocHealthResult is a verdict and when it applies.
type AllocHealthResult struct {
	Status AllocHealthStatus
	// At is, for a healthy alloc, when it became healthy; for an
	// unhealthy one, when that was found (the deadline, or the time of
	// judging); for a pending one, the earliest time the verdict can
	// change without news from the client (zero when only news can).
	At time.Time
	// Reason explains an unhealthy verdict.
	Reason string
}

// TaskStatesHealth judges an allocation of group tg by its client-reported
// task states, as the "task_states" health check does (and "checks" with
// no service checks to run, which is every group here):
//
//   - an alloc that failed, was lost or finished is unhealthy (a service
//     alloc in a roll-out or migration is meant to keep running);
//   - a task that failed, or a task meant to keep running that exited,
//     makes it unhealthy at once;
//   - it is healthy once every task meant to keep running (main tasks and
//     sidecars) has been running for MinHealthyTime since its last start
//     or restart, and every prestart task that is not a sidecar finished
//     successfully; poststop tasks and ephemeral poststart tasks do not
//     gate health, though a failure of the latter still counts;
//   - still pending at Since+HealthyDeadline, it is unhealthy.
//
// It reads nothing but its arguments, so the servers and a client agent
// reach the same verdict from the same task states.
func TaskStatesHealth(a *Allocation, tg *TaskGroup, check AllocHealthCheck, now time.Time) AllocHealthResult {
	switch a.ClientStatus {
	case AllocClientStatusFailed, AllocClientStatusLost, AllocClientStatusComplete:
		return AllocHealthResult{Status: AllocHealthUnhealthy, At: now,
			Reason: fmt.Sprintf("allocation is %s", a.ClientStatus)}
	}
	var deadline time.Time
	if check.HealthyDeadline > 0 && !check.Since.IsZero() {
		deadline = check.Since.Add(check.HealthyDeadline)
	}
	pending := func(at time.Time) AllocHealthResult {
		if !deadline.IsZero() {
			if !now.Before(deadline) {
				return AllocHealthResult{Status: AllocHealthUnhealthy, At: deadline,
					Reason: "allocation did not become healthy before its healthy deadline"}
			}
			if at.IsZero() || deadline.Before(at) {
				at = deadline
			}
		}
		return AllocHealthResult{Status: AllocHealthPending, At: at}
	}
	if tg == nil {
		return pending(time.Time{})
	}

	waiting := false
	var runningSince time.Time
	for _, t := range tg.Tasks {
		st := a.TaskStates[t.Name]
		if st != nil && st.Failed {
			return AllocHealthResult{Status: AllocHealthUnhealthy, At: now,
				Reason: fmt.Sprintf("task %q failed", t.Name)}
		}
		switch {
		case t.IsPoststop():
			continue
		case t.Lifecycle != nil && !t.Lifecycle.Sidecar && t.IsPrestart():
			// Runs to completion before the main tasks start.
			if st == nil || st.State != TaskStateDead {
				waiting = true
			}
			continue
		case t.Lifecycle != nil && !t.Lifecycle.Sidecar:
			// An ephemeral poststart task may come and go.
			continue
		}
		switch {
		case st == nil || st.State == TaskStatePending || st.State == "":
			waiting = true
		case st.State == TaskStateDead:
			return AllocHealthResult{Status: AllocHealthUnhealthy, At: now,
				Reason: fmt.Sprintf("task %q exited", t.Name)}
		default:
			since := st.StartedAt
			if st.LastRestart.After(since) {
				since = st.LastRestart
			}
			if since.After(runningSince) {
				runningSince = since
			}
		}
	}
	if waiting {
		return pending(time.Time{})
	}
	healthyAt := runningSince.Add(check.MinHealthyTime)
	if !now.Before(healthyAt) && (deadline.IsZero() || !deadline.Before(healthyAt)) {
		return AllocHealthResult{Status: AllocHealthHealthy, At: healthyAt}
	}
	return pending(healthyAt)
}

// AllocHealthCheck returns how allocs in a deployment of the group are judged.
func (u *UpdateStrategy) AllocHealthCheck(since time.Time) AllocHealthCheck {
	if u == nil {
		return AllocHealthCheck{Since: since}
	}
	return AllocHealthCheck{MinHealthyTime: u.MinHealthyTime, HealthyDeadline: u.HealthyDeadline, Since: since}
}

// AllocHealthCheck returns how migrated allocs of the group are judged.
func (m *MigrateStrategy) AllocHealthCheck(since time.Time) AllocHealthCheck {
	if m == nil {
		m = DefaultMigrateStrategy()
	}
	return AllocHealthCheck{MinHealthyTime: m.MinHealthyTime, HealthyDeadline: m.HealthyDeadline, Since: since}
}
