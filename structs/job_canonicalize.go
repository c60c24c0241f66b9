package structs

// Default weight of an affinity or spread that does not set one, as in
// Nomad's job specification.
const defaultPreferenceWeight = 50

// Canonicalize fills the defaults Nomad fills server side so that every
// server, the scheduler and the diff all see the same job no matter which
// optional fields the submitter left out. It is idempotent.
//
// A zero value cannot be told apart from an absent one in these types, so
// only zero values that could never be valid are replaced (a zero interval,
// weight or disk size); zeros that mean something (zero restart attempts,
// zero delay) are kept and left to Validate.
func (j *Job) Canonicalize() {
	if j == nil {
		return
	}
	if j.Namespace == "" {
		j.Namespace = DefaultNamespace
	}
	if j.Region == "" {
		j.Region = DefaultRegion
	}
	if j.Name == "" {
		j.Name = j.ID
	}
	if j.Type == "" {
		j.Type = JobTypeService
	}
	if j.Priority == 0 {
		j.Priority = JobDefaultPriority
	}
	if len(j.Datacenters) == 0 {
		j.Datacenters = []string{"*"}
	}
	if j.NodePool == "" {
		j.NodePool = NodePoolDefault
	}
	if j.Periodic != nil && j.Periodic.SpecType == "" {
		j.Periodic.SpecType = PeriodicSpecCron
	}
	canonicalizePreferences(j.Affinities, j.Spreads)
	for _, tg := range j.TaskGroups {
		// nil entries are left for Validate to report.
		if tg != nil {
			tg.canonicalize(j)
		}
	}
}

// canonicalizePreferences gives affinities and spreads without a weight
// the default one; a zero weight is never valid.
func canonicalizePreferences(affinities []*Affinity, spreads []*Spread) {
	for _, a := range affinities {
		if a != nil && a.Weight == 0 {
			a.Weight = defaultPreferenceWeight
		}
	}
	for _, s := range spreads {
		if s != nil && s.Weight == 0 {
			s.Weight = defaultPreferenceWeight
		}
	}
}

func (tg *TaskGroup) canonicalize(j *Job) {
	canonicalizePreferences(tg.Affinities, tg.Spreads)
	tg.canonicalizeRestart(j.Type)
	tg.canonicalizeReschedule(j.Type)
	if tg.EphemeralDisk == nil {
		tg.EphemeralDisk = DefaultEphemeralDisk()
	} else if tg.EphemeralDisk.SizeMB == 0 {
		tg.EphemeralDisk.SizeMB = DefaultEphemeralDisk().SizeMB
	}
	if j.Type == JobTypeService {
		tg.canonicalizeMigrate()
	}
	tg.Update = mergedUpdate(&j.Update, tg.Update, j.Type)
	canonicalizeNetworks(tg.Networks)
	for _, t := range tg.Tasks {
		if t != nil {
			t.canonicalize()
		}
	}
}

func (tg *TaskGroup) canonicalizeRestart(jobType string) {
	def := DefaultRestartPolicy(jobType)
	if tg.RestartPolicy == nil {
		tg.RestartPolicy = def
		return
	}
	if tg.RestartPolicy.Mode == "" {
		tg.RestartPolicy.Mode = def.Mode
	}
	if tg.RestartPolicy.Interval == 0 {
		tg.RestartPolicy.Interval = def.Interval
	}
}

