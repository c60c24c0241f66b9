package agent

import (
	"net/http"

	"github.com/opennomad/nomad/structs"
)

var allocSubresources = map[string]bool{"stop": true}

// allocsRequest serves GET /v1/allocations (?resources, ?task_states).
func (s *HTTPServer) allocsRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.AllocListRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	resources, err := boolParam(r, "resources")
	if err != nil {
		return nil, err
	}
	taskStates, err := boolParam(r, "task_states")
	if err != nil {
		return nil, err
	}
	if resources || taskStates {
		args.Fields = &structs.AllocStubFields{Resources: resources, TaskStates: taskStates}
	}
	lo := takePagingOptions(&args.QueryOptions)
	var out structs.AllocListResponse
	if err := s.rpc.RPC("Alloc.List", &args, &out); err != nil {
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

// allocSpecificRequest serves GET /v1/allocation/:id and PUT/POST
// /v1/allocation/:id/stop.
func (s *HTTPServer) allocSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	id, sub := splitObjectPath(r, "/v1/allocation/", allocSubresources)
	if id == "" {
		return nil, codedError(http.StatusBadRequest, "Missing allocation ID")
	}
	if sub == "stop" {
		return s.allocStop(w, r, id)
	}
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.AllocSpecificRequest{AllocID: id}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleAllocResponse
	if err := s.rpc.RPC("Alloc.GetAlloc", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Alloc == nil {
		return nil, codedError(http.StatusNotFound, structs.ErrUnknownAlloc.Error())
	}
	return out.Alloc, nil
}

func (s *HTTPServer) allocStop(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	args := structs.AllocStopRequest{AllocID: id}
	var err error
	if args.NoShutdownDelay, err = boolParam(r, "no_shutdown_delay"); err != nil {
		return nil, err
	}
	if args.Reschedule, err = boolParam(r, "reschedule"); err != nil {
		return nil, err
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.AllocStopResponse
	if err := s.rpc.RPC("Alloc.Stop", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}
