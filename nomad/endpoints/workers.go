package endpoints

import (
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/structs"
)

// Workers serves the Workers.* RPCs: a server's scheduler workers, read
// and paused one by one or all together, on the server the request
// names. They are what the agent's /v1/agent/schedulers routes answer
// for another server than its own (an extension of Nomad's API, whose
// agents answer only for themselves), so that one agent shows an
// operator every server's workers.
type Workers struct {
	srv Server
}

// workersRules: the agent ACL, as the agent's own routes ask it.
var workersRules = Rules{
	"Info":      AgentRead(),
	"SetPaused": AgentWrite(),
}

// Info describes the workers of the server the request names.
func (w *Workers) Info(args *structs.SchedulerWorkersRequest, reply *structs.SchedulerWorkersResponse) error {
	if done, err := w.srv.ForwardToServer("Workers.Info", args.ServerID, args, args, reply); done {
		return err
	}
	w.describe(reply)
	return nil
}

// SetPaused pauses or resumes one worker, or all of them, of the server
// the request names, and describes its workers after the change. The
// pause lasts until it is undone or the server restarts.
func (w *Workers) SetPaused(args *structs.SchedulerWorkerPauseRequest, reply *structs.SchedulerWorkersResponse) error {
	if done, err := w.srv.ForwardToServer("Workers.SetPaused", args.ServerID, args, args, reply); done {
		return err
	}
	pool := w.srv.SchedulerWorkers()
	switch {
	case args.WorkerID != "":
		if err := pool.SetWorkerPaused(args.WorkerID, args.Paused); err != nil {
			return err
		}
	case args.Paused:
		pool.Pause()
	default:
		pool.Resume()
	}
	w.describe(reply)
	return nil
}

func (w *Workers) describe(reply *structs.SchedulerWorkersResponse) {
	pool := w.srv.SchedulerWorkers()
	reply.ServerID = w.srv.MemberName()
	reply.Paused = pool.Paused()
	reply.Workers = nil
	for _, info := range pool.Workers() {
		reply.Workers = append(reply.Workers, workerStub(info, pool))
	}
}

func workerStub(info worker.Info, pool *worker.Pool) *structs.SchedulerWorker {
	return &structs.SchedulerWorker{
		ID: info.ID, EnabledSchedulers: info.EnabledSchedulers, Started: info.Started,
		Status: info.Status, WorkloadStatus: info.WorkloadStatus, OperatorPaused: pool.WorkerPaused(info.ID),
	}
}
