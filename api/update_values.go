package api

import "time"

// A registration makes, copies and canonicalizes update blocks several
// times (the job's default, each group's copy of it, the group's
// canonical form), and a new value per pointer field made each of them
// ten allocations. updateValues holds a strategy together with the
// values its fields point to, so that each takes one. Every strategy
// still points only to values of its own, as before: changing one never
// changes another.
type updateValues struct {
	UpdateStrategy

	stagger, minHealthyTime, healthyDeadline, progressDeadline time.Duration
	maxParallel, canary                                        int
	healthCheck                                                string
	autoRevert, autoPromote                                    bool
}

// defaultUpdateValues is DefaultUpdateStrategy with its values.
func defaultUpdateValues() *updateValues {
	v := &updateValues{
		stagger:          30 * time.Second,
		maxParallel:      1,
		healthCheck:      "checks",
		minHealthyTime:   10 * time.Second,
		healthyDeadline:  5 * time.Minute,
		progressDeadline: 10 * time.Minute,
	}
	v.UpdateStrategy = UpdateStrategy{
		Stagger:          &v.stagger,
		MaxParallel:      &v.maxParallel,
		HealthCheck:      &v.healthCheck,
		MinHealthyTime:   &v.minHealthyTime,
		HealthyDeadline:  &v.healthyDeadline,
		ProgressDeadline: &v.progressDeadline,
		Canary:           &v.canary,
		AutoRevert:       &v.autoRevert,
		AutoPromote:      &v.autoPromote,
	}
	return v
}

// take is Merge into v's own values: every field set in o is copied, and
// v's field points to the copy.
func (v *updateValues) take(o *UpdateStrategy) {
	if o == nil {
		return
	}
	if o.Stagger != nil {
		v.stagger, v.Stagger = *o.Stagger, &v.stagger
	}
	if o.MaxParallel != nil {
		v.maxParallel, v.MaxParallel = *o.MaxParallel, &v.maxParallel
	}
	if o.HealthCheck != nil {
		v.healthCheck, v.HealthCheck = *o.HealthCheck, &v.healthCheck
	}
	if o.MinHealthyTime != nil {
		v.minHealthyTime, v.MinHealthyTime = *o.MinHealthyTime, &v.minHealthyTime
	}
	if o.HealthyDeadline != nil {
		v.healthyDeadline, v.HealthyDeadline = *o.HealthyDeadline, &v.healthyDeadline
	}
	if o.ProgressDeadline != nil {
		v.progressDeadline, v.ProgressDeadline = *o.ProgressDeadline, &v.progressDeadline
	}
	if o.Canary != nil {
		v.canary, v.Canary = *o.Canary, &v.canary
	}
	if o.AutoRevert != nil {
		v.autoRevert, v.AutoRevert = *o.AutoRevert, &v.autoRevert
	}
	if o.AutoPromote != nil {
		v.autoPromote, v.AutoPromote = *o.AutoPromote, &v.autoPromote
	}
}
