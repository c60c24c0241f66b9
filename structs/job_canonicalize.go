package structs

// Canonicalize fills the defaults Nomad fills server side so that every
// server, the scheduler and the diff all see the same job no matter which
// optional fields the submitter left out. It is idempotent.
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
		j.Periodic.SpecType = "cron"
	}
	for _, tg := range j.TaskGroups {
		tg.canonicalize(j)
	}
}

func (tg *TaskGroup) canonicalize(j *Job) {
	if tg.RestartPolicy == nil {
		tg.RestartPolicy = DefaultRestartPolicy(j.Type)
	}
	if tg.RestartPolicy.Mode == "" {
		tg.RestartPolicy.Mode = RestartPolicyModeFail
	}
	if tg.ReschedulePolicy == nil {
		tg.ReschedulePolicy = DefaultReschedulePolicy(j.Type)
	} else if j.IsSystemLike() {
		// System allocs are bound to their node: a replacement elsewhere
		// makes no sense, so any policy given is dropped.
		tg.ReschedulePolicy = nil
	} else if tg.ReschedulePolicy.DelayFunction == "" {
		tg.ReschedulePolicy.DelayFunction = RescheduleDelayConstant
	}
	if tg.EphemeralDisk == nil {
		tg.EphemeralDisk = DefaultEphemeralDisk()
	}
	if tg.Migrate == nil && j.Type == JobTypeService {
		tg.Migrate = DefaultMigrateStrategy()
	}
	tg.Update = mergedUpdate(&j.Update, tg.Update, j.Type)
	for _, n := range tg.Networks {
		if n.Mode == "" {
			n.Mode = "host"
		}
	}
	for _, t := range tg.Tasks {
		t.canonicalize()
	}
}

// mergedUpdate combines the job-level and group-level update blocks; a
// group without an effective max_parallel has no rolling update at all.
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
	if t.LogConfig == nil {
		t.LogConfig = DefaultLogConfig()
	}
	if t.KillTimeout == 0 {
		t.KillTimeout = DefaultKillTimeout
	}
}
