package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Acting on a job's stored versions: revert to one, mark one stable, tag
// one by name, compare them.

// JobVersionTag names a job version.
type JobVersionTag struct {
	Name        string
	Description string
	// TaggedTime is when the tag was applied, in Unix nanoseconds.
	TaggedTime int64
}

// Copy returns a copy of the tag; nil stays nil.
func (t *JobVersionTag) Copy() *JobVersionTag {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// JobRevertRequest is the body of PUT /v1/job/:id/revert.
type JobRevertRequest struct {
	JobID      string
	JobVersion uint64
	// EnforcePriorVersion, when set, refuses the revert unless the job is
	// at this version.
	EnforcePriorVersion *uint64
	WriteRequest
}

// JobStabilityRequest is the body of PUT /v1/job/:id/stable.
type JobStabilityRequest struct {
	JobID      string
	JobVersion uint64
	Stable     bool
	WriteRequest
}

// JobStabilityResponse answers PUT /v1/job/:id/stable.
type JobStabilityResponse struct {
	JobModifyIndex uint64
}

// TagVersionRequest is the body of PUT /v1/job/:id/versions/:name/tag.
type TagVersionRequest struct {
	// Version is the version to tag; with Latest set and Version 0, the
	// job's current version is tagged.
	Version     uint64
	Latest      bool
	Description string
	WriteRequest
}

// VersionsOptions tunes a versions listing: Diffs adds the difference of
// each version from the one before it, or from the version named by
// DiffTag or DiffVersion.
type VersionsOptions struct {
	Diffs       bool
	DiffTag     string
	DiffVersion *uint64
}

// Revert registers a stored version of the job again as its newest
// version. With enforcePriorVersion set, the job must be at that version.
// The two tokens are accepted for compatibility and ignored.
func (j *Jobs) Revert(jobID string, version uint64, enforcePriorVersion *uint64, q *WriteOptions, _ string, _ string) (*JobRegisterResponse, *WriteMeta, error) {
	req := &JobRevertRequest{JobID: jobID, JobVersion: version, EnforcePriorVersion: enforcePriorVersion}
	var resp JobRegisterResponse
	wm, err := j.client.write(http.MethodPut, "/v1/job/"+escape(jobID)+"/revert", req, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// Stable marks a version of the job stable or not.
func (j *Jobs) Stable(jobID string, version uint64, stable bool, q *WriteOptions) (*JobStabilityResponse, *WriteMeta, error) {
	req := &JobStabilityRequest{JobID: jobID, JobVersion: version, Stable: stable}
	var resp JobStabilityResponse
	wm, err := j.client.write(http.MethodPut, "/v1/job/"+escape(jobID)+"/stable", req, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// TagVersionOpts tags a version of the job with name.
func (j *Jobs) TagVersionOpts(jobID, name string, req *TagVersionRequest, q *WriteOptions) (*WriteMeta, error) {
	return j.client.write(http.MethodPut, tagPath(jobID, name), req, nil, q)
}

// TagVersion tags a version of the job with name and description.
func (j *Jobs) TagVersion(jobID string, version uint64, name string, description string, q *WriteOptions) (*WriteMeta, error) {
	return j.TagVersionOpts(jobID, name, &TagVersionRequest{Version: version, Description: description}, q)
}

// UntagVersion removes the tag name from whichever version of the job
// holds it.
func (j *Jobs) UntagVersion(jobID string, name string, q *WriteOptions) (*WriteMeta, error) {
	return j.client.write(http.MethodDelete, tagPath(jobID, name), nil, nil, q)
}

func tagPath(jobID, name string) string {
	return "/v1/job/" + escape(jobID) + "/versions/" + escape(name) + "/tag"
}

// VersionByTag returns the version of the job tagged name.
func (j *Jobs) VersionByTag(jobID, tag string, q *QueryOptions) (*Job, *QueryMeta, error) {
	versions, _, qm, err := j.Versions(jobID, false, q)
	if err != nil {
		return nil, nil, err
	}
	for _, v := range versions {
		if v.VersionTag != nil && v.VersionTag.Name == tag {
			return v, qm, nil
		}
	}
	return nil, nil, fmt.Errorf("version tag %s not found for job %s", tag, jobID)
}

// VersionsOpts lists the job's stored versions, newest first, as opts
// says.
func (j *Jobs) VersionsOpts(jobID string, opts *VersionsOptions, q *QueryOptions) ([]*Job, []*JobDiff, *QueryMeta, error) {
	qp := url.Values{}
	if opts != nil {
		qp.Set("diffs", strconv.FormatBool(opts.Diffs))
		if opts.DiffTag != "" {
			qp.Set("diff_tag", opts.DiffTag)
		}
		if opts.DiffVersion != nil {
			qp.Set("diff_version", strconv.FormatUint(*opts.DiffVersion, 10))
		}
	}
	var resp JobVersionsResponse
	qm, err := j.client.query("/v1/job/"+escape(jobID)+"/versions?"+qp.Encode(), &resp, q)
	if err != nil {
		return nil, nil, nil, err
	}
	return resp.Versions, resp.Diffs, qm, nil
}
