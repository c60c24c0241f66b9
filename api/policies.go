package api

import "time"

// Restart modes.
const (
	RestartPolicyModeDelay = "delay"
	RestartPolicyModeFail  = "fail"
)

// UpdateStrategy configures rolling updates (the `update` block).
type UpdateStrategy struct {
	Stagger          *time.Duration `hcl:"stagger,optional"`
	MaxParallel      *int           `hcl:"max_parallel,optional"`
	HealthCheck      *string        `hcl:"health_check,optional"`
	MinHealthyTime   *time.Duration `hcl:"min_healthy_time,optional"`
	HealthyDeadline  *time.Duration `hcl:"healthy_deadline,optional"`
	ProgressDeadline *time.Duration `hcl:"progress_deadline,optional"`
	Canary           *int           `hcl:"canary,optional"`
	AutoRevert       *bool          `hcl:"auto_revert,optional"`
	AutoPromote      *bool          `hcl:"auto_promote,optional"`
}

// DefaultUpdateStrategy is the update block of a service or system job that
// has none: one at a time, health from checks, 10s healthy, 5m healthy
// deadline, 10m progress deadline, no canaries, no auto revert/promote.
func DefaultUpdateStrategy() *UpdateStrategy {
	return &defaultUpdateValues().UpdateStrategy
}

// Copy returns a deep copy.
func (u *UpdateStrategy) Copy() *UpdateStrategy {
	if u == nil {
		return nil
	}
	n := &updateValues{}
	n.take(u)
	return &n.UpdateStrategy
}

// Merge overwrites u's fields with every field set in o.
func (u *UpdateStrategy) Merge(o *UpdateStrategy) {
	if o == nil {
		return
	}
	mergePtr(&u.Stagger, o.Stagger)
	mergePtr(&u.MaxParallel, o.MaxParallel)
	mergePtr(&u.HealthCheck, o.HealthCheck)
	mergePtr(&u.MinHealthyTime, o.MinHealthyTime)
	mergePtr(&u.HealthyDeadline, o.HealthyDeadline)
	mergePtr(&u.ProgressDeadline, o.ProgressDeadline)
	mergePtr(&u.Canary, o.Canary)
	mergePtr(&u.AutoRevert, o.AutoRevert)
	mergePtr(&u.AutoPromote, o.AutoPromote)
}

// Canonicalize fills unset fields from DefaultUpdateStrategy.
func (u *UpdateStrategy) Canonicalize() {
	d := defaultUpdateValues()
	d.take(u)
	*u = d.UpdateStrategy
}

// Empty reports whether the strategy sets nothing but zero values; a job
// level update block that is empty is not inherited by its groups.
func (u *UpdateStrategy) Empty() bool {
	if u == nil {
		return true
	}
	return isZeroPtr(u.Stagger) && isZeroPtr(u.MaxParallel) && isZeroPtr(u.HealthCheck) &&
		isZeroPtr(u.MinHealthyTime) && isZeroPtr(u.HealthyDeadline) && isZeroPtr(u.ProgressDeadline) &&
		isZeroPtr(u.AutoRevert) && isZeroPtr(u.AutoPromote) && isZeroPtr(u.Canary)
}

// MigrateStrategy configures how a group's allocations move off a draining
// node (the `migrate` block).
type MigrateStrategy struct {
	MaxParallel     *int           `hcl:"max_parallel,optional"`
	HealthCheck     *string        `hcl:"health_check,optional"`
	MinHealthyTime  *time.Duration `hcl:"min_healthy_time,optional"`
	HealthyDeadline *time.Duration `hcl:"healthy_deadline,optional"`
}

// DefaultMigrateStrategy is one at a time, health from checks, 10s healthy,
// 5m deadline.
func DefaultMigrateStrategy() *MigrateStrategy {
	return &defaultMigrateValues().MigrateStrategy
}

// Copy returns a copy.
func (m *MigrateStrategy) Copy() *MigrateStrategy {
	if m == nil {
		return nil
	}
	n := &migrateValues{}
	n.take(m)
	return &n.MigrateStrategy
}

// Merge overwrites m's fields with every field set in o.
func (m *MigrateStrategy) Merge(o *MigrateStrategy) {
	if o == nil {
		return
	}
	mergePtr(&m.MaxParallel, o.MaxParallel)
	mergePtr(&m.HealthCheck, o.HealthCheck)
	mergePtr(&m.MinHealthyTime, o.MinHealthyTime)
	mergePtr(&m.HealthyDeadline, o.HealthyDeadline)
}

// Canonicalize fills unset fields from DefaultMigrateStrategy.
func (m *MigrateStrategy) Canonicalize() {
	if m == nil {
		return
	}
	d := defaultMigrateValues()
	d.take(m)
	*m = d.MigrateStrategy
}

// RestartPolicy says how a client restarts a failed task in place (the
// `restart` block).
type RestartPolicy struct {
	Interval        *time.Duration `hcl:"interval,optional"`
	Attempts        *int           `hcl:"attempts,optional"`
	Delay           *time.Duration `hcl:"delay,optional"`
	Mode            *string        `hcl:"mode,optional"`
	RenderTemplates *bool          `hcl:"render_templates,optional"`
}

