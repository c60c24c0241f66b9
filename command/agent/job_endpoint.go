package agent

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/jobspec"
	"github.com/opennomad/nomad/structs"
)

// jobSubresources are the paths under /v1/job/:id this agent serves.
var jobSubresources = map[string]bool{
	"plan": true, "evaluate": true, "allocations": true, "evaluations": true,
	"summary": true, "versions": true, "deployments": true, "deployment": true,
	"periodic/force": true, "dispatch": true, "revert": true, "stable": true, "scale": true,
	"submission": true, "services": true, "actions": true, "action": true,
}

// jobUnsupported are Nomad's other paths under /v1/job/:id; they answer
// 501 rather than being mistaken for part of a job ID.
var jobUnsupported = map[string]bool{
	"tag": true,
}

// jobsRequest serves /v1/jobs: GET lists, PUT/POST registers.
func (s *HTTPServer) jobsRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	switch r.Method {
	case http.MethodGet:
		return s.jobList(w, r)
	case http.MethodPut, http.MethodPost:
		return s.jobRegister(w, r, "")
	}
	return nil, errInvalidMethod
}

func (s *HTTPServer) jobList(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	args := structs.JobListRequest{}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	meta, err := boolParam(r, "meta")
	if err != nil {
		return nil, err
	}
	if meta {
		args.Fields = &structs.JobStubFields{Meta: true}
	}
	lo := takePagingOptions(&args.QueryOptions)
	var out structs.JobListResponse
	if err := s.rpc.RPC("Job.List", &args, &out); err != nil {
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

// jobRegister serves PUT /v1/jobs and PUT /v1/job/:id (pathID set).
func (s *HTTPServer) jobRegister(w http.ResponseWriter, r *http.Request, pathID string) (interface{}, error) {
	var body api.JobRegisterRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Job == nil {
		return nil, codedError(http.StatusBadRequest, "Job must be specified")
	}
	if pathID != "" && (body.Job.ID == nil || *body.Job.ID != pathID) {
		return nil, codedError(http.StatusBadRequest, "Job ID does not match name")
	}
	if msg := structs.PriorityProblem("eval priority", body.EvalPriority); msg != "" {
		return nil, codedError(http.StatusBadRequest, msg)
	}
	args := structs.JobRegisterRequest{
		EnforceIndex:   body.EnforceIndex,
		JobModifyIndex: body.JobModifyIndex,
		PolicyOverride: body.PolicyOverride,
		PreserveCounts: body.PreserveCounts,
		EvalPriority:   body.EvalPriority,

		PreserveResources: body.PreserveResources,
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	job, warnings, err := s.jobFromBody(r, body.Job, &args.WriteRequest)
	if err != nil {
		return nil, err
	}
	args.Job = job
	if sub := body.Submission; sub != nil {
		args.Submission = &structs.JobSubmission{Source: sub.Source, Format: sub.Format,
			VariableFlags: sub.VariableFlags, Variables: sub.Variables}
	}
	var out structs.JobRegisterResponse
	if err := s.rpc.RPC("Job.Register", &args, &out); err != nil {
		return nil, err
	}
	out.Warnings = joinWarnings(out.Warnings, warnings)
	setIndex(w, out.Index)
	return out, nil
}

// jobFromBody fills a submitted job's namespace from the request when the
// job names none, settles its region (jobRegion), and converts it (the
// api package's defaults are applied on the way, as Nomad's agent does).
// The write request then targets the job's namespace and region. A job
// with null list entries or driver configs nested too deep is refused
// here with 400, before anything reads it. Canonicalizing and validating the job is the
// server's (endpoints.PrepareJob), once, for every caller: its
// problems come back as a 400 listing each of them.
func (s *HTTPServer) jobFromBody(r *http.Request, in *api.Job, wr *structs.WriteRequest) (*structs.Job, []string, error) {
	if err := nullEntries(in); err != nil {
		return nil, nil, err
	}
	if err := deepConfigs(in); err != nil {
		return nil, nil, err
	}
	if in.Namespace == nil || *in.Namespace == "" {
		in.Namespace = new(namespace(r))
	}
	s.applyJobRegion(r, in, wr)
	job, warnings := convertJob(in)
	wr.Namespace = job.Namespace
	return job, warnings, nil
}

func joinWarnings(server string, local []string) string {
	all := local
	if server != "" {
		all = append([]string{server}, local...)
	}
	return strings.Join(all, "\n")
}

// maxParseRequestBody bounds a /v1/jobs/parse request: a job file and a
// variables file at jobspec's size limit, with room for JSON escaping.
const maxParseRequestBody = 4 * jobspec.MaxSourceBytes

// jobsParseRequest serves POST /v1/jobs/parse: HCL to job JSON, without
// file system access. Anyone who can reach the API can send a job file,
// so the parse stays within jobspec's limits: an input over one is
// refused with 400, or 413 for size, naming the limit.
func (s *HTTPServer) jobsParseRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxParseRequestBody)
	}
	var body api.JobsParseRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if strings.TrimSpace(body.JobHCL) == "" {
		return nil, codedError(http.StatusBadRequest, "Job spec is empty")
	}
	// The request's context stops the evaluation if the client leaves.
	opts := jobspec.Options{AllowFS: false, Context: r.Context()}
	if body.Variables != "" {
		opts.VarFiles = []jobspec.VarFile{{Name: "variables.hcl", Content: []byte(body.Variables)}}
	}
	res, err := jobspec.Parse("input.hcl", []byte(body.JobHCL), opts)
	if err != nil {
		var limit *jobspec.LimitError
		if errors.As(err, &limit) {
			return nil, err
		}
		return nil, codedError(http.StatusBadRequest, err.Error())
	}
	if body.Canonicalize {
		res.Job.Canonicalize()
	}
	return res.Job, nil
}

