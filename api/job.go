package api

// Job types; each names the scheduler that places the job.
const (
	JobTypeService  = "service"
	JobTypeBatch    = "batch"
	JobTypeSystem   = "system"
	JobTypeSysbatch = "sysbatch"
)

// Defaults Canonicalize fills into a job.
const (
	// GlobalRegion is the region of a job that names none.
	GlobalRegion = "global"
	// DefaultNamespace is the namespace of a job that names none.
	DefaultNamespace = "default"
	// AllNamespaces lists across every namespace.
	AllNamespaces = "*"
	// JobDefaultPriority is the priority of a job that names none.
	JobDefaultPriority = 50
	// PeriodicSpecCron is the only periodic spec type: a cron expression.
	PeriodicSpecCron = "cron"
)

// Job status strings reported by the server.
const (
	JobStatusPending = "pending"
	JobStatusRunning = "running"
	JobStatusDead    = "dead"
)

// Job is a job specification as submitted to and returned by the API. The
// `hcl` tags name each field's attribute or block in the HCL job language.
type Job struct {
	Region           *string                 `hcl:"region,optional"`
	Namespace        *string                 `hcl:"namespace,optional"`
	ID               *string                 `hcl:"id,optional"`
	Name             *string                 `hcl:"name,optional"`
	Type             *string                 `hcl:"type,optional"`
	Priority         *int                    `hcl:"priority,optional"`
	AllAtOnce        *bool                   `hcl:"all_at_once,optional"`
	Datacenters      []string                `hcl:"datacenters,optional"`
	NodePool         *string                 `hcl:"node_pool,optional"`
	Constraints      []*Constraint           `hcl:"constraint,block"`
	Affinities       []*Affinity             `hcl:"affinity,block"`
	TaskGroups       []*TaskGroup            `hcl:"group,block"`
	Update           *UpdateStrategy         `hcl:"update,block"`
	Spreads          []*Spread               `hcl:"spread,block"`
	Periodic         *PeriodicConfig         `hcl:"periodic,block"`
	ParameterizedJob *ParameterizedJobConfig `hcl:"parameterized,block"`
	Reschedule       *ReschedulePolicy       `hcl:"reschedule,block"`
	Migrate          *MigrateStrategy        `hcl:"migrate,block"`
	Meta             map[string]string       `hcl:"meta,block"`

	// Fields below are set by the server, not by the job file.

	Stop                     *bool
	ParentID                 *string
	Dispatched               bool
	DispatchIdempotencyToken *string
	Payload                  []byte
	ConsulNamespace          *string
	VaultNamespace           *string
	NomadTokenID             *string
	Status                   *string
	StatusDescription        *string
	Stable                   *bool
	Version                  *uint64
	VersionTag               *JobVersionTag
	SubmitTime               *int64
	CreateIndex              *uint64
	ModifyIndex              *uint64
	JobModifyIndex           *uint64
}

// IsPeriodic reports whether the job is a periodic template.
func (j *Job) IsPeriodic() bool { return j.Periodic != nil }

// IsParameterized reports whether the job is a template for dispatch (and
// not itself a dispatched child).
func (j *Job) IsParameterized() bool { return j.ParameterizedJob != nil && !j.Dispatched }

// LookupTaskGroup returns the named group or nil.
func (j *Job) LookupTaskGroup(name string) *TaskGroup {
	for _, tg := range j.TaskGroups {
		if tg != nil && tg.Name != nil && *tg.Name == name {
			return tg
		}
	}
	return nil
}

