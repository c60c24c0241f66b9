package agent

import (
	"net/http"
	"strings"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

func deploymentKey(d *structs.Deployment) string { return d.ID }

// deploymentsRequest serves GET /v1/deployments.
func (s *HTTPServer) deploymentsRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	var args structs.DeploymentListRequest
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.DeploymentListResponse
	if err := s.rpc.RPC("Deployment.List", &args, &out); err != nil {
		return nil, err
	}
	deployments, next, err := applyListOptions(lo, out.Deployments, deploymentKey)
	if err != nil {
		return nil, err
	}
	out.NextToken = next
	setMeta(w, &out.QueryMeta)
	return deployments, nil
}

// deploymentSpecificRequest serves /v1/deployment/:id (GET),
// /v1/deployment/allocations/:id (GET) and the writes
// /v1/deployment/{fail,pause,promote,allocation-health}/:id (PUT/POST).
func (s *HTTPServer) deploymentSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/deployment/")
	action, id, found := strings.Cut(rest, "/")
	if !found {
		action, id = "", rest
	}
	if id == "" {
		return nil, codedError(http.StatusBadRequest, "Missing deployment ID")
	}
	switch action {
	case "":
		return s.deploymentGet(w, r, id)
	case "allocations":
		return s.deploymentAllocations(w, r, id)
	case "fail":
		var body api.DeploymentFailRequest
		return s.deploymentWrite(w, r, id, "Deployment.Fail", &body, &body.DeploymentID, func() (interface{}, *structs.WriteRequest) {
			args := &structs.DeploymentFailRequest{DeploymentID: id}
			return args, &args.WriteRequest
		})
	case "pause":
		var body api.DeploymentPauseRequest
		return s.deploymentWrite(w, r, id, "Deployment.Pause", &body, &body.DeploymentID, func() (interface{}, *structs.WriteRequest) {
			args := &structs.DeploymentPauseRequest{DeploymentID: id, Pause: body.Pause}
			return args, &args.WriteRequest
		})
	case "promote":
		var body api.DeploymentPromoteRequest
		return s.deploymentWrite(w, r, id, "Deployment.Promote", &body, &body.DeploymentID, func() (interface{}, *structs.WriteRequest) {
			args := &structs.DeploymentPromoteRequest{DeploymentID: id, All: body.All, Groups: body.Groups}
			return args, &args.WriteRequest
		})
	case "allocation-health":
		var body api.DeploymentAllocHealthRequest
		return s.deploymentWrite(w, r, id, "Deployment.SetAllocHealth", &body, &body.DeploymentID, func() (interface{}, *structs.WriteRequest) {
			args := &structs.DeploymentAllocHealthRequest{DeploymentID: id,
				HealthyAllocationIDs: body.HealthyAllocationIDs, UnhealthyAllocationIDs: body.UnhealthyAllocationIDs}
			return args, &args.WriteRequest
		})
	case "unblock":
		return nil, codedError(http.StatusNotImplemented, "unblocking a multiregion deployment is not supported by this server")
	}
	return nil, codedError(http.StatusNotFound, "Invalid URL path")
}

func (s *HTTPServer) deploymentGet(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.DeploymentSpecificRequest{DeploymentID: id}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleDeploymentResponse
	if err := s.rpc.RPC("Deployment.GetDeployment", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Deployment == nil {
		return nil, codedError(http.StatusNotFound, structs.ErrUnknownDeployment.Error())
	}
	return out.Deployment, nil
}

func (s *HTTPServer) deploymentAllocations(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.DeploymentSpecificRequest{DeploymentID: id}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.AllocListResponse
	if err := s.rpc.RPC("Deployment.Allocations", &args, &out); err != nil {
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

// deploymentWrite decodes a write's body into body (whose DeploymentID,
// bodyID, must be empty or the path's), builds the RPC request and its
// write options with build and answers the server's DeploymentUpdateResponse. A body is
// optional: Nomad's clients send one, scripts often do not.
func (s *HTTPServer) deploymentWrite(w http.ResponseWriter, r *http.Request, id, method string,
	body interface{}, bodyID *string, build func() (interface{}, *structs.WriteRequest)) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	if r.ContentLength != 0 {
		if err := decodeBody(r, body); err != nil {
			return nil, err
		}
		if *bodyID != "" && *bodyID != id {
			return nil, codedError(http.StatusBadRequest, "Deployment ID does not match")
		}
	}
	args, wr := build()
	s.parseWriteRequest(r, wr)
	var out structs.DeploymentUpdateResponse
	if err := s.rpc.RPC(method, args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}
