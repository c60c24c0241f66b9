package nomad

import (
	"errors"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// A registration's source is kept with the version it makes, read back
// per version, dropped with a warning past the size limit, and gone with
// the purged job.
func TestJobEndpoint_Submission(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.JobMaxSourceSize = 100 })
	get := func(id string, version uint64) (*structs.JobSubmission, error) {
		var reply structs.JobSubmissionResponse
		err := s.RPC("Job.GetJobSubmission", &structs.JobSubmissionRequest{JobID: id, Version: version}, &reply)
		return reply.Submission, err
	}
	register := func(job *structs.Job, sub *structs.JobSubmission) *structs.JobRegisterResponse {
		var reply structs.JobRegisterResponse
		must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job, Submission: sub}, &reply))
		return &reply
	}

	_, err := get("web", 0)
	must.True(t, errors.Is(err, structs.ErrJobSourceNotFound), must.Sprintf("%v", err))

	job := mock.Job(mock.JobID("web"))
	register(job.Copy(), &structs.JobSubmission{Source: `job "web" {}`, Format: "hcl2",
		VariableFlags: map[string]string{"x": "1"}, Variables: "y = 2"})
	sub, err := get("web", 0)
	must.NoError(t, err)
	must.Eq(t, `job "web" {}`, sub.Source)
	must.Eq(t, "hcl2", sub.Format)
	must.Eq(t, map[string]string{"x": "1"}, sub.VariableFlags)
	must.Eq(t, "y = 2", sub.Variables)

	// Too large: the job registers, its source is not kept.
	v1 := job.Copy()
	v1.Priority = 70
	reply := register(v1, &structs.JobSubmission{Source: strings.Repeat("x", 101), Format: "hcl2"})
	must.StrContains(t, reply.Warnings, "exceeds maximum of 100 bytes")
	_, err = get("web", 1)
	must.True(t, errors.Is(err, structs.ErrJobSourceNotFound))

	var dereg structs.JobDeregisterResponse
	must.NoError(t, s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "web", Purge: true}, &dereg))
	_, err = get("web", 0)
	must.True(t, errors.Is(err, structs.ErrJobSourceNotFound))
}
