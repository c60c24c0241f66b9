package agent

import (
	"net/http"
	"runtime"
	"slices"
	"strconv"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/nomad/worker"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/version"
)

// The /v1/agent endpoints describe the agent answering, not the cluster,
// and use lowercase keys on the wire where Nomad does.

// agentSelf answers GET /v1/agent/self.
type agentSelf struct {
	Config *Config                      `json:"config"`
	Member structs.ServerMember         `json:"member"`
	Stats  map[string]map[string]string `json:"stats"`
}

func (s *HTTPServer) agentSelfRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	cfg := *s.agent
	if cfg.ACL.ReplicationToken != "" {
		// A management token of the authoritative region.
		cfg.ACL.ReplicationToken = "<redacted>"
	}
	out := agentSelf{Config: &cfg, Stats: s.agentStats()}
	// Only servers are gossip members; a client-only agent has none.
	if s.cfg.Server != nil {
		var members structs.ServerMembersResponse
		if err := s.rpc.RPC("Status.Members", &structs.GenericRequest{}, &members); err == nil {
			for _, m := range members.Members {
				if m != nil && m.Name == s.serverID() {
					out.Member = *m
				}
			}
		}
	}
	return out, nil
}

// serverID is this server's gossip name, "<name>.<region>".
func (s *HTTPServer) serverID() string {
	return s.agent.Name + "." + s.agent.Region
}

func (s *HTTPServer) agentStats() map[string]map[string]string {
	stats := map[string]map[string]string{
		"runtime": {
			"arch":       runtime.GOARCH,
			"os":         runtime.GOOS,
			"version":    runtime.Version(),
			"max_procs":  strconv.Itoa(runtime.GOMAXPROCS(0)),
			"goroutines": strconv.Itoa(runtime.NumGoroutine()),
			"cpu_count":  strconv.Itoa(runtime.NumCPU()),
		},
		"agent": {
			"version": version.String(),
			"server":  strconv.FormatBool(s.cfg.Server != nil),
			"client":  strconv.FormatBool(s.cfg.ClientServers != nil),
		},
	}
	if s.cfg.Server != nil {
		for section, kv := range s.cfg.Server.Stats() {
			stats[section] = kv
		}
	}
	return stats
}

// agentMembersRequest serves GET /v1/agent/members: the servers of the
// gossip pool.
func (s *HTTPServer) agentMembersRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	var out structs.ServerMembersResponse
	if err := s.genericRead(r, "Status.Members", &out); err != nil {
		return nil, err
	}
	out.Members = nonNil(out.Members)
	return out, nil
}

// agentServersRequest serves GET /v1/agent/servers: the servers a client
// agent talks to.
func (s *HTTPServer) agentServersRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	switch r.Method {
	case http.MethodGet:
	case http.MethodPut, http.MethodPost:
		return nil, codedError(http.StatusNotImplemented, "changing a client's servers at runtime is not supported by this agent")
	default:
		return nil, errInvalidMethod
	}
	if s.cfg.ClientServers == nil {
		return nil, codedError(http.StatusNotImplemented, "Client not enabled")
	}
	return nonNil(s.cfg.ClientServers()), nil
}

