package structs

import (
	"reflect"
	"slices"
)

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
		c.TaskGroups = withoutPolicyIndexes(c.TaskGroups)
	}
	return !reflect.DeepEqual(&a, &b)
}

// withoutPolicyIndexes returns groups whose scaling policies have no
// indexes (the server sets them on every version), copying only the
// groups that have a policy.
func withoutPolicyIndexes(groups []*TaskGroup) []*TaskGroup {
	var out []*TaskGroup
	for i, tg := range groups {
		if tg == nil || tg.Scaling == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(groups)
		}
		g, p := *tg, *tg.Scaling
		p.CreateIndex, p.ModifyIndex = 0, 0
		g.Scaling = &p
		out[i] = &g
	}
	if out == nil {
		return groups
	}
	return out
}
