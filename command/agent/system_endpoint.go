package agent

import (
	"net/http"

	"github.com/opennomad/nomad/structs"
)

// systemGCRequest serves PUT /v1/system/gc: a full garbage collection
// now, whatever the thresholds. The answer has no body.
func (s *HTTPServer) systemGCRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	return nil, s.systemOperation(w, r, "System.GarbageCollect")
}

// systemReconcileSummariesRequest serves PUT
// /v1/system/reconcile/summaries: every job summary recomputed from the
// allocations. The answer has no body.
func (s *HTTPServer) systemReconcileSummariesRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	return nil, s.systemOperation(w, r, "System.ReconcileJobSummaries")
}

// systemOperation runs a cluster-wide operation that takes no arguments
// (a PUT or POST) and answers its index.
func (s *HTTPServer) systemOperation(w http.ResponseWriter, r *http.Request, method string) error {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return err
	}
	args := structs.GenericRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return err
	}
	var out structs.GenericResponse
	if err := s.rpc.RPC(method, &args, &out); err != nil {
		return err
	}
	setIndex(w, out.Index)
	return nil
}
