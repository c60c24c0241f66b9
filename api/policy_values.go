package api

import "time"

// A registration makes, copies and canonicalizes policy blocks several
// times (the job's default update block, each group's copy of it, the
// group's canonical form, its reschedule, restart and migrate defaults),
// and a new value per pointer field made each of them up to ten
// allocations. The xValues types hold a policy together with the values
// its fields point to, so that each takes one. Every policy still points
// only to values of its own, as before: changing one never changes
// another.

// updateValues is an UpdateStrategy with its values.
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

// rescheduleValues is a ReschedulePolicy with its values.
type rescheduleValues struct {
	ReschedulePolicy

	attempts                  int
	interval, delay, maxDelay time.Duration
	delayFunction             string
	unlimited                 bool
}

// defaultRescheduleValues is NewDefaultReschedulePolicy with its values:
// service reschedules without limit with exponential delay from 30s to
// 1h; batch reschedules once per 24h after 5s; other types never
// reschedule.
func defaultRescheduleValues(jobType string) *rescheduleValues {
	var v *rescheduleValues
	switch jobType {
	case JobTypeService:
		v = &rescheduleValues{delay: 30 * time.Second, delayFunction: "exponential", maxDelay: time.Hour, unlimited: true}
	case JobTypeBatch:
		v = &rescheduleValues{attempts: 1, interval: 24 * time.Hour, delay: 5 * time.Second, delayFunction: "constant"}
	default:
		v = &rescheduleValues{}
	}
	v.ReschedulePolicy = ReschedulePolicy{Attempts: &v.attempts, Interval: &v.interval, Delay: &v.delay,
		DelayFunction: &v.delayFunction, MaxDelay: &v.maxDelay, Unlimited: &v.unlimited}
	return v
}

// take is Merge into v's own values.
func (v *rescheduleValues) take(o *ReschedulePolicy) {
	if o == nil {
		return
	}
	if o.Attempts != nil {
		v.attempts, v.Attempts = *o.Attempts, &v.attempts
	}
	if o.Interval != nil {
		v.interval, v.Interval = *o.Interval, &v.interval
	}
	if o.Delay != nil {
		v.delay, v.Delay = *o.Delay, &v.delay
	}
	if o.DelayFunction != nil {
		v.delayFunction, v.DelayFunction = *o.DelayFunction, &v.delayFunction
	}
	if o.MaxDelay != nil {
		v.maxDelay, v.MaxDelay = *o.MaxDelay, &v.maxDelay
	}
	if o.Unlimited != nil {
		v.unlimited, v.Unlimited = *o.Unlimited, &v.unlimited
	}
}

// restartValues is a RestartPolicy with its values.
type restartValues struct {
	RestartPolicy

	interval, delay time.Duration
	attempts        int
	mode            string
	renderTemplates bool
}

// newRestartValues is a policy of the values in v, every field set.
func newRestartValues(v restartValues) *restartValues {
	p := &v
	p.RestartPolicy = RestartPolicy{Interval: &p.interval, Attempts: &p.attempts, Delay: &p.delay,
		Mode: &p.mode, RenderTemplates: &p.renderTemplates}
	return p
}

// migrateValues is a MigrateStrategy with its values.
type migrateValues struct {
	MigrateStrategy

	maxParallel                     int
	healthCheck                     string
	minHealthyTime, healthyDeadline time.Duration
}

// defaultMigrateValues is DefaultMigrateStrategy with its values: one at
// a time, health from checks, 10s healthy, 5m deadline.
func defaultMigrateValues() *migrateValues {
	v := &migrateValues{maxParallel: 1, healthCheck: "checks", minHealthyTime: 10 * time.Second, healthyDeadline: 5 * time.Minute}
	v.MigrateStrategy = MigrateStrategy{MaxParallel: &v.maxParallel, HealthCheck: &v.healthCheck,
		MinHealthyTime: &v.minHealthyTime, HealthyDeadline: &v.healthyDeadline}
	return v
}

// take is Merge into v's own values.
func (v *migrateValues) take(o *MigrateStrategy) {
	if o == nil {
		return
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
}
