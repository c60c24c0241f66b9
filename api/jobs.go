package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// Jobs is the /v1/jobs and /v1/job/:id endpoint group.
type Jobs struct {
	client *Client
}

// Jobs returns the jobs endpoint group.
func (c *Client) Jobs() *Jobs { return &Jobs{client: c} }

// WriteRequest is embedded in write request bodies; the server reads the
// region and namespace from it when the query string does not set them.
type WriteRequest struct {
	Region    string
	Namespace string
	SecretID  string
}

// JobSubmission is the original source of a job, kept by the server for
// `job inspect` and diffs.
type JobSubmission struct {
	Source        string
	Format        string
	VariableFlags map[string]string
	Variables     string
}

// RegisterOptions tunes a registration.
type RegisterOptions struct {
	// EnforceIndex makes the write conditional: with ModifyIndex 0 the job
	// must not exist yet, otherwise its JobModifyIndex must equal
	// ModifyIndex.
	EnforceIndex      bool
	ModifyIndex       uint64
	PolicyOverride    bool
	PreserveCounts    bool
	PreserveResources bool
	// EvalPriority overrides the priority of the evaluation the
	// registration creates (1..100); 0 means the job's priority.
	EvalPriority int
	Submission   *JobSubmission
}

// JobRegisterRequest is the body of PUT /v1/jobs and PUT /v1/job/:id.
type JobRegisterRequest struct {
	Submission        *JobSubmission `json:",omitempty"`
	Job               *Job
	EnforceIndex      bool   `json:",omitempty"`
	JobModifyIndex    uint64 `json:",omitempty"`
	PolicyOverride    bool   `json:",omitempty"`
	PreserveCounts    bool   `json:",omitempty"`
	PreserveResources bool   `json:",omitempty"`
	EvalPriority      int    `json:",omitempty"`
	WriteRequest
}

// JobRegisterResponse answers a registration or a forced evaluation.
// EvalID is empty for periodic and parameterized jobs, which get no eval.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	// Warnings lists non-fatal problems with the job, newline separated.
	Warnings string
}

// JobDeregisterResponse answers DELETE /v1/job/:id.
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
}

// DeregisterOptions tunes a stop.
type DeregisterOptions struct {
	// Purge removes the job from state at once instead of leaving a
	// stopped version to be garbage collected.
	Purge bool
	// Global stops every region of a multiregion job.
	Global bool
	// EvalPriority overrides the priority of the deregistration eval.
	EvalPriority int
	// NoShutdownDelay skips the groups' shutdown_delay.
	NoShutdownDelay bool
}

// JobPlanRequest is the body of POST /v1/job/:id/plan.
type JobPlanRequest struct {
	Job            *Job
	Diff           bool
	PolicyOverride bool
	WriteRequest
}

// JobPlanResponse is the scheduler's dry run of a job: what it would place,
// stop or update, what would fail, and the diff against the stored job.
type JobPlanResponse struct {
	JobModifyIndex     uint64
	CreatedEvals       []*Evaluation
	Diff               *JobDiff
	Annotations        *PlanAnnotations
	FailedTGAllocs     map[string]*AllocationMetric
	NextPeriodicLaunch time.Time
	Warnings           string
}

// JobValidateRequest is the body of PUT /v1/validate/job.
type JobValidateRequest struct {
	Job *Job
	WriteRequest
}

// JobValidateResponse lists every problem found in a job.
type JobValidateResponse struct {
	DriverConfigValidated bool
	ValidationErrors      []string
	Error                 string
	Warnings              string
}

// JobsParseRequest is the body of POST /v1/jobs/parse.
type JobsParseRequest struct {
	// JobHCL is the job file's text.
	JobHCL string
	// Variables is read as the content of a variables file.
	Variables string
	// Canonicalize asks the server to fill defaults into the result.
	Canonicalize bool
}

// EvalOptions tunes a forced evaluation.
type EvalOptions struct {
	// ForceReschedule reschedules failed allocations at once, ignoring
	// their reschedule policy's delay.
	ForceReschedule bool
}

// JobEvaluateRequest is the body of POST /v1/job/:id/evaluate.
type JobEvaluateRequest struct {
	JobID       string
	EvalOptions EvalOptions
	WriteRequest
}

// JobVersionsResponse answers GET /v1/job/:id/versions.
type JobVersionsResponse struct {
	Versions []*Job
	Diffs    []*JobDiff
}