// canonicalizeReschedule fills the per-type default policy. A policy given
// for a system job is kept as is so that Validate rejects it, as Nomad
// does, rather than being dropped without a word.
func (tg *TaskGroup) canonicalizeReschedule(jobType string) {
	def := DefaultReschedulePolicy(jobType)
	rp := tg.ReschedulePolicy
	switch {
	case rp == nil:
		tg.ReschedulePolicy = def
		return
	case def == nil:
		return
	}
	if rp.DelayFunction == "" {
		rp.DelayFunction = def.DelayFunction
	}
	if rp.DelayFunction != RescheduleDelayConstant && rp.MaxDelay == 0 {
		// A growing delay without a cap is never valid; take the type's
		// cap, or one hour when the type's default policy has none.
		rp.MaxDelay = def.MaxDelay
		if rp.MaxDelay == 0 {
			rp.MaxDelay = DefaultReschedulePolicy(JobTypeService).MaxDelay
		}
	}
	if !rp.Unlimited && rp.Attempts > 0 && rp.Interval == 0 {
		rp.Interval = def.Interval
		if rp.Interval == 0 {
			rp.Interval = DefaultReschedulePolicy(JobTypeBatch).Interval
		}
	}
}

func (tg *TaskGroup) canonicalizeMigrate() {
	def := DefaultMigrateStrategy()
	m := tg.Migrate
	if m == nil {
		tg.Migrate = def
		return
	}
	if m.HealthCheck == "" {
		m.HealthCheck = def.HealthCheck
	}
	if m.HealthyDeadline == 0 {
		m.HealthyDeadline = def.HealthyDeadline
	}
}

func canonicalizeNetworks(nets Networks) {
	for _, n := range nets {
		if n != nil && n.Mode == "" {
			n.Mode = NetworkModeHost
		}
	}
}

// mergedUpdate combines the job-level and group-level update blocks; a
// group without an effective max_parallel has no rolling update at all.
// Batch-like jobs never roll, so they get none.
func mergedUpdate(jobLevel, group *UpdateStrategy, jobType string) *UpdateStrategy {
	if jobType == JobTypeBatch || jobType == JobTypeSysBatch {
		return nil
	}
	if group == nil && jobLevel.IsEmpty() {
		return nil
	}
	base := DefaultUpdateStrategy()
	if !jobLevel.IsEmpty() {
		overlayUpdate(base, jobLevel)
	}
	if group != nil {
		overlayUpdate(base, group)
	}
	if base.MaxParallel == 0 {
		return nil
	}
	return base
}

func overlayUpdate(dst, src *UpdateStrategy) {
	if src.Stagger != 0 {
		dst.Stagger = src.Stagger
	}
	if src.MaxParallel != 0 {
		dst.MaxParallel = src.MaxParallel
	}
	if src.HealthCheck != "" {
		dst.HealthCheck = src.HealthCheck
	}
	if src.MinHealthyTime != 0 {
		dst.MinHealthyTime = src.MinHealthyTime
	}
	if src.HealthyDeadline != 0 {
		dst.HealthyDeadline = src.HealthyDeadline
	}
	if src.ProgressDeadline != 0 {
		dst.ProgressDeadline = src.ProgressDeadline
	}
	dst.AutoRevert = dst.AutoRevert || src.AutoRevert
	dst.AutoPromote = dst.AutoPromote || src.AutoPromote
	if src.Canary != 0 {
		dst.Canary = src.Canary
	}
}

func (t *Task) canonicalize() {
	if t.Resources == nil {
		t.Resources = &Resources{}
	}
	if t.Resources.CPU == 0 && t.Resources.Cores == 0 {
		t.Resources.CPU = DefaultTaskCPU
	}
	if t.Resources.MemoryMB == 0 {
		t.Resources.MemoryMB = DefaultTaskMemoryMB
	}
	canonicalizeNetworks(t.Resources.Networks)
	def := DefaultLogConfig()
	if t.LogConfig == nil {
		t.LogConfig = def
	} else {
		if t.LogConfig.MaxFiles == 0 {
			t.LogConfig.MaxFiles = def.MaxFiles
		}
		if t.LogConfig.MaxFileSizeMB == 0 {
			t.LogConfig.MaxFileSizeMB = def.MaxFileSizeMB
		}
	}
	if t.KillTimeout == 0 {
		t.KillTimeout = DefaultKillTimeout
	}
	canonicalizePreferences(t.Affinities, nil)
}
