package structs

import "reflect"

// SpecChanged reports whether other differs from j in anything the user
// specifies. Fields the servers maintain (status, stability, version,
// submit time, Raft indexes) are ignored, so re-submitting an unchanged
// job does not create a new version.
func (j *Job) SpecChanged(other *Job) bool {
	if j == nil || other == nil {
		return j != other
	}
	a, b := *j, *other
	for _, c := range []*Job{&a, &b} {
		c.Status = ""
		c.StatusDescription = ""
		c.Stable = false
		c.VersionTag = nil
		c.Version = 0
		c.SubmitTime = 0
		c.CreateIndex = 0
		c.ModifyIndex = 0
		c.JobModifyIndex = 0
	}
	return !reflect.DeepEqual(&a, &b)
}
