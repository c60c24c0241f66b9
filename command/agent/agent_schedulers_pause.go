package agent

import (
	"net/http"
	"time"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// Extensions of Nomad's /v1/agent/schedulers routes, which answer for the
// agent asked only: ?server_id= names another server of the region, and
// /v1/agent/schedulers/pause pauses or resumes one worker or all of them.
// Both go through the Workers RPCs, which the servers forward to the
// server named, so that one agent (and the web UI) reaches every
// server's workers.

// schedulerPauseBody is the body of PUT /v1/agent/schedulers/pause.
type schedulerPauseBody struct {
	// Paused pauses (true) or resumes (false).
	Paused *bool `json:"paused"`
	// WorkerID names one worker; "" means every worker of the server.
	WorkerID string `json:"worker_id"`
}

// remoteSchedulers answers GET /v1/agent/schedulers?server_id=.
func (s *HTTPServer) remoteSchedulers(r *http.Request, serverID string) (interface{}, error) {
	args := structs.SchedulerWorkersRequest{ServerID: serverID}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SchedulerWorkersResponse
	if err := s.rpc.RPC("Workers.Info", &args, &out); err != nil {
		return nil, err
	}
	return schedulersInfo(&out), nil
}

// agentSchedulersPauseRequest serves PUT/POST /v1/agent/schedulers/pause
// (?server_id= for another server): {"paused": bool, "worker_id"}. It
// answers the server's workers after the change.
func (s *HTTPServer) agentSchedulersPauseRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		return nil, errInvalidMethod
	}
	var body schedulerPauseBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Paused == nil {
		return nil, codedError(http.StatusBadRequest, "paused: required, true to pause or false to resume")
	}
	args := structs.SchedulerWorkerPauseRequest{ServerID: r.URL.Query().Get("server_id"), WorkerID: body.WorkerID, Paused: *body.Paused}
	s.parseWriteRequest(r, &args.WriteRequest)
	if args.ServerID == "" && s.cfg.Server == nil {
		return nil, codedError(http.StatusBadRequest, "Server only endpoint (or name a server with ?server_id=)")
	}
	var out structs.SchedulerWorkersResponse
	if err := s.rpc.RPC("Workers.SetPaused", &args, &out); err != nil {
		return nil, err
	}
	return schedulersInfo(&out), nil
}

// schedulersInfo is the RPC's answer in the route's shape (snake_case,
// as Nomad's), with the extension fields.
func schedulersInfo(out *structs.SchedulerWorkersResponse) api.AgentSchedulerWorkersInfo {
	paused := out.Paused
	info := api.AgentSchedulerWorkersInfo{ServerID: out.ServerID, Paused: &paused, Schedulers: []api.AgentSchedulerWorkerInfo{}}
	for _, w := range out.Workers {
		info.Schedulers = append(info.Schedulers, api.AgentSchedulerWorkerInfo{
			ID: w.ID, EnabledSchedulers: nonNil(w.EnabledSchedulers), Started: w.Started.UTC().Format(time.RFC3339Nano),
			Status: w.Status, WorkloadStatus: w.WorkloadStatus, OperatorPaused: w.OperatorPaused,
		})
	}
	return info
}