// Canonicalize fills every unset field with Nomad's default, the way
// Nomad's api package does before a job is registered: job attributes
// (namespace "default", priority 50, region "global", type "service"...),
// the default update strategy for service and system jobs, and for each
// group and task the restart, reschedule, migrate, ephemeral disk, log and
// resource defaults of its job type, merging job-level update, reschedule
// and migrate blocks into groups. Datacenters and the node pool are left
// for the server to default. Canonicalize is idempotent. A null entry in
// a list (a JSON body's `"Tasks": [null]`) is left as it is, for the
// server to refuse, rather than crashing the caller.
func (j *Job) Canonicalize() {
	if j == nil {
		return
	}
	if j.ID == nil {
		j.ID = new("")
	}
	if j.Name == nil {
		j.Name = new(*j.ID)
	}
	if j.ParentID == nil {
		j.ParentID = new("")
	}
	if j.Namespace == nil {
		j.Namespace = new(DefaultNamespace)
	}
	if j.Priority == nil {
		j.Priority = new(JobDefaultPriority)
	}
	if j.Stop == nil {
		j.Stop = new(false)
	}
	if j.Region == nil {
		j.Region = new(GlobalRegion)
	}
	if j.NodePool == nil {
		j.NodePool = new("")
	}
	if j.Type == nil {
		j.Type = new(JobTypeService)
	}
	if j.AllAtOnce == nil {
		j.AllAtOnce = new(false)
	}
	if j.ConsulNamespace == nil {
		j.ConsulNamespace = new("")
	}
	if j.VaultNamespace == nil {
		j.VaultNamespace = new("")
	}
	if j.NomadTokenID == nil {
		j.NomadTokenID = new("")
	}
	if j.Status == nil {
		j.Status = new("")
	}
	if j.StatusDescription == nil {
		j.StatusDescription = new("")
	}
	if j.Stable == nil {
		j.Stable = new(false)
	}
	if j.Version == nil {
		j.Version = new(uint64(0))
	}
	if j.CreateIndex == nil {
		j.CreateIndex = new(uint64(0))
	}
	if j.ModifyIndex == nil {
		j.ModifyIndex = new(uint64(0))
	}
	if j.JobModifyIndex == nil {
		j.JobModifyIndex = new(uint64(0))
	}
	if j.Periodic != nil {
		j.Periodic.Canonicalize()
	}
	if j.Update != nil {
		j.Update.Canonicalize()
	} else if *j.Type == JobTypeService || *j.Type == JobTypeSystem {
		j.Update = DefaultUpdateStrategy()
	}
	for _, tg := range j.TaskGroups {
		tg.Canonicalize(j)
	}
	for _, s := range j.Spreads {
		s.Canonicalize()
	}
	for _, a := range j.Affinities {
		a.Canonicalize()
	}
}

// PeriodicConfig makes a job a template launched on a cron schedule.
type PeriodicConfig struct {
	Enabled         *bool    `hcl:"enabled,optional"`
	Spec            *string  `hcl:"cron,optional"`
	Specs           []string `hcl:"crons,optional"`
	SpecType        *string
	ProhibitOverlap *bool   `hcl:"prohibit_overlap,optional"`
	TimeZone        *string `hcl:"time_zone,optional"`
}

// Canonicalize fills the periodic defaults: enabled, cron spec type, no
// overlap prohibition, time zone UTC.
func (p *PeriodicConfig) Canonicalize() {
	if p.Enabled == nil {
		p.Enabled = new(true)
	}
	if p.Spec == nil {
		p.Spec = new("")
	}
	if p.Specs == nil {
		p.Specs = []string{}
	}
	if p.SpecType == nil {
		p.SpecType = new(PeriodicSpecCron)
	}
	if p.ProhibitOverlap == nil {
		p.ProhibitOverlap = new(false)
	}
	if p.TimeZone == nil || *p.TimeZone == "" {
		p.TimeZone = new("UTC")
	}
}

// ParameterizedJobConfig makes a job a template instantiated by dispatch.
type ParameterizedJobConfig struct {
	// Payload is "optional", "required" or "forbidden".
	Payload      string   `hcl:"payload,optional"`
	MetaRequired []string `hcl:"meta_required,optional"`
	MetaOptional []string `hcl:"meta_optional,optional"`
}