// agentHealthRequest serves GET /v1/agent/health[?type=client|server]:
// 200 when every part asked about is healthy, else 500 with the same
// body.
func (s *HTTPServer) agentHealthRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	types := r.URL.Query()["type"]
	want := func(t string) bool { return len(types) == 0 || slices.Contains(types, t) }
	isServer, isClient := s.cfg.Server != nil, s.cfg.ClientServers != nil
	if slices.Contains(types, "server") && !isServer {
		return nil, codedError(http.StatusBadRequest, "server not enabled")
	}
	if slices.Contains(types, "client") && !isClient {
		return nil, codedError(http.StatusBadRequest, "client not enabled")
	}
	var out api.AgentHealthResponse
	healthy := true
	if isServer && want("server") {
		h := &api.AgentHealth{Ok: true, Message: "ok"}
		var leader string
		if err := s.rpc.RPC("Status.Leader", &structs.GenericRequest{QueryOptions: structs.QueryOptions{AllowStale: true}}, &leader); err != nil {
			h.Ok, h.Message = false, err.Error()
		} else if leader == "" {
			h.Ok, h.Message = false, structs.ErrNoLeader.Error()
		}
		healthy = healthy && h.Ok
		out.Server = h
	}
	if isClient && want("client") {
		h := &api.AgentHealth{Ok: true, Message: "ok"}
		if len(s.cfg.ClientServers()) == 0 {
			h.Ok, h.Message = false, "no known servers"
		}
		healthy = healthy && h.Ok
		out.Client = h
	}
	if !healthy {
		buf, err := encodeJSON(out, isPretty(r))
		if err != nil {
			return nil, err
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write(buf)
		return nil, nil
	}
	return out, nil
}

// agentSchedulersRequest serves GET /v1/agent/schedulers: this server's
// workers, or with ?server_id= (an extension) those of any server of the
// region, through the Workers.Info RPC (agent_schedulers_pause.go).
func (s *HTTPServer) agentSchedulersRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	if id := r.URL.Query().Get("server_id"); id != "" {
		return s.remoteSchedulers(r, id)
	}
	if s.cfg.Server == nil {
		return nil, codedError(http.StatusBadRequest, "Server only endpoint")
	}
	workers, err := s.cfg.Server.SchedulerWorkers()
	if err != nil {
		return nil, err
	}
	info := api.AgentSchedulerWorkersInfo{ServerID: s.serverID(), Schedulers: nonNil(workers)}
	if cfg, err := s.cfg.Server.SchedulerWorkerConfig(); err == nil {
		info.Paused = cfg.Paused
	}
	return info, nil
}

// agentSchedulerConfigRequest serves /v1/agent/schedulers/config: GET
// reads this server's worker pool, PUT/POST replaces it until restart.
// The "paused" field (pause or resume every worker) is an extension of
// Nomad's API, passed to the server as is.
func (s *HTTPServer) agentSchedulerConfigRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if s.cfg.Server == nil {
		return nil, codedError(http.StatusBadRequest, "Server only endpoint")
	}
	var cfg api.AgentSchedulerWorkerConfigRequest
	var err error
	switch r.Method {
	case http.MethodGet:
		cfg, err = s.cfg.Server.SchedulerWorkerConfig()
	case http.MethodPut, http.MethodPost:
		// server_id may be present: a GET body can be sent back as is.
		if err := decodeBody(r, &cfg); err != nil {
			return nil, err
		}
		if !validWorkerConfig(cfg) {
			return nil, codedError(http.StatusBadRequest, "Invalid request")
		}
		cfg, err = s.cfg.Server.SetSchedulerWorkerConfig(cfg)
	default:
		return nil, errInvalidMethod
	}
	if err != nil {
		return nil, err
	}
	return api.AgentSchedulerWorkerConfigResponse{
		ServerID:          s.serverID(),
		NumSchedulers:     cfg.NumSchedulers,
		EnabledSchedulers: nonNil(cfg.EnabledSchedulers),
		// Set only by servers that support pausing by operators.
		Paused: cfg.Paused,
	}, nil
}

// validWorkerConfig accepts 0..NumCPU workers running "_core" and
// builtin schedulers only.
func validWorkerConfig(c api.AgentSchedulerWorkerConfigRequest) bool {
	if c.NumSchedulers < 0 || c.NumSchedulers > runtime.NumCPU() {
		return false
	}
	if !slices.Contains(c.EnabledSchedulers, structs.JobTypeCore) {
		return false
	}
	for _, name := range c.EnabledSchedulers {
		if !slices.Contains(worker.AllSchedulers(), name) {
			return false
		}
	}
	return true
}
