package agent

import (
	"net/http"
	"strconv"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// operatorSchedulerConfigRequest serves /v1/operator/scheduler/configuration:
// GET reads the cluster's scheduler configuration, PUT/POST replaces it
// (a check-and-set with ?cas=<ModifyIndex>).
func (s *HTTPServer) operatorSchedulerConfigRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	switch r.Method {
	case http.MethodGet:
		args := structs.GenericRequest{}
		if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		var out structs.SchedulerConfigurationResponse
		if err := s.rpc.RPC("Operator.SchedulerGetConfiguration", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		if out.SchedulerConfig == nil {
			return nil, codedError(http.StatusNotFound, "scheduler config not found")
		}
		return out, nil
	case http.MethodPut, http.MethodPost:
		var body api.SchedulerConfiguration
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		args := structs.SchedulerSetConfigRequest{Config: convertSchedulerConfig(&body)}
		if err := args.Config.Validate(); err != nil {
			return nil, codedError(http.StatusBadRequest, err.Error())
		}
		if body.EvalBacklogLimit == nil {
			// A client that does not know the field (Nomad's) must not
			// lift the limit by leaving it out: keep the stored one. A
			// concurrent change of the limit alone may be lost this way;
			// a check-and-set write would fail instead.
			limit, err := s.currentEvalBacklogLimit(r)
			if err != nil {
				return nil, err
			}
			args.Config.EvalBacklogLimit = limit
		}
		if cas := r.URL.Query().Get("cas"); cas != "" {
			idx, err := strconv.ParseUint(cas, 10, 64)
			if err != nil {
				return nil, codedError(http.StatusBadRequest, "Invalid cas index")
			}
			args.CAS = true
			args.Config.ModifyIndex = idx
		}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.SchedulerSetConfigurationResponse
		if err := s.rpc.RPC("Operator.SchedulerSetConfiguration", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return out, nil
	}
	return nil, errInvalidMethod
}

// currentEvalBacklogLimit reads the stored scheduler configuration's
// EvalBacklogLimit, with the request's region and token.
func (s *HTTPServer) currentEvalBacklogLimit(r *http.Request) (uint, error) {
	args := structs.GenericRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return 0, err
	}
	var out structs.SchedulerConfigurationResponse
	if err := s.rpc.RPC("Operator.SchedulerGetConfiguration", &args, &out); err != nil {
		return 0, err
	}
	if out.SchedulerConfig == nil {
		return 0, nil
	}
	return out.SchedulerConfig.EvalBacklogLimit, nil
}

// operatorRaftConfigRequest serves GET /v1/operator/raft/configuration.
func (s *HTTPServer) operatorRaftConfigRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	var out structs.RaftConfigurationResponse
	if err := s.genericRead(r, "Operator.RaftGetConfiguration", &out); err != nil {
		return nil, err
	}
	out.Servers = nonNil(out.Servers)
	setIndex(w, out.Index)
	return out, nil
}
