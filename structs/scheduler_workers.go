package structs

import "time"

// SchedulerWorkersRequest asks one server for its scheduler workers
// (Workers.Info). ServerID names the server by its gossip member name
// ("<node>.<region>") or node name; "" is the server asked. The agent's
// /v1/agent/schedulers?server_id= reaches any server of the region
// through it (an extension of Nomad's API, which answers for the agent
// asked only).
type SchedulerWorkersRequest struct {
	ServerID string
	QueryOptions
}

// SchedulerWorkerPauseRequest pauses (Paused) or resumes one worker of a
// server, or every worker when WorkerID is "" (Workers.SetPaused).
type SchedulerWorkerPauseRequest struct {
	ServerID string
	WorkerID string
	Paused   bool
	WriteRequest
}

// SchedulerWorkersResponse is a server's workers.
type SchedulerWorkersResponse struct {
	// ServerID is the server's gossip member name.
	ServerID string
	// Paused reports whether an operator paused every worker.
	Paused  bool
	Workers []*SchedulerWorker
	QueryMeta
}

// SchedulerWorker is one scheduler worker of a server.
type SchedulerWorker struct {
	ID                string
	EnabledSchedulers []string
	Started           time.Time
	Status            string
	WorkloadStatus    string
	// OperatorPaused reports whether an operator paused this worker on
	// its own.
	OperatorPaused bool
}