// JobDispatchRequest is the body of POST /v1/job/:id/dispatch.
type JobDispatchRequest struct {
	JobID            string
	Payload          []byte
	Meta             map[string]string
	IdPrefixTemplate string
	Priority         int
}

// JobDispatchResponse answers a dispatch with the child job's ID.
type JobDispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
}

// Register creates or updates a job and returns the evaluation it caused.
func (j *Jobs) Register(job *Job, q *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	return j.RegisterOpts(job, nil, q)
}

// EnforceRegister registers the job only if its current JobModifyIndex is
// modifyIndex (0: only if the job does not exist).
func (j *Jobs) EnforceRegister(job *Job, modifyIndex uint64, q *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	return j.RegisterOpts(job, &RegisterOptions{EnforceIndex: true, ModifyIndex: modifyIndex}, q)
}

// RegisterOpts registers a job with options.
func (j *Jobs) RegisterOpts(job *Job, opts *RegisterOptions, q *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	if job == nil {
		return nil, nil, errors.New("must pass a non-nil job")
	}
	req := &JobRegisterRequest{Job: job}
	if opts != nil {
		if opts.EnforceIndex {
			req.EnforceIndex = true
			req.JobModifyIndex = opts.ModifyIndex
		}
		req.PolicyOverride = opts.PolicyOverride
		req.PreserveCounts = opts.PreserveCounts
		req.PreserveResources = opts.PreserveResources
		req.EvalPriority = opts.EvalPriority
		req.Submission = opts.Submission
	}
	var resp JobRegisterResponse
	wm, err := j.client.repeatableWrite(http.MethodPut, "/v1/jobs", req, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// List returns every job visible in the namespace (blocking, prefix and
// filter via q).
func (j *Jobs) List(q *QueryOptions) ([]*JobListStub, *QueryMeta, error) {
	var resp []*JobListStub
	qm, err := j.client.query("/v1/jobs", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// PrefixList lists the jobs whose ID starts with prefix.
func (j *Jobs) PrefixList(prefix string) ([]*JobListStub, *QueryMeta, error) {
	return j.List(&QueryOptions{Prefix: prefix})
}

// Info returns the current version of a job.
func (j *Jobs) Info(jobID string, q *QueryOptions) (*Job, *QueryMeta, error) {
	var resp Job
	qm, err := j.client.query("/v1/job/"+escape(jobID), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Summary returns the job's allocation counts per group.
func (j *Jobs) Summary(jobID string, q *QueryOptions) (*JobSummary, *QueryMeta, error) {
	var resp JobSummary
	qm, err := j.client.query("/v1/job/"+escape(jobID)+"/summary", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Submission returns the source the job's version was submitted as; a
// version without one is an error ("job source not found", 404).
func (j *Jobs) Submission(jobID string, version int, q *QueryOptions) (*JobSubmission, *QueryMeta, error) {
	var sub JobSubmission
	qm, err := j.client.query("/v1/job/"+escape(jobID)+"/submission?version="+strconv.Itoa(version), &sub, q)
	if err != nil {
		return nil, nil, err
	}
	return &sub, qm, nil
}

// Versions returns the job's stored versions, newest first, and with diffs
// the difference of each version from the one before it.
func (j *Jobs) Versions(jobID string, diffs bool, q *QueryOptions) ([]*Job, []*JobDiff, *QueryMeta, error) {
	var resp JobVersionsResponse
	path := "/v1/job/" + escape(jobID) + "/versions"
	if diffs {
		path += "?diffs=true"
	}
	qm, err := j.client.query(path, &resp, q)
	if err != nil {
		return nil, nil, nil, err
	}
	return resp.Versions, resp.Diffs, qm, nil
}

// Allocations lists the job's allocations; allAllocs also returns those of
// an earlier job that had the same ID.
func (j *Jobs) Allocations(jobID string, allAllocs bool, q *QueryOptions) ([]*AllocationListStub, *QueryMeta, error) {
	var resp []*AllocationListStub
	path := "/v1/job/" + escape(jobID) + "/allocations"
	if allAllocs {
		path += "?all=true"
	}
	qm, err := j.client.query(path, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Evaluations lists the job's evaluations.
func (j *Jobs) Evaluations(jobID string, q *QueryOptions) ([]*Evaluation, *QueryMeta, error) {
	var resp []*Evaluation
	qm, err := j.client.query("/v1/job/"+escape(jobID)+"/evaluations", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Deregister stops a job (purge removes it at once) and returns the
// evaluation ID.
func (j *Jobs) Deregister(jobID string, purge bool, q *WriteOptions) (string, *WriteMeta, error) {
	return j.DeregisterOpts(jobID, &DeregisterOptions{Purge: purge}, q)
}

// DeregisterOpts stops a job with options and returns the evaluation ID.
func (j *Jobs) DeregisterOpts(jobID string, opts *DeregisterOptions, q *WriteOptions) (string, *WriteMeta, error) {
	path := "/v1/job/" + escape(jobID)
	if opts != nil {
		path += "?purge=" + strconv.FormatBool(opts.Purge) +
			"&global=" + strconv.FormatBool(opts.Global) +
			"&eval_priority=" + strconv.Itoa(opts.EvalPriority) +
			"&no_shutdown_delay=" + strconv.FormatBool(opts.NoShutdownDelay)
	}
	var resp JobDeregisterResponse
	wm, err := j.client.write(http.MethodDelete, path, nil, &resp, q)
	if err != nil {
		return "", nil, err
	}
	return resp.EvalID, wm, nil
}

// Plan asks the scheduler what registering job would do, without
// committing anything; diff adds the difference against the stored job.
func (j *Jobs) Plan(job *Job, diff bool, q *WriteOptions) (*JobPlanResponse, *WriteMeta, error) {
	return j.PlanOpts(job, &JobPlanRequest{Diff: diff}, q)
}

// PlanOpts plans with the Diff and PolicyOverride flags of opts; opts.Job
// is ignored in favour of job.
func (j *Jobs) PlanOpts(job *Job, opts *JobPlanRequest, q *WriteOptions) (*JobPlanResponse, *WriteMeta, error) {
	if job == nil {
		return nil, nil, errors.New("must pass a non-nil job")
	}
	if job.ID == nil || *job.ID == "" {
		return nil, nil, errors.New("job is missing ID")
	}
	req := &JobPlanRequest{Job: job}
	if opts != nil {
		req.Diff = opts.Diff
		req.PolicyOverride = opts.PolicyOverride
	}
	var resp JobPlanResponse
	wm, err := j.client.write(http.MethodPut, "/v1/job/"+escape(*job.ID)+"/plan", req, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// ForceEvaluate creates a new evaluation of the job and returns its ID.
func (j *Jobs) ForceEvaluate(jobID string, q *WriteOptions) (string, *WriteMeta, error) {
	return j.EvaluateWithOpts(jobID, EvalOptions{}, q)
}

// EvaluateWithOpts creates a new evaluation of the job with options.
func (j *Jobs) EvaluateWithOpts(jobID string, opts EvalOptions, q *WriteOptions) (string, *WriteMeta, error) {
	req := &JobEvaluateRequest{JobID: jobID, EvalOptions: opts}
	var resp JobRegisterResponse
	wm, err := j.client.write(http.MethodPut, "/v1/job/"+escape(jobID)+"/evaluate", req, &resp, q)
	if err != nil {
		return "", nil, err
	}
	return resp.EvalID, wm, nil
}

// Dispatch instantiates a parameterized job.
func (j *Jobs) Dispatch(req *JobDispatchRequest, q *WriteOptions) (*JobDispatchResponse, *WriteMeta, error) {
	if req == nil || req.JobID == "" {
		return nil, nil, errors.New("dispatch request must name a job")
	}
	var resp JobDispatchResponse
	wm, err := j.client.write(http.MethodPut, "/v1/job/"+escape(req.JobID)+"/dispatch", req, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// ParseHCL asks the server to parse an HCL job file into a Job, filling
// defaults when canonicalize is set.
func (j *Jobs) ParseHCL(jobHCL string, canonicalize bool) (*Job, error) {
	return j.ParseHCLOpts(&JobsParseRequest{JobHCL: jobHCL, Canonicalize: canonicalize})
}

// ParseHCLOpts parses with a full request, including variables.
func (j *Jobs) ParseHCLOpts(req *JobsParseRequest) (*Job, error) {
	var job Job
	if _, err := j.client.write(http.MethodPut, "/v1/jobs/parse", req, &job, nil); err != nil {
		return nil, err
	}
	return &job, nil
}

// Validate asks the server to validate a job without registering it.
func (j *Jobs) Validate(job *Job, q *WriteOptions) (*JobValidateResponse, *WriteMeta, error) {
	req := &JobValidateRequest{Job: job}
	if q != nil {
		req.Region = q.Region
		req.Namespace = q.Namespace
	}
	var resp JobValidateResponse
	wm, err := j.client.write(http.MethodPut, "/v1/validate/job", req, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}
