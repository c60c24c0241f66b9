package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// AgentSelf answers GET /v1/agent/self. Its keys are lowercase on the
// wire, unlike most of the API.
type AgentSelf struct {
	Config map[string]any               `json:"config"`
	Member AgentMember                  `json:"member"`
	Stats  map[string]map[string]string `json:"stats"`
}

// AgentMember is one server in the gossip pool. Name is "<node>.<region>";
// Port is the gossip port; Tags carry role, region, dc, build, the RPC port
// and the Raft version.
type AgentMember struct {
	Name        string
	Addr        string
	Port        uint16
	Tags        map[string]string
	Status      string
	ProtocolMin uint8
	ProtocolMax uint8
	ProtocolCur uint8
	DelegateMin uint8
	DelegateMax uint8
	DelegateCur uint8
}

// ServerMembers answers GET /v1/agent/members.
type ServerMembers struct {
	ServerName   string
	ServerRegion string
	ServerDC     string
	Members      []*AgentMember
}

// AgentHealthResponse answers GET /v1/agent/health; each part is present
// only on agents of that kind.
type AgentHealthResponse struct {
	Client *AgentHealth `json:"client,omitempty"`
	Server *AgentHealth `json:"server,omitempty"`
}

// AgentHealth is the health of one part of an agent.
type AgentHealth struct {
	Ok      bool   `json:"ok"`
	Message string `json:"message"`
}

// Scheduler worker statuses reported by Schedulers.
const (
	WorkerStatusStarting = "Starting"
	WorkerStatusStarted  = "Started"
	WorkerStatusPausing  = "Pausing"
	WorkerStatusPaused   = "Paused"
	WorkerStatusResuming = "Resuming"
	WorkerStatusStopping = "Stopping"
	WorkerStatusStopped  = "Stopped"
)

// AgentSchedulerWorkersInfo answers GET /v1/agent/schedulers (snake_case
// on the wire).
type AgentSchedulerWorkersInfo struct {
	ServerID   string                     `json:"server_id"`
	Schedulers []AgentSchedulerWorkerInfo `json:"schedulers"`
	// Paused reports whether an operator paused every worker (extension
	// of Nomad's API, set by servers that support pausing).
	Paused *bool `json:"paused,omitempty"`
}

// AgentSchedulerWorkerInfo is one scheduler worker of a server. Started is
// an RFC 3339 timestamp.
type AgentSchedulerWorkerInfo struct {
	ID                string   `json:"id"`
	EnabledSchedulers []string `json:"enabled_schedulers"`
	Started           string   `json:"started"`
	Status            string   `json:"status"`
	WorkloadStatus    string   `json:"workload_status"`
	// OperatorPaused reports whether an operator paused this worker on
	// its own (extension of Nomad's API).
	OperatorPaused bool `json:"operator_paused,omitempty"`
}

// AgentSchedulerWorkerConfigRequest is the body of PUT
// /v1/agent/schedulers/config. EnabledSchedulers must include "_core".
type AgentSchedulerWorkerConfigRequest struct {
	NumSchedulers     int      `json:"num_schedulers"`
	EnabledSchedulers []string `json:"enabled_schedulers"`
	// Paused, when set, pauses (true) or resumes (false) every worker of
	// the server: a pausing worker finishes the evaluation in hand and
	// takes no new one. Nil leaves the workers as they are. This field is
	// an extension of Nomad's API; Nomad's clients never send it.
	Paused *bool `json:"paused,omitempty"`
}

// AgentSchedulerWorkerConfigResponse is the worker pool configuration in
// effect on a server.
type AgentSchedulerWorkerConfigResponse struct {
	ServerID          string   `json:"server_id"`
	NumSchedulers     int      `json:"num_schedulers"`
	EnabledSchedulers []string `json:"enabled_schedulers"`
	// Paused reports whether an operator paused the workers (extension of
	// Nomad's API; absent from servers that do not support pausing).
	// Workers the leader pauses for its own duties do not count.
	Paused *bool `json:"paused,omitempty"`
}

// Agent is the /v1/agent endpoint group; it addresses the agent the client
// is connected to.
type Agent struct {
	client *Client
}

// Agent returns the agent endpoint group.
func (c *Client) Agent() *Agent { return &Agent{client: c} }

// Self returns the agent's configuration, membership and stats.
func (a *Agent) Self() (*AgentSelf, error) {
	var out AgentSelf
	if _, err := a.client.query("/v1/agent/self", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Members lists the servers of the gossip pool.
func (a *Agent) Members() (*ServerMembers, error) {
	var out ServerMembers
	if _, err := a.client.query("/v1/agent/members", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Servers lists the server addresses a client agent uses.
func (a *Agent) Servers() ([]string, error) {
	var out []string
	if _, err := a.client.query("/v1/agent/servers", &out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// SetServers replaces the servers a client agent talks to.
func (a *Agent) SetServers(addrs []string) error {
	r := a.client.newRequest(http.MethodPut, "/v1/agent/servers")
	for _, addr := range addrs {
		r.params.Add("address", addr)
	}
	resp, _, err := a.client.do(r)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Health reports the agent's health. An unhealthy agent answers 500 with
// the same JSON body, which is returned without error so the caller can
// show the messages.
func (a *Agent) Health() (*AgentHealthResponse, error) {
	var out AgentHealthResponse
	_, err := a.client.query("/v1/agent/health", &out, nil)
	if err == nil {
		return &out, nil
	}
	var ure *UnexpectedResponseError
	if errors.As(err, &ure) && ure.StatusCode == http.StatusInternalServerError {
		if jerr := json.NewDecoder(strings.NewReader(ure.Body)).Decode(&out); jerr == nil {
			return &out, nil
		}
	}
	return nil, err
}

// Schedulers lists the scheduler workers of the agent's server.
func (a *Agent) Schedulers(q *QueryOptions) (*AgentSchedulerWorkersInfo, error) {
	var out AgentSchedulerWorkersInfo
	if _, err := a.client.query("/v1/agent/schedulers", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

// SchedulerWorkerConfig returns the server's worker pool configuration.
func (a *Agent) SchedulerWorkerConfig(q *QueryOptions) (*AgentSchedulerWorkerConfigResponse, error) {
	var out AgentSchedulerWorkerConfigResponse
	if _, err := a.client.query("/v1/agent/schedulers/config", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetSchedulerWorkerConfig replaces the server's worker pool (runtime only)
// and returns the configuration now in effect.
func (a *Agent) SetSchedulerWorkerConfig(req AgentSchedulerWorkerConfigRequest, q *WriteOptions) (*AgentSchedulerWorkerConfigResponse, error) {
	var out AgentSchedulerWorkerConfigResponse
	if _, err := a.client.write(http.MethodPut, "/v1/agent/schedulers/config", &req, &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}
