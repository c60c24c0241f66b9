package structs

// Requests that act on a job's stored versions: revert to one, mark one
// stable, name one with a tag.

// JobVersionTag names a job version so it can be found (and reverted to)
// by name. A name is unique among a job's versions; a tagged version is
// kept whatever the number of newer versions.
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

// RevertedCopy returns a copy of stored version j to register again as
// the job's newest version: unstable, untagged, without status. Both a
// user's revert and a failed deployment's automatic one make it.
func (j *Job) RevertedCopy() *Job {
	c := j.Copy()
	c.Stable = false
	c.VersionTag = nil
	c.Status, c.StatusDescription = "", ""
	return c
}

// JobRevertRequest registers a stored version of a job again, as its
// newest version.
type JobRevertRequest struct {
	JobID      string
	JobVersion uint64
	// EnforcePriorVersion, when set, refuses the revert unless the job's
	// current version is this one.
	EnforcePriorVersion *uint64
	WriteRequest
}

// JobStabilityResponse answers Job.Stable.
type JobStabilityResponse struct {
	WriteMeta
}

// JobApplyTagRequest tags a job version (Tag set) or removes the tag
// named Name from whichever version holds it (Tag nil). It is also the
// body of the JobVersionTag Raft entry.
type JobApplyTagRequest struct {
	JobID   string
	Name    string
	Tag     *JobVersionTag
	Version uint64
	// Latest tags the job's current version, whatever Version says; the
	// endpoint resolves it to Version before the request reaches Raft.
	Latest bool
	WriteRequest
}

// JobTagResponse answers Job.TagVersion with the tag as stored.
type JobTagResponse struct {
	Name        string
	Description string
	TaggedTime  int64
	QueryMeta
}
