package api

import "time"

// TaskGroup is a set of tasks always placed together on one node (the
// `group` block).
type TaskGroup struct {
	Name             *string                   `hcl:"name,label"`
	Count            *int                      `hcl:"count,optional"`
	Constraints      []*Constraint             `hcl:"constraint,block"`
	Affinities       []*Affinity               `hcl:"affinity,block"`
	Tasks            []*Task                   `hcl:"task,block"`
	Spreads          []*Spread                 `hcl:"spread,block"`
	Volumes          map[string]*VolumeRequest `hcl:"volume,block"`
	RestartPolicy    *RestartPolicy            `hcl:"restart,block"`
	Disconnect       *DisconnectStrategy       `hcl:"disconnect,block"`
	ReschedulePolicy *ReschedulePolicy         `hcl:"reschedule,block"`
	EphemeralDisk    *EphemeralDisk            `hcl:"ephemeral_disk,block"`
	Update           *UpdateStrategy           `hcl:"update,block"`
	Migrate          *MigrateStrategy          `hcl:"migrate,block"`
	Networks         []*NetworkResource        `hcl:"network,block"`
	Meta             map[string]string         `hcl:"meta,block"`
	Services         []*Service                `hcl:"service,block"`
	ShutdownDelay    *time.Duration            `hcl:"shutdown_delay,optional"`
	MaxRunDuration   *time.Duration            `hcl:"max_run_duration,optional"`
	// StopAfterClientDisconnect is the older spelling of
	// Disconnect.StopOnClientAfter.
	StopAfterClientDisconnect *time.Duration `hcl:"stop_after_client_disconnect,optional"`
	// MaxClientDisconnect is the older spelling of Disconnect.LostAfter.
	MaxClientDisconnect *time.Duration `hcl:"max_client_disconnect,optional"`
	Scaling             *ScalingPolicy `hcl:"scaling,block"`
	Consul              *Consul        `hcl:"consul,block"`
	// PreventRescheduleOnLost is the older spelling of !Disconnect.Replace.
	PreventRescheduleOnLost *bool `hcl:"prevent_reschedule_on_lost,optional"`
}

// NewTaskGroup returns a group with a name and count.
func NewTaskGroup(name string, count int) *TaskGroup {
	return &TaskGroup{Name: new(name), Count: new(count)}
}

// LookupTask returns the named task or nil.
func (g *TaskGroup) LookupTask(name string) *Task {
	for _, t := range g.Tasks {
		if t != nil && t.Name == name {
			return t
		}
	}
	return nil
}

// Canonicalize fills the group's defaults for job's type and merges the
// job-level update, reschedule and migrate blocks under the group's own
// settings. job must already have its Type set (Job.Canonicalize does).
func (g *TaskGroup) Canonicalize(job *Job) {
	if g == nil {
		return
	}
	if g.Name == nil {
		g.Name = new("")
	}
	if g.Count == nil {
		if g.Scaling != nil && g.Scaling.Min != nil {
			g.Count = new(int(*g.Scaling.Min))
		} else {
			g.Count = new(1)
		}
	}
	if g.Scaling != nil {
		g.Scaling.Canonicalize(*g.Count)
	}
	if g.EphemeralDisk == nil {
		g.EphemeralDisk = DefaultEphemeralDisk()
	} else {
		g.EphemeralDisk.Canonicalize()
	}
	if g.Consul != nil {
		if g.Consul.Namespace == "" && job.ConsulNamespace != nil {
			g.Consul.Namespace = *job.ConsulNamespace
		}
		g.Consul.Canonicalize()
	}

	// The job's update block is the base; the group's own fields win. An
	// empty job block (all zero) is not inherited.
	switch {
	case job.Update != nil && g.Update != nil:
		u := job.Update.Copy()
		u.Merge(g.Update)
		g.Update = u
	case job.Update != nil && !job.Update.Empty():
		g.Update = job.Update.Copy()
	}
	if g.Update != nil {
		g.Update.Canonicalize()
	}

	jobType := *job.Type
	if job.Reschedule != nil {
		r := job.Reschedule.Copy()
		r.Merge(g.ReschedulePolicy)
		g.ReschedulePolicy = r
	}
	if g.ReschedulePolicy == nil && jobType != JobTypeSysbatch && jobType != JobTypeSystem {
		g.ReschedulePolicy = NewDefaultReschedulePolicy(jobType)
	}
	g.ReschedulePolicy.Canonicalize(jobType)

	if job.Migrate != nil {
		m := job.Migrate.Copy()
		m.Merge(g.Migrate)
		g.Migrate = m
	}
	if g.Migrate == nil && jobType == JobTypeService {
		g.Migrate = &MigrateStrategy{}
	}
	g.Migrate.Canonicalize()

	var restart *RestartPolicy
	if jobType == JobTypeService || jobType == JobTypeSystem {
		restart = DefaultServiceJobRestartPolicy()
	} else {
		restart = DefaultBatchJobRestartPolicy()
	}
	restart.Merge(g.RestartPolicy)
	g.RestartPolicy = restart

	for _, t := range g.Tasks {
		t.Canonicalize(g, job)
	}
	for _, s := range g.Spreads {
		s.Canonicalize()
	}
	for _, a := range g.Affinities {
		a.Canonicalize()
	}
	for _, s := range g.Services {
		s.Canonicalize(nil, g, job)
	}
	if g.Disconnect != nil {
		g.Disconnect.Canonicalize()
	}
}
