package agent

import (
	"fmt"
	"net/http"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

var nodeSubresources = map[string]bool{
	"allocations": true, "drain": true, "eligibility": true, "evaluate": true, "purge": true,
}

// nodeJSON is how a node is served: without its secret, and with the
// legacy top-level Drain flag that Nomad clients still read.
type nodeJSON struct {
	*structs.Node
	// SecretID shadows the node's own: always served, always empty, as
	// Nomad serves it (clients check the key is there and blank).
	SecretID string
	Drain    bool
}

func newNodeJSON(n *structs.Node) *nodeJSON {
	if n == nil {
		return nil
	}
	return &nodeJSON{Node: n, Drain: n.DrainStrategy != nil}
}

// nodesRequest serves GET /v1/nodes.
func (s *HTTPServer) nodesRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.NodeListRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
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
	lo := takePagingOptions(&args.QueryOptions)
	var out structs.NodeListResponse
	if err := s.rpc.RPC("Node.List", &args, &out); err != nil {
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

// nodeSpecificRequest serves /v1/node/:id and its subresources.
func (s *HTTPServer) nodeSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	id, sub := splitObjectPath(r, "/v1/node/", nodeSubresources)
	if id == "" {
		return nil, codedError(http.StatusBadRequest, "Missing node ID")
	}
	switch sub {
	case "":
		return s.nodeGet(w, r, id)
	case "allocations":
		return s.nodeAllocations(w, r, id)
	case "drain":
		return s.nodeDrain(w, r, id)
	case "eligibility":
		return s.nodeEligibility(w, r, id)
	case "evaluate":
		return s.nodeEvaluate(w, r, id)
	case "purge":
		return s.nodePurge(w, r, id)
	}
	return nil, codedError(http.StatusNotImplemented, fmt.Sprintf("/v1/node/:id/%s is not supported by this server", sub))
}

func (s *HTTPServer) nodeQuery(r *http.Request, id string) (*structs.NodeSpecificRequest, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := &structs.NodeSpecificRequest{NodeID: id}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	return args, nil
}

func (s *HTTPServer) nodeGet(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	args, err := s.nodeQuery(r, id)
	if err != nil {
		return nil, err
	}
	var out structs.SingleNodeResponse
	if err := s.rpc.RPC("Node.GetNode", args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Node == nil {
		return nil, codedError(http.StatusNotFound, structs.ErrUnknownNode.Error())
	}
	return newNodeJSON(out.Node), nil
}

func (s *HTTPServer) nodeAllocations(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	args, err := s.nodeQuery(r, id)
	if err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.NodeAllocsResponse
	if err := s.rpc.RPC("Node.GetAllocs", args, &out); err != nil {
		return nil, err
	}
	allocs, next, err := applyListOptions(lo, out.Allocs, allocKey)
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return allocs, nil
}

func (s *HTTPServer) nodeDrain(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	var body api.NodeUpdateDrainRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.NodeUpdateDrainRequest{
		NodeID:        id,
		DrainStrategy: convertDrainSpec(body.DrainSpec),
		MarkEligible:  body.MarkEligible,
		Meta:          body.Meta,
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.NodeDrainUpdateResponse
	if err := s.rpc.RPC("Node.UpdateDrain", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	out.EvalIDs = nonNil(out.EvalIDs)
	return out, nil
}

func (s *HTTPServer) nodeEligibility(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	var body api.NodeUpdateEligibilityRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	switch body.Eligibility {
	case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
	default:
		return nil, codedError(http.StatusBadRequest, fmt.Sprintf("invalid scheduling eligibility %q", body.Eligibility))
	}
	args := structs.NodeUpdateEligibilityRequest{NodeID: id, Eligibility: body.Eligibility}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.NodeEligibilityUpdateResponse
	if err := s.rpc.RPC("Node.UpdateEligibility", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	out.EvalIDs = nonNil(out.EvalIDs)
	return out, nil
}

// nodeEvaluateResponse is the part of the server's answer Nomad's API
// shows for a forced node evaluation.
type nodeEvaluateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	Index           uint64
}

func (s *HTTPServer) nodeEvaluate(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	args := structs.NodeEvaluateRequest{NodeID: id}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.NodeUpdateResponse
	if err := s.rpc.RPC("Node.Evaluate", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nodeEvaluateResponse{
		NodeModifyIndex: out.NodeModifyIndex,
		EvalIDs:         nonNil(out.EvalIDs),
		EvalCreateIndex: out.EvalCreateIndex,
		Index:           out.Index,
	}, nil
}

// nodePurge serves PUT/POST /v1/node/:id/purge: the node is removed from
// the cluster (Node.Deregister) and the jobs that had work on it are
// evaluated again; the answer has the shape of a forced evaluation's.
func (s *HTTPServer) nodePurge(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	args := structs.NodeDeregisterRequest{NodeIDs: []string{id}}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.NodeUpdateResponse
	if err := s.rpc.RPC("Node.Deregister", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nodeEvaluateResponse{
		NodeModifyIndex: out.NodeModifyIndex,
		EvalIDs:         nonNil(out.EvalIDs),
		EvalCreateIndex: out.EvalCreateIndex,
		Index:           out.Index,
	}, nil
}
