package structs

import "maps"

// JobSummary counts a job's allocations by client state per task group,
// kept current by the state store on every alloc and eval write.
type JobSummary struct {
	JobID     string
	Namespace string
	Summary   map[string]TaskGroupSummary
	Children  *JobChildrenSummary

	CreateIndex uint64
	ModifyIndex uint64
}

// TaskGroupSummary counts one group's allocations.
type TaskGroupSummary struct {
	Queued   int
	Complete int
	Failed   int
	Running  int
	Starting int
	Lost     int
	Unknown  int
}

// JobChildrenSummary counts the children of a periodic or parameterized job.
type JobChildrenSummary struct {
	Pending int64
	Running int64
	Dead    int64
}

// Copy returns a deep copy.
func (s *JobSummary) Copy() *JobSummary {
	if s == nil {
		return nil
	}
	n := *s
	n.Summary = maps.Clone(s.Summary)
	if s.Children != nil {
		c := *s.Children
		n.Children = &c
	}
	return &n
}
