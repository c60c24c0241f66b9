package agent

import (
	"net/http"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// Job subresources about a job's roll-outs and its launched children.

// jobDeployments serves GET /v1/job/:id/deployments (?all=true).
func (s *HTTPServer) jobDeployments(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	args, err := s.jobQuery(r, id)
	if err != nil {
		return nil, err
	}
	if args.All, err = boolParam(r, "all"); err != nil {
		return nil, err
	}
	var out structs.DeploymentListResponse
	if err := s.rpc.RPC("Job.Deployments", args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return nonNil(out.Deployments), nil
}

// jobLatestDeployment serves GET /v1/job/:id/deployment: the newest
// deployment, null when the job has none.
func (s *HTTPServer) jobLatestDeployment(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	args, err := s.jobQuery(r, id)
	if err != nil {
		return nil, err
	}
	var out structs.SingleDeploymentResponse
	if err := s.rpc.RPC("Job.LatestDeployment", args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Deployment == nil {
		return jsonNull{}, nil
	}
	return out.Deployment, nil
}

// jsonNull encodes as JSON null, for answers that are "nothing" rather
// than an error.
type jsonNull struct{}

// MarshalJSON renders null.
func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// jobPeriodicForce serves PUT/POST /v1/job/:id/periodic/force.
func (s *HTTPServer) jobPeriodicForce(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	args := structs.PeriodicForceRequest{JobID: id}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.PeriodicForceResponse
	if err := s.rpc.RPC("Periodic.Force", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}

// jobDispatch serves PUT/POST /v1/job/:id/dispatch: body
// {"Payload" (base64), "Meta", "IdPrefixTemplate", "Priority"}.
func (s *HTTPServer) jobDispatch(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	var body api.JobDispatchRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.JobID != "" && body.JobID != id {
		return nil, codedError(http.StatusBadRequest, "Job ID does not match")
	}
	args := structs.JobDispatchRequest{
		JobID: id, Payload: body.Payload, Meta: body.Meta,
		IdPrefixTemplate: body.IdPrefixTemplate, Priority: body.Priority,
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.JobDispatchResponse
	if err := s.rpc.RPC("Job.Dispatch", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}
