package agent

import (
	"net/http"

	"github.com/opennomad/nomad/structs"
)

// nodesUsageRequest serves GET /v1/nodes/usage (an extension of Nomad's
// API): per node, what its live allocations reserve, with ?allocs=true
// each allocation's share as well. A blocking query on the allocations.
func (s *HTTPServer) nodesUsageRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.NodeUsageRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	allocs, err := boolParam(r, "allocs")
	if err != nil {
		return nil, err
	}
	args.Allocs = allocs
	var out structs.NodeUsageResponse
	if err := s.rpc.RPC("Node.Usage", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return nonNil(out.Nodes), nil
}
