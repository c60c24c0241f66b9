package api

// JobListStub is the compact form of a job returned by GET /v1/jobs.
type JobListStub struct {
	ID                string
	ParentID          string
	Name              string
	Namespace         string `json:",omitempty"`
	Datacenters       []string
	NodePool          string
	Type              string
	Priority          int
	Periodic          bool
	ParameterizedJob  bool
	Stop              bool
	Status            string
	StatusDescription string
	JobSummary        *JobSummary
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64
	SubmitTime        int64
	// Meta is only returned when the list is requested with meta=true.
	Meta map[string]string `json:",omitempty"`
}

// JobSummary counts a job's allocations per task group by client status.
type JobSummary struct {
	JobID     string
	Namespace string
	Summary   map[string]TaskGroupSummary
	// Children counts the child jobs of a periodic or parameterized job.
	Children    *JobChildrenSummary
	CreateIndex uint64
	ModifyIndex uint64
}

// TaskGroupSummary counts one group's allocations by state.
type TaskGroupSummary struct {
	Queued   int
	Complete int
	Failed   int
	Running  int
	Starting int
	Lost     int
	Unknown  int
}

// JobChildrenSummary counts child jobs by status.
type JobChildrenSummary struct {
	Pending int64
	Running int64
	Dead    int64
}
