package agent

import (
	"net/http"

	"github.com/opennomad/nomad/structs"
)

var evalSubresources = map[string]bool{"allocations": true, "timeline": true}

// evalsRequest serves GET /v1/evaluations (?job=, ?status=) and DELETE
// (an operator's deletion by ID while the eval broker is paused).
func (s *HTTPServer) evalsRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	switch r.Method {
	case http.MethodGet:
	case http.MethodDelete:
		return s.evalsDelete(w, r)
	default:
		return nil, errInvalidMethod
	}
	args := structs.EvalListRequest{
		FilterJobID:      r.URL.Query().Get("job"),
		FilterEvalStatus: r.URL.Query().Get("status"),
	}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.EvalListResponse
	if err := s.rpc.RPC("Eval.List", &args, &out); err != nil {
		return nil, err
	}
	evals, next, err := applyListOptions(lo, out.Evaluations, evalKey)
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return evals, nil
}

// evalSpecificRequest serves GET /v1/evaluation/:id (?related=true),
// /v1/evaluation/:id/allocations and /v1/evaluation/:id/timeline (ours:
// the leader's record of the evaluation's life; Nomad has none).
func (s *HTTPServer) evalSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	id, sub := splitObjectPath(r, "/v1/evaluation/", evalSubresources)
	if id == "" {
		return nil, codedError(http.StatusBadRequest, "Missing evaluation ID")
	}
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.EvalSpecificRequest{EvalID: id}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	if sub == "allocations" {
		lo, err := takeListOptions(&args.QueryOptions)
		if err != nil {
			return nil, err
		}
		var out structs.EvalAllocationsResponse
		if err := s.rpc.RPC("Eval.Allocations", &args, &out); err != nil {
			return nil, err
		}
		allocs, next, err := applyListOptions(lo, out.Allocations, allocStubKey)
		if err != nil {
			return nil, err
		}
		out.NextToken = next
		setMeta(w, &out.QueryMeta)
		return allocs, nil
	}
	if sub == "timeline" {
		var out structs.EvalTimelineResponse
		if err := s.rpc.RPC("Eval.Timeline", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		if out.Events == nil {
			out.Events = []structs.EvalTimelineEvent{}
		}
		return map[string]any{"EvalID": out.EvalID, "Events": out.Events}, nil
	}
	var err error
	if args.IncludeRelated, err = boolParam(r, "related"); err != nil {
		return nil, err
	}
	var out structs.SingleEvalResponse
	if err := s.rpc.RPC("Eval.GetEval", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Eval == nil {
		return nil, codedError(http.StatusNotFound, structs.ErrUnknownEval.Error())
	}
	return out.Eval, nil
}

// evalsDelete serves DELETE /v1/evaluations with {"EvalIDs":[...]}.
func (s *HTTPServer) evalsDelete(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	var args structs.EvalUserDeleteRequest
	if err := decodeBody(r, &args); err != nil {
		return nil, err
	}
	switch {
	case args.Filter != "" && len(args.EvalIDs) > 0:
		return nil, codedError(http.StatusBadRequest, "evals cannot be deleted by both ID and filter")
	case args.Filter != "":
		return nil, codedError(http.StatusNotImplemented, "deleting evaluations by filter is not supported by this server")
	case len(args.EvalIDs) == 0:
		return nil, codedError(http.StatusBadRequest, "evals must be deleted by either ID or filter")
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.EvalUserDeleteResponse
	if err := s.rpc.RPC("Eval.Delete", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
