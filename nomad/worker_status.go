package nomad

// WorkerStatus is where a scheduling worker is in its lifecycle. Its
// strings are what /v1/agent/schedulers reports.
type WorkerStatus int

// Worker lifecycle statuses.
const (
	WorkerUnknownStatus WorkerStatus = iota
	// WorkerStarting: Start was called; the goroutine is not running yet.
	WorkerStarting
	// WorkerStarted: the worker takes evaluations.
	WorkerStarted
	// WorkerPausing: Pause was called; the worker finishes the eval in
	// hand and then parks.
	WorkerPausing
	// WorkerPaused: parked; it takes no evaluation.
	WorkerPaused
	// WorkerResuming: Resume was called; the worker is about to take
	// evaluations again.
	WorkerResuming
	// WorkerStopping: Stop was called; the worker finishes the eval in
	// hand and exits.
	WorkerStopping
	// WorkerStopped: the goroutine has exited.
	WorkerStopped
)

func (s WorkerStatus) String() string {
	switch s {
	case WorkerStarting:
		return "Starting"
	case WorkerStarted:
		return "Started"
	case WorkerPausing:
		return "Pausing"
	case WorkerPaused:
		return "Paused"
	case WorkerResuming:
		return "Resuming"
	case WorkerStopping:
		return "Stopping"
	case WorkerStopped:
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