// Merge overwrites r's fields with every field set in o.
func (r *RestartPolicy) Merge(o *RestartPolicy) {
	if o == nil {
		return
	}
	mergePtr(&r.Interval, o.Interval)
	mergePtr(&r.Attempts, o.Attempts)
	mergePtr(&r.Delay, o.Delay)
	mergePtr(&r.Mode, o.Mode)
	mergePtr(&r.RenderTemplates, o.RenderTemplates)
}

// DefaultServiceJobRestartPolicy is the restart policy of service and
// system groups: 2 attempts in 30m, 15s delay, then fail.
func DefaultServiceJobRestartPolicy() *RestartPolicy {
	return &newRestartValues(restartValues{delay: 15 * time.Second, attempts: 2, interval: 30 * time.Minute,
		mode: RestartPolicyModeFail}).RestartPolicy
}

// DefaultBatchJobRestartPolicy is the restart policy of batch and sysbatch
// groups: 3 attempts in 24h, 15s delay, then fail.
func DefaultBatchJobRestartPolicy() *RestartPolicy {
	return &newRestartValues(restartValues{delay: 15 * time.Second, attempts: 3, interval: 24 * time.Hour,
		mode: RestartPolicyModeFail}).RestartPolicy
}

// ReschedulePolicy says how the servers replace a failed allocation on
// another node (the `reschedule` block).
type ReschedulePolicy struct {
	Attempts      *int           `hcl:"attempts,optional"`
	Interval      *time.Duration `hcl:"interval,optional"`
	Delay         *time.Duration `hcl:"delay,optional"`
	DelayFunction *string        `hcl:"delay_function,optional"`
	MaxDelay      *time.Duration `hcl:"max_delay,optional"`
	Unlimited     *bool          `hcl:"unlimited,optional"`
}

// NewDefaultReschedulePolicy returns the reschedule defaults of a job type:
// service reschedules without limit with exponential delay from 30s to 1h;
// batch reschedules once per 24h after 5s; other types never reschedule.
func NewDefaultReschedulePolicy(jobType string) *ReschedulePolicy {
	return &defaultRescheduleValues(jobType).ReschedulePolicy
}

// Copy returns a copy.
func (r *ReschedulePolicy) Copy() *ReschedulePolicy {
	if r == nil {
		return nil
	}
	n := *r
	return &n
}

// Merge overwrites r's fields with every field set in o.
func (r *ReschedulePolicy) Merge(o *ReschedulePolicy) {
	if o == nil {
		return
	}
	mergePtr(&r.Attempts, o.Attempts)
	mergePtr(&r.Interval, o.Interval)
	mergePtr(&r.Delay, o.Delay)
	mergePtr(&r.DelayFunction, o.DelayFunction)
	mergePtr(&r.MaxDelay, o.MaxDelay)
	mergePtr(&r.Unlimited, o.Unlimited)
}

// Canonicalize fills unset fields from the job type's defaults.
func (r *ReschedulePolicy) Canonicalize(jobType string) {
	if r == nil {
		return
	}
	d := defaultRescheduleValues(jobType)
	d.take(r)
	*r = d.ReschedulePolicy
}

// EphemeralDisk is the scratch space shared by a group's tasks (the
// `ephemeral_disk` block).
type EphemeralDisk struct {
	Sticky  *bool `hcl:"sticky,optional"`
	Migrate *bool `hcl:"migrate,optional"`
	SizeMB  *int  `hcl:"size,optional"`
}

// DefaultEphemeralDisk is 300 MB, neither sticky nor migrated.
func DefaultEphemeralDisk() *EphemeralDisk {
	return &EphemeralDisk{Sticky: new(false), Migrate: new(false), SizeMB: new(300)}
}

// Canonicalize fills unset fields from DefaultEphemeralDisk.
func (e *EphemeralDisk) Canonicalize() {
	if e.Sticky == nil {
		e.Sticky = new(false)
	}
	if e.Migrate == nil {
		e.Migrate = new(false)
	}
	if e.SizeMB == nil {
		e.SizeMB = new(300)
	}
}

// Reconcile options of a disconnect block: which allocation survives when
// a disconnected client comes back.
const (
	ReconcileOptionKeepOriginal    = "keep_original"
	ReconcileOptionKeepReplacement = "keep_replacement"
	ReconcileOptionBestScore       = "best_score"
	ReconcileOptionLongestRunning  = "longest_running"
)

// DisconnectStrategy says how servers and clients treat allocations on a
// client that lost contact (the `disconnect` block).
type DisconnectStrategy struct {
	LostAfter         *time.Duration `hcl:"lost_after,optional"`
	StopOnClientAfter *time.Duration `hcl:"stop_on_client_after,optional"`
	Replace           *bool          `hcl:"replace,optional"`
	Reconcile         *string        `hcl:"reconcile,optional"`
}

// Canonicalize fills replace=true and reconcile=best_score when unset.
func (d *DisconnectStrategy) Canonicalize() {
	if d.Replace == nil {
		d.Replace = new(true)
	}
	if d.Reconcile == nil {
		d.Reconcile = new(ReconcileOptionBestScore)
	}
}

// mergePtr copies src into *dst when src is set; the value is copied so the
// two structs never share a pointer.
func mergePtr[T any](dst **T, src *T) {
	if src != nil {
		v := *src
		*dst = &v
	}
}

func isZeroPtr[T comparable](p *T) bool {
	var zero T
	return p == nil || *p == zero
}
