package agent

import (
	"net/http"

	"github.com/opennomad/nomad/structs"
)

// The node pools API: /v1/node/pools and /v1/node/pool/<name>[/nodes |
// /jobs], served by the NodePool.* RPCs with Nomad's paths, statuses and
// texts. Writes answer an empty body and the index. These routes sit
// under /v1/node/, the nodes' prefix: the mux sends them here because
// their patterns are longer, so a node is never looked up by the ID
// "pools" or "pool".

// nodePoolSubresources are the lists under /v1/node/pool/<name>/.
var nodePoolSubresources = map[string]bool{"nodes": true, "jobs": true}

// nodePoolsRequest serves /v1/node/pools: GET lists the pools the
// caller's token may read, PUT/POST writes the pool in the body.
func (s *HTTPServer) nodePoolsRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	switch r.Method {
	case http.MethodGet:
		return s.nodePoolList(w, r)
	case http.MethodPut, http.MethodPost:
		return s.nodePoolUpsert(w, r, "")
	}
	return nil, errInvalidMethod
}

func (s *HTTPServer) nodePoolList(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	args := structs.NodePoolListRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.NodePoolListResponse
	if err := s.rpc.RPC("NodePool.List", &args, &out); err != nil {
		return nil, err
	}
	list, next, err := applyListOptions(lo, out.NodePools, func(p *structs.NodePool) string { return p.Name })
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return list, nil
}

// nodePoolSpecificRequest serves /v1/node/pool/<name> (GET, PUT/POST,
// DELETE) and its lists of nodes and jobs.
func (s *HTTPServer) nodePoolSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	name, sub := splitObjectPath(r, "/v1/node/pool/", nodePoolSubresources)
	if name == "" {
		return nil, codedError(http.StatusBadRequest, "missing node pool name")
	}
	switch sub {
	case "nodes":
		return s.nodePoolNodes(w, r, name)
	case "jobs":
		return s.nodePoolJobs(w, r, name)
	}
	switch r.Method {
	case http.MethodGet:
		args := structs.NodePoolSpecificRequest{Name: name}
		if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		var out structs.SingleNodePoolResponse
		if err := s.rpc.RPC("NodePool.GetNodePool", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		if out.NodePool == nil {
			return nil, codedError(http.StatusNotFound, "node pool not found")
		}
		return out.NodePool, nil
	case http.MethodPut, http.MethodPost:
		return s.nodePoolUpsert(w, r, name)
	case http.MethodDelete:
		args := structs.NodePoolDeleteRequest{Names: []string{name}}
		s.parseWriteRequest(r, &args.WriteRequest)
		var out structs.GenericResponse
		if err := s.rpc.RPC("NodePool.DeleteNodePools", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return nil, nil
	}
	return nil, errInvalidMethod
}

// nodePoolUpsert writes the pool in the body; name, when the path gives
// one, must be the body's.
func (s *HTTPServer) nodePoolUpsert(w http.ResponseWriter, r *http.Request, name string) (interface{}, error) {
	var pool structs.NodePool
	if err := decodeBody(r, &pool); err != nil {
		return nil, err
	}
	if name != "" && pool.Name != name {
		return nil, codedError(http.StatusBadRequest, "Node pool name does not match request path")
	}
	// Indexes and the hash are the server's to set.
	pool.CreateIndex, pool.ModifyIndex, pool.Hash = 0, 0, nil
	args := structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{&pool}}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.GenericResponse
	if err := s.rpc.RPC("NodePool.UpsertNodePools", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}

// poolListQuery reads a pool list's query options; these lists take no
// prefix, as in Nomad.
func (s *HTTPServer) poolListQuery(r *http.Request, q *structs.QueryOptions) (*listOptions, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	if err := s.parseQueryOptions(r, q); err != nil {
		return nil, err
	}
	if q.Prefix != "" {
		return nil, codedError(http.StatusBadRequest, "prefix argument not allowed")
	}
	return takeListOptions(q)
}

// nodePoolNodes serves GET /v1/node/pool/<name>/nodes (?resources, ?os).
func (s *HTTPServer) nodePoolNodes(w http.ResponseWriter, r *http.Request, name string) (interface{}, error) {
	args := structs.NodePoolNodesRequest{Name: name}
	lo, err := s.poolListQuery(r, &args.QueryOptions)
	if err != nil {
		return nil, err
	}
	resources, err := boolParam(r, "resources")
	if err != nil {
		return nil, err
	}
	os, err := boolParam(r, "os")
	if err != nil {
		return nil, err
	}
	if resources || os {
		args.Fields = &structs.NodeStubFields{Resources: resources, OS: os}
	}
	var out structs.NodePoolNodesResponse
	if err := s.rpc.RPC("NodePool.ListNodes", &args, &out); err != nil {
		return nil, err
	}
	nodes, next, err := applyListOptions(lo, out.Nodes, nodeStubKey)
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return nodes, nil
}

// nodePoolJobs serves GET /v1/node/pool/<name>/jobs (?meta,
// ?namespace=*).
func (s *HTTPServer) nodePoolJobs(w http.ResponseWriter, r *http.Request, name string) (interface{}, error) {
	args := structs.NodePoolJobsRequest{Name: name}
	lo, err := s.poolListQuery(r, &args.QueryOptions)
	if err != nil {
		return nil, err
	}
	meta, err := boolParam(r, "meta")
	if err != nil {
		return nil, err
	}
	if meta {
		args.Fields = &structs.JobStubFields{Meta: true}
	}
	var out structs.NodePoolJobsResponse
	if err := s.rpc.RPC("NodePool.ListJobs", &args, &out); err != nil {
		return nil, err
	}
	jobs, next, err := applyListOptions(lo, out.Jobs, jobStubKey(args.Namespace == structs.AllNamespaces))
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return jobs, nil
}
