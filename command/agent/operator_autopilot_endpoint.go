package agent

import (
	"net/http"
	"strconv"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// errAutopilotMethod answers methods the autopilot routes do not serve:
// Nomad answers these with 404, not 405.
var errAutopilotMethod = &CodedError{Code: http.StatusNotFound, Msg: "Invalid method"}

// operatorAutopilotConfigRequest serves /v1/operator/autopilot/configuration:
// GET reads the configuration, PUT replaces it (a check-and-set with
// ?cas=<ModifyIndex>) and answers a bare true or false.
func (s *HTTPServer) operatorAutopilotConfigRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	switch r.Method {
	case http.MethodGet:
		args := structs.GenericRequest{}
		if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		var out structs.AutopilotConfigResponse
		if err := s.rpc.RPC("Operator.AutopilotGetConfiguration", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		return apiAutopilotConfig(out.Config), nil
	case http.MethodPut:
		var body api.AutopilotConfiguration
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		args := structs.AutopilotSetConfigRequest{Config: structs.AutopilotConfig{
			CleanupDeadServers:      body.CleanupDeadServers,
			LastContactThreshold:    body.LastContactThreshold,
			MaxTrailingLogs:         body.MaxTrailingLogs,
			MinQuorum:               body.MinQuorum,
			ServerStabilizationTime: body.ServerStabilizationTime,
			EnableRedundancyZones:   body.EnableRedundancyZones,
			DisableUpgradeMigration: body.DisableUpgradeMigration,
			EnableCustomUpgrades:    body.EnableCustomUpgrades,
		}}
		if err := args.Config.Validate(); err != nil {
			return nil, codedError(http.StatusBadRequest, err.Error())
		}
		if cas := r.URL.Query().Get("cas"); cas != "" {
			idx, err := strconv.ParseUint(cas, 10, 64)
			if err != nil {
				return nil, codedError(http.StatusBadRequest, "Error parsing cas value: "+err.Error())
			}
			args.CAS = true
			args.Config.ModifyIndex = idx
		}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.AutopilotSetConfigResponse
		if err := s.rpc.RPC("Operator.AutopilotSetConfiguration", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return out.Updated, nil
	}
	return nil, errAutopilotMethod
}

func apiAutopilotConfig(c *structs.AutopilotConfig) *api.AutopilotConfiguration {
	return &api.AutopilotConfiguration{
		CleanupDeadServers:      c.CleanupDeadServers,
		LastContactThreshold:    c.LastContactThreshold,
		MaxTrailingLogs:         c.MaxTrailingLogs,
		MinQuorum:               c.MinQuorum,
		ServerStabilizationTime: c.ServerStabilizationTime,
		EnableRedundancyZones:   c.EnableRedundancyZones,
		DisableUpgradeMigration: c.DisableUpgradeMigration,
		EnableCustomUpgrades:    c.EnableCustomUpgrades,
		CreateIndex:             c.CreateIndex,
		ModifyIndex:             c.ModifyIndex,
	}
}

// operatorServerHealthRequest serves GET /v1/operator/autopilot/health:
// the leader's judgement of every server, answered 429 (with the same
// body) while any server is unhealthy, so that a load balancer's plain
// status check can use it.
func (s *HTTPServer) operatorServerHealthRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if r.Method != http.MethodGet {
		return nil, errAutopilotMethod
	}
	args := structs.GenericRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.OperatorHealthReply
	if err := s.rpc.RPC("Operator.ServerHealth", &args, &out); err != nil {
		return nil, err
	}
	reply := api.OperatorHealthReply{
		Healthy: out.Healthy, FailureTolerance: out.FailureTolerance, Leader: out.Leader,
		Voters: nonNil(out.Voters), Servers: []api.ServerHealth{},
	}
	for _, h := range out.Servers {
		reply.Servers = append(reply.Servers, api.ServerHealth{
			ID: h.ID, Name: h.Name, Address: h.Address, SerfStatus: h.SerfStatus, Version: h.Version,
			Leader: h.Leader, LastContact: h.LastContact, LastTerm: h.LastTerm, LastIndex: h.LastIndex,
			Healthy: h.Healthy, Voter: h.Voter, StableSince: h.StableSince,
		})
	}
	if out.Healthy {
		return reply, nil
	}
	buf, err := encodeJSON(reply, isPretty(r))
	if err != nil {
		return nil, err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(buf)
	return nil, nil
}

// operatorTransferLeadershipRequest serves PUT/POST
// /v1/operator/raft/transfer-leadership?id=|address=.
func (s *HTTPServer) operatorTransferLeadershipRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	args := structs.LeadershipTransferRequest{ID: q.Get("id"), Address: q.Get("address")}
	switch {
	case args.ID == "" && args.Address == "":
		return nil, codedError(http.StatusBadRequest, "must specify id or address")
	case args.ID != "" && args.Address != "":
		return nil, codedError(http.StatusBadRequest, "must specify either id or address, not both")
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var reply structs.GenericResponse
	if err := s.rpc.RPC("Operator.RaftTransferLeadership", &args, &reply); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}
