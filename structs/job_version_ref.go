package structs

// JobVersionRef names one stored version of a job: the instance of the
// job ID (CreateIndex, which a purge and a new registration change), the
// version, and the write that made it (JobModifyIndex). A plan result
// carries it instead of the whole job when every server holds that
// version: the job is ~1.7 KB of a single-allocation plan result's
// ~4 KB, and every server already stored it when the job was registered.
type JobVersionRef struct {
	Namespace      string
	ID             string
	Version        uint64
	CreateIndex    uint64
	JobModifyIndex uint64
}

// VersionRef returns the reference to this version of the job.
func (j *Job) VersionRef() *JobVersionRef {
	return &JobVersionRef{
		Namespace:      j.Namespace,
		ID:             j.ID,
		Version:        j.Version,
		CreateIndex:    j.CreateIndex,
		JobModifyIndex: j.JobModifyIndex,
	}
}

// Names reports whether j is the version r refers to.
func (r *JobVersionRef) Names(j *Job) bool {
	return j != nil && j.Namespace == r.Namespace && j.ID == r.ID && j.Version == r.Version &&
		j.CreateIndex == r.CreateIndex && j.JobModifyIndex == r.JobModifyIndex
}

// MinVersionPlanJobRef is the first server version that applies plan
// results naming their job by JobRef. Older servers would decode such an
// entry without a job and refuse its new allocs, so the leader writes
// the reference only once every server runs at least this version.
const MinVersionPlanJobRef = "0.2.0"

// SameVersion reports whether j and o are the same stored version of
// the same job, whether or not they are the same object: a plan that
// crossed an RPC has its job and each of its allocs' jobs decoded apart.
func (j *Job) SameVersion(o *Job) bool {
	return j != nil && o != nil && j.Namespace == o.Namespace && j.ID == o.ID && j.Version == o.Version &&
		j.CreateIndex == o.CreateIndex && j.JobModifyIndex == o.JobModifyIndex
}
