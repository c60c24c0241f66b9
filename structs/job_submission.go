package structs

import "maps"

// JobSubmission is the source a job version was submitted as: the job
// file (HCL or JSON) and the variables it was parsed with, so that
// operators (and the UI) can see and resubmit what was actually written
// rather than the canonical job. It is optional: a job registered through
// the API without one has none.
type JobSubmission struct {
	// Source is the job file as submitted.
	Source string
	// Format is "hcl2" or "json" ("hcl1" is kept if a client sends it).
	Format string
	// VariableFlags are the -var flags given with the file.
	VariableFlags map[string]string
	// Variables is the content of the variable files given with it.
	Variables string

	// Namespace, JobID and Version name the job version it belongs to;
	// the servers set them.
	Namespace string
	JobID     string
	Version   uint64
}

// DefaultJobMaxSourceSize is the largest submission (source plus
// variables) a server keeps: Nomad's job_max_source_size default, "1M".
// A larger one is dropped with a warning and the job registers without
// it.
const DefaultJobMaxSourceSize = 1_000_000

// Size is what the submission weighs against the source size limit.
func (s *JobSubmission) Size() int {
	if s == nil {
		return 0
	}
	n := len(s.Source) + len(s.Variables)
	for k, v := range s.VariableFlags {
		n += len(k) + len(v)
	}
	return n
}

// Copy returns a deep copy.
func (s *JobSubmission) Copy() *JobSubmission {
	if s == nil {
		return nil
	}
	c := *s
	c.VariableFlags = maps.Clone(s.VariableFlags)
	return &c
}

// JobSubmissionRequest asks for the submission of one job version.
type JobSubmissionRequest struct {
	JobID   string
	Version uint64
	QueryOptions
}

// JobSubmissionResponse answers it; Submission is nil when there is none.
type JobSubmissionResponse struct {
	Submission *JobSubmission
	QueryMeta
}
