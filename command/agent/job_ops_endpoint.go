package agent

import (
	"net/http"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
)

// Operations on a registered job: revert, stable, scale and version
// tags.

// jobRevert serves PUT/POST /v1/job/:id/revert.
func (s *HTTPServer) jobRevert(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	var body api.JobRevertRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.JobID == "" {
		return nil, codedError(http.StatusBadRequest, "JobID must be specified")
	}
	if body.JobID != id {
		return nil, codedError(http.StatusBadRequest, "Job ID does not match")
	}
	args := structs.JobRevertRequest{JobID: id, JobVersion: body.JobVersion, EnforcePriorVersion: body.EnforcePriorVersion}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.JobRegisterResponse
	if err := s.rpc.RPC("Job.Revert", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}

// jobStableResponse answers PUT /v1/job/:id/stable: Nomad's {"Index"},
// and JobModifyIndex, which the api package reads, the same index.
type jobStableResponse struct {
	Index          uint64
	JobModifyIndex uint64
}

// jobStable serves PUT/POST /v1/job/:id/stable.
func (s *HTTPServer) jobStable(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	var body api.JobStabilityRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.JobID == "" {
		return nil, codedError(http.StatusBadRequest, "JobID must be specified")
	}
	if body.JobID != id {
		return nil, codedError(http.StatusBadRequest, "Job ID does not match")
	}
	args := structs.JobStabilityRequest{JobID: id, JobVersion: body.JobVersion, Stable: body.Stable}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.JobStabilityResponse
	if err := s.rpc.RPC("Job.Stable", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return jobStableResponse{Index: out.Index, JobModifyIndex: out.Index}, nil
}

// jobScale serves GET /v1/job/:id/scale (the scale status) and PUT/POST
// (a scaling request).
func (s *HTTPServer) jobScale(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	switch r.Method {
	case http.MethodGet:
		return s.jobScaleStatus(w, r, id)
	case http.MethodPut, http.MethodPost:
		return s.jobScaleAction(w, r, id)
	}
	return nil, errInvalidMethod
}

func (s *HTTPServer) jobScaleStatus(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	args := structs.JobScaleStatusRequest{JobID: id}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.JobScaleStatusResponse
	if err := s.rpc.RPC("Job.ScaleStatus", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.JobScaleStatus == nil {
		return nil, codedError(http.StatusNotFound, structs.ErrUnknownJob.Error())
	}
	return out.JobScaleStatus, nil
}

func (s *HTTPServer) jobScaleAction(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	var body api.ScalingRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if job, ok := body.Target[structs.ScalingTargetJob]; ok && job != id {
		return nil, codedError(http.StatusBadRequest, "job ID in payload did not match URL")
	}
	args := structs.JobScaleRequest{
		JobID:          id,
		Target:         body.Target,
		Count:          body.Count,
		Message:        body.Message,
		Error:          body.Error,
		Meta:           body.Meta,
		PolicyOverride: body.PolicyOverride,
		JobModifyIndex: body.JobModifyIndex,
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	if ns, ok := body.Target[structs.ScalingTargetNamespace]; ok && ns != args.Namespace {
		return nil, codedError(http.StatusBadRequest, "namespace in payload did not match header")
	}
	var out structs.JobRegisterResponse
	if err := s.rpc.RPC("Job.Scale", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}

// jobTagBody is the body of PUT /v1/job/:id/versions/:name/tag in both
// shapes Nomad's clients send: {Version, Latest, Description} and the
// older {JobID, Name, Description, Version}. Version absent, or 0 with
// Latest, tags the job's current version.
type jobTagBody struct {
	JobID       string
	Name        string
	Description string
	Version     *uint64
	Latest      bool
}

// jobVersionTag serves PUT/POST (tag a version) and DELETE (remove the
// tag) on /v1/job/:id/versions/:name/tag.
func (s *HTTPServer) jobVersionTag(w http.ResponseWriter, r *http.Request, id, name string) (interface{}, error) {
	args := structs.JobApplyTagRequest{JobID: id, Name: name}
	s.parseWriteRequest(r, &args.WriteRequest)
	switch r.Method {
	case http.MethodPut, http.MethodPost:
		var body jobTagBody
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		if body.JobID != "" && body.JobID != id {
			return nil, codedError(http.StatusBadRequest, "Job ID does not match")
		}
		if body.Name != "" && body.Name != name {
			return nil, codedError(http.StatusBadRequest, "tag name does not match")
		}
		args.Tag = &structs.JobVersionTag{Name: name, Description: body.Description}
		if body.Version != nil && !(body.Latest && *body.Version == 0) {
			args.Version = *body.Version
		} else {
			args.Latest = true
		}
	case http.MethodDelete:
	default:
		return nil, errInvalidMethod
	}
	var out structs.JobTagResponse
	if err := s.rpc.RPC("Job.TagVersion", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}
