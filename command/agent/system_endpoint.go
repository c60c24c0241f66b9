package agent

import (
	"net/http"

	"github.com/opennomad/nomad/structs"
)

// systemGCRequest serves PUT /v1/system/gc: a full garbage collection
// now, whatever the thresholds. The answer has no body.
func (s *HTTPServer) systemGCRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	args := structs.GenericRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.GenericResponse
	if err := s.rpc.RPC("System.GarbageCollect", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}

// systemReconcileSummariesRequest serves PUT
// /v1/system/reconcile/summaries: every job summary recomputed from the
// allocations. The answer has no body.
func (s *HTTPServer) systemReconcileSummariesRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	args := structs.GenericRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.GenericResponse
	if err := s.rpc.RPC("System.ReconcileJobSummaries", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
