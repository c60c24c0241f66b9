package worker

// Status is where a scheduling worker is in its lifecycle. Its
// strings are what /v1/agent/schedulers reports.
type Status int

// Worker lifecycle statuses.
const (
	UnknownStatus Status = iota
	// Starting: Start was called; the goroutine is not running yet.
	Starting
	// Started: the worker takes evaluations.
	Started
	// Pausing: Pause was called; the worker finishes the eval in
	// hand and then parks.
	Pausing
	// Paused: parked; it takes no evaluation.
	Paused
	// Resuming: Resume was called; the worker is about to take
	// evaluations again.
	Resuming
	// Stopping: Stop was called; the worker finishes the eval in
	// hand and exits.
	Stopping
	// Stopped: the goroutine has exited.
	Stopped
)

func (s Status) String() string {
	switch s {
	case Starting:
		return "Starting"
	case Started:
		return "Started"
	case Pausing:
		return "Pausing"
	case Paused:
		return "Paused"
	case Resuming:
		return "Resuming"
	case Stopping:
		return "Stopping"
	case Stopped:
		return "Stopped"
	}
	return "Unknown"
}

// WorkloadStatus is what a worker is doing at the moment. Its strings are
// what /v1/agent/schedulers reports as workload_status.
type WorkloadStatus int

// Worker workload statuses.
const (
	WorkloadUnknownStatus WorkloadStatus = iota
	// WorkloadRunning: between steps of the loop.
	WorkloadRunning
	// WorkloadWaitingToDequeue: asking the leader for an evaluation.
	WorkloadWaitingToDequeue
	// WorkloadWaitingForRaft: waiting for the local state store to reach
	// the index the evaluation (or a plan's refresh) needs.
	WorkloadWaitingForRaft
	// WorkloadScheduling: the scheduler is running.
	WorkloadScheduling
	// WorkloadSubmitting: a plan is with the leader's plan applier.
	WorkloadSubmitting
	// WorkloadBackoff: waiting before retrying a failed call.
	WorkloadBackoff
	// WorkloadStopped: the worker exited.
	WorkloadStopped
	// WorkloadPaused: the worker is parked.
	WorkloadPaused
)

func (s WorkloadStatus) String() string {
	switch s {
	case WorkloadRunning:
		return "Running"
	case WorkloadWaitingToDequeue:
		return "WaitingToDequeue"
	case WorkloadWaitingForRaft:
		return "WaitingForRaft"
	case WorkloadScheduling:
		return "Scheduling"
	case WorkloadSubmitting:
		return "Submitting"
	case WorkloadBackoff:
		return "Backoff"
	case WorkloadStopped:
		return "Stopped"
	case WorkloadPaused:
		return "Paused"
	}
	return "UnknownStatus"
}