// validateJobRequest serves PUT /v1/validate/job: the same checks as a
// registration, reported instead of enforced.
func (s *HTTPServer) validateJobRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	var body api.JobValidateRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Job == nil {
		return nil, codedError(http.StatusBadRequest, "Job must be specified")
	}
	// Null entries make the request malformed, not the job invalid: they
	// are refused with a 400 here too, not reported as validation results.
	if err := nullEntries(body.Job); err != nil {
		return nil, err
	}
	if err := deepConfigs(body.Job); err != nil {
		return nil, err
	}
	args := structs.JobValidateRequest{}
	s.parseWriteRequest(r, &args.WriteRequest)
	job, warnings, err := s.jobFromBody(r, body.Job, &args.WriteRequest)
	if err != nil {
		return nil, err
	}
	args.Job = job
	var out structs.JobValidateResponse
	if err := s.rpc.RPC("Job.Validate", &args, &out); err != nil {
		return nil, err
	}
	out.ValidationErrors = nonNil(out.ValidationErrors)
	out.Warnings = joinWarnings(out.Warnings, warnings)
	return out, nil
}

// jobSpecificRequest serves /v1/job/:id and its subresources.
func (s *HTTPServer) jobSpecificRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if id, name, ok := splitVersionTagPath(r, "/v1/job/"); ok {
		return s.jobVersionTag(w, r, id, name)
	}
	id, sub := splitObjectPath(r, "/v1/job/", jobSubresources, jobUnsupported)
	if id == "" {
		return nil, codedError(http.StatusBadRequest, "Missing job ID")
	}
	if jobUnsupported[sub] {
		return nil, codedError(http.StatusNotImplemented, fmt.Sprintf("/v1/job/:id/%s is not supported by this server", sub))
	}
	switch sub {
	case "":
		switch r.Method {
		case http.MethodGet:
			return s.jobGet(w, r, id)
		case http.MethodPut, http.MethodPost:
			return s.jobRegister(w, r, id)
		case http.MethodDelete:
			return s.jobDeregister(w, r, id)
		}
		return nil, errInvalidMethod
	case "plan":
		return s.jobPlan(w, r, id)
	case "evaluate":
		return s.jobEvaluate(w, r, id)
	case "allocations":
		return s.jobAllocations(w, r, id)
	case "evaluations":
		return s.jobEvaluations(w, r, id)
	case "summary":
		return s.jobSummary(w, r, id)
	case "versions":
		return s.jobVersions(w, r, id)
	case "submission":
		return s.jobSubmission(w, r, id)
	case "deployments":
		return s.jobDeployments(w, r, id)
	case "deployment":
		return s.jobLatestDeployment(w, r, id)
	case "periodic/force":
		return s.jobPeriodicForce(w, r, id)
	case "dispatch":
		return s.jobDispatch(w, r, id)
	case "revert":
		return s.jobRevert(w, r, id)
	case "stable":
		return s.jobStable(w, r, id)
	case "scale":
		return s.jobScale(w, r, id)
	case "services":
		return s.jobServices(w, r, id)
	case "actions":
		return s.jobActions(w, r, id)
	case "action":
		return s.jobAction(w, r, id)
	}
	return nil, codedError(http.StatusNotFound, "Invalid URL path")
}

// jobQuery builds a read of one job.
func (s *HTTPServer) jobQuery(r *http.Request, id string) (*structs.JobSpecificRequest, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := &structs.JobSpecificRequest{JobID: id}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	return args, nil
}

func (s *HTTPServer) jobGet(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	job, err := s.readJob(w, r, id)
	if err != nil {
		return nil, err
	}
	return job, nil
}

// readJob reads one job for a GET route, setting the query meta; an
// unknown job is a 404.
func (s *HTTPServer) readJob(w http.ResponseWriter, r *http.Request, id string) (*structs.Job, error) {
	args, err := s.jobQuery(r, id)
	if err != nil {
		return nil, err
	}
	var out structs.SingleJobResponse
	if err := s.rpc.RPC("Job.GetJob", args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Job == nil {
		return nil, codedError(http.StatusNotFound, structs.ErrUnknownJob.Error())
	}
	return out.Job, nil
}

func (s *HTTPServer) jobDeregister(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	args := structs.JobDeregisterRequest{JobID: id}
	var err error
	if args.Purge, err = boolParam(r, "purge"); err != nil {
		return nil, err
	}
	if args.Global, err = boolParam(r, "global"); err != nil {
		return nil, err
	}
	if args.NoShutdownDelay, err = boolParam(r, "no_shutdown_delay"); err != nil {
		return nil, err
	}
	if args.EvalPriority, err = intParam(r, "eval_priority"); err != nil {
		return nil, err
	}
	if msg := structs.PriorityProblem("eval priority", args.EvalPriority); msg != "" {
		return nil, codedError(http.StatusBadRequest, msg)
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.JobDeregisterResponse
	if err := s.rpc.RPC("Job.Deregister", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}

func (s *HTTPServer) jobPlan(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	var body api.JobPlanRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Job == nil {
		return nil, codedError(http.StatusBadRequest, "Job must be specified")
	}
	if body.Job.ID == nil || *body.Job.ID != id {
		return nil, codedError(http.StatusBadRequest, "Job ID does not match")
	}
	args := structs.JobPlanRequest{Diff: body.Diff, PolicyOverride: body.PolicyOverride}
	s.parseWriteRequest(r, &args.WriteRequest)
	job, warnings, err := s.jobFromBody(r, body.Job, &args.WriteRequest)
	if err != nil {
		return nil, err
	}
	args.Job = job
	var out structs.JobPlanResponse
	if err := s.rpc.RPC("Job.Plan", &args, &out); err != nil {
		return nil, err
	}
	out.Warnings = joinWarnings(out.Warnings, warnings)
	if out.CreatedEvals == nil {
		out.CreatedEvals = []*structs.Evaluation{}
	}
	setIndex(w, out.Index)
	return out, nil
}

func (s *HTTPServer) jobEvaluate(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodPut, http.MethodPost); err != nil {
		return nil, err
	}
	args := structs.JobEvaluateRequest{JobID: id}
	// The body is optional (older clients send none).
	if r.ContentLength != 0 {
		var body api.JobEvaluateRequest
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		if body.JobID != "" && body.JobID != id {
			return nil, codedError(http.StatusBadRequest, "Job ID does not match")
		}
		args.EvalOptions.ForceReschedule = body.EvalOptions.ForceReschedule
	}
	s.parseWriteRequest(r, &args.WriteRequest)
	var out structs.JobRegisterResponse
	if err := s.rpc.RPC("Job.Evaluate", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out, nil
}

func (s *HTTPServer) jobAllocations(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	args, err := s.jobQuery(r, id)
	if err != nil {
		return nil, err
	}
	if args.All, err = boolParam(r, "all"); err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.JobAllocationsResponse
	if err := s.rpc.RPC("Job.Allocations", args, &out); err != nil {
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

func (s *HTTPServer) jobEvaluations(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	args, err := s.jobQuery(r, id)
	if err != nil {
		return nil, err
	}
	lo, err := takeListOptions(&args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.JobEvaluationsResponse
	if err := s.rpc.RPC("Job.Evaluations", args, &out); err != nil {
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

func (s *HTTPServer) jobSummary(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	args, err := s.jobQuery(r, id)
	if err != nil {
		return nil, err
	}
	var out structs.JobSummaryResponse
	if err := s.rpc.RPC("Job.Summary", args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.JobSummary == nil {
		return nil, codedError(http.StatusNotFound, structs.ErrUnknownJob.Error())
	}
	return out.JobSummary, nil
}

// jobSubmission serves GET /v1/job/:id/submission?version=N: the source
// that version was submitted as (404 "job source not found" when none is
// kept).
func (s *HTTPServer) jobSubmission(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	raw := r.URL.Query().Get("version")
	version, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return nil, codedError(http.StatusBadRequest, fmt.Sprintf("Failed to parse value of %q (%v) as a version", "version", raw))
	}
	args := structs.JobSubmissionRequest{JobID: id, Version: version}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.JobSubmissionResponse
	if err := s.rpc.RPC("Job.GetJobSubmission", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	sub := out.Submission
	return api.JobSubmission{Source: sub.Source, Format: sub.Format, VariableFlags: sub.VariableFlags, Variables: sub.Variables}, nil
}

func (s *HTTPServer) jobVersions(w http.ResponseWriter, r *http.Request, id string) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	args := structs.JobVersionsRequest{JobID: id}
	if err := s.parseQueryOptions(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var err error
	if args.Diffs, err = boolParam(r, "diffs"); err != nil {
		return nil, err
	}
	args.DiffTagName = r.URL.Query().Get("diff_tag")
	if v := r.URL.Query().Get("diff_version"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, codedError(http.StatusBadRequest, fmt.Sprintf("Failed to parse value of %q (%v) as a version", "diff_version", v))
		}
		args.DiffVersion = &n
	}
	var out structs.JobVersionsResponse
	if err := s.rpc.RPC("Job.GetJobVersions", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if len(out.Versions) == 0 {
		return nil, codedError(http.StatusNotFound, "job versions not found")
	}
	return out, nil
}
