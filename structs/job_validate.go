package structs

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/cronexpr"
)

// Validation limits.
const (
	maxJobIDLength     = 128
	minTaskMemoryMB    = 10
	maxDynamicPortsAsk = 1000
)

// Validate checks a canonicalized job and returns a *ValidationError with
// every problem found, or nil. Each problem names its path, e.g.
// `group "web": task "api": memory must be >= 10 MB, got 0`.
func (j *Job) Validate() error {
	var p problems
	j.validateTop(&p)
	groups := map[string]bool{}
	for i, tg := range j.TaskGroups {
		name := tg.Name
		if name == "" {
			name = fmt.Sprintf("%d", i+1)
		}
		prefix := fmt.Sprintf("group %q", name)
		if tg.Name != "" && groups[tg.Name] {
			p.add(prefix, "group name is used more than once")
		}
		groups[tg.Name] = true
		tg.validate(&p, prefix, j)
	}
	return p.err()
}

func (j *Job) validateTop(p *problems) {
	switch {
	case j.ID == "":
		p.add("", "missing job ID")
	case len(j.ID) > maxJobIDLength:
		p.add("", "job ID must be at most %d characters, got %d", maxJobIDLength, len(j.ID))
	case strings.ContainsAny(j.ID, " \t\n\x00"):
		p.add("", "job ID %q must not contain spaces or null characters", j.ID)
	}
	if j.Name == "" {
		p.add("", "missing job name")
	} else if strings.Contains(j.Name, "\x00") {
		p.add("", "job name must not contain null characters")
	}
	if j.Namespace == "" {
		p.add("", "missing job namespace")
	}
	if j.Region == "" {
		p.add("", "missing job region")
	}
	switch j.Type {
	case JobTypeService, JobTypeBatch, JobTypeSystem, JobTypeSysBatch:
	case "":
		p.add("", "missing job type")
	default:
		p.add("", "invalid job type %q: must be one of service, batch, system, sysbatch", j.Type)
	}
	if j.Priority < JobMinPriority || j.Priority > JobMaxPriority {
		p.add("", "job priority must be between [%d, %d], got %d", JobMinPriority, JobMaxPriority, j.Priority)
	}
	if len(j.Datacenters) == 0 {
		p.add("", "missing job datacenters")
	}
	for _, dc := range j.Datacenters {
		if dc == "" {
			p.add("", "job datacenter must be non-empty")
		}
	}
	if len(j.TaskGroups) == 0 {
		p.add("", "missing job task groups")
	}
	for i, c := range j.Constraints {
		p.addErrs(fmt.Sprintf("constraint %d", i+1), c.Validate())
	}
	if j.IsSystemLike() {
		if len(j.Affinities) > 0 {
			p.add("", "%s jobs may not have an affinity block", j.Type)
		}
		if len(j.Spreads) > 0 {
			p.add("", "%s jobs may not have a spread block", j.Type)
		}
	}
	for i, a := range j.Affinities {
		p.addErrs(fmt.Sprintf("affinity %d", i+1), a.Validate())
	}
	for i, s := range j.Spreads {
		p.addErrs(fmt.Sprintf("spread %d", i+1), s.Validate())
	}
	if j.Periodic != nil {
		j.Periodic.validate(p)
		if j.Type != JobTypeBatch && j.Type != JobTypeSysBatch && j.Periodic.Enabled {
			p.add("periodic", "periodic can only be used with %q or %q jobs", JobTypeBatch, JobTypeSysBatch)
		}
	}
	if j.ParameterizedJob != nil {
		if j.Type != JobTypeBatch && j.Type != JobTypeSysBatch {
			p.add("parameterized", "parameterized job must be of type %q or %q", JobTypeBatch, JobTypeSysBatch)
		}
		switch j.ParameterizedJob.Payload {
		case "", "optional", "required", "forbidden":
		default:
			p.add("parameterized", "unknown payload requirement %q", j.ParameterizedJob.Payload)
		}
	}
}

func (pc *PeriodicConfig) validate(p *problems) {
	if !pc.Enabled {
		return
	}
	specs := pc.Specs
	if pc.Spec != "" {
		specs = append([]string{pc.Spec}, specs...)
	}
	if len(specs) == 0 {
		p.add("periodic", "must specify a cron spec")
	}
	for _, s := range specs {
		if _, err := cronexpr.Parse(s); err != nil {
			p.add("periodic", "invalid cron spec %q: %v", s, err)
		}
	}
	if pc.TimeZone != "" {
		if _, err := time.LoadLocation(pc.TimeZone); err != nil {
			p.add("periodic", "invalid time zone %q: %v", pc.TimeZone, err)
		}
	}
}

func (tg *TaskGroup) validate(p *problems, prefix string, j *Job) {
	if tg.Name == "" {
		p.add(prefix, "missing group name")
	}
	if tg.Count < 0 {
		p.add(prefix, "count must be >= 0, got %d", tg.Count)
	}
	if len(tg.Tasks) == 0 {
		p.add(prefix, "missing tasks")
	}
	for i, c := range tg.Constraints {
		p.addErrs(joinPath(prefix, fmt.Sprintf("constraint %d", i+1)), c.Validate())
	}
	if j.IsSystemLike() && (len(tg.Affinities) > 0 || len(tg.Spreads) > 0) {
		p.add(prefix, "%s jobs may not have affinity or spread blocks", j.Type)
	}
	for i, a := range tg.Affinities {
		p.addErrs(joinPath(prefix, fmt.Sprintf("affinity %d", i+1)), a.Validate())
	}
	for i, s := range tg.Spreads {
		p.addErrs(joinPath(prefix, fmt.Sprintf("spread %d", i+1)), s.Validate())
	}
	if tg.RestartPolicy == nil {
		p.add(prefix, "missing restart policy")
	} else {
		tg.RestartPolicy.validate(p, joinPath(prefix, "restart"))
	}
	if tg.ReschedulePolicy != nil {
		tg.ReschedulePolicy.validate(p, joinPath(prefix, "reschedule"))
	}
	if tg.Update != nil {
		tg.Update.validate(p, joinPath(prefix, "update"))
	}
	if tg.Migrate != nil {
		if tg.Migrate.MaxParallel < 0 {
			p.add(joinPath(prefix, "migrate"), "max_parallel must be >= 0")
		}
	}
	diskMB := 0
	if tg.EphemeralDisk == nil {
		p.add(prefix, "missing ephemeral disk")
	} else if tg.EphemeralDisk.SizeMB <= 0 {
		p.add(joinPath(prefix, "ephemeral_disk"), "size must be > 0 MB, got %d", tg.EphemeralDisk.SizeMB)
	} else {
		diskMB = tg.EphemeralDisk.SizeMB
	}
	validateNetworks(p, joinPath(prefix, "network"), tg.Networks)

	tasks := map[string]bool{}
	leaders := 0
	for i, t := range tg.Tasks {
		name := t.Name
		if name == "" {
			name = fmt.Sprintf("%d", i+1)
		}
		tprefix := joinPath(prefix, fmt.Sprintf("task %q", name))
		if t.Name != "" && tasks[t.Name] {
			p.add(tprefix, "task name is used more than once")
		}
		tasks[t.Name] = true
		if t.Leader {
			leaders++
		}
		t.validate(p, tprefix, diskMB)
	}
	if leaders > 1 {
		p.add(prefix, "only one task may be the leader, got %d", leaders)
	}
}

func validateNetworks(p *problems, prefix string, nets Networks) {
	labels := map[string]bool{}
	static := map[int]bool{}
	dynamic := 0
	for _, n := range nets {
		switch n.Mode {
		case "", "host", "none":
		default:
			p.add(prefix, "network mode %q is not supported (use \"host\")", n.Mode)
		}
		check := func(port Port, isStatic bool) {
			if port.Label == "" {
				p.add(prefix, "port label must not be empty")
			} else if labels[port.Label] {
				p.add(prefix, "port label %q is used more than once", port.Label)
			}
			labels[port.Label] = true
			if isStatic {
				if port.Value < 1 || port.Value > maxValidPort {
					p.add(prefix, "port %q static value %d must be within [1, %d]", port.Label, port.Value, maxValidPort)
				} else if static[port.Value] {
					p.add(prefix, "static port %d is used more than once", port.Value)
				}
				static[port.Value] = true
			}
			if port.To < -1 || port.To > maxValidPort {
				p.add(prefix, "port %q mapped value %d must be within [-1, %d]", port.Label, port.To, maxValidPort)
			}
		}
		for _, port := range n.ReservedPorts {
			check(port, true)
		}
		for _, port := range n.DynamicPorts {
			check(port, false)
			dynamic++
		}
	}
	if dynamic > maxDynamicPortsAsk {
		p.add(prefix, "at most %d dynamic ports may be requested, got %d", maxDynamicPortsAsk, dynamic)
	}
}

func (t *Task) validate(p *problems, prefix string, groupDiskMB int) {
	if t.Name == "" {
		p.add(prefix, "missing task name")
	} else if strings.ContainsAny(t.Name, "/\x00") {
		p.add(prefix, "task name %q must not contain slashes or null characters", t.Name)
	}
	if t.Driver == "" {
		p.add(prefix, "missing driver")
	}
	if t.KillTimeout < 0 {
		p.add(prefix, "kill_timeout must be >= 0, got %s", t.KillTimeout)
	}
	for i, c := range t.Constraints {
		if c.Operand == ConstraintDistinctHosts || c.Operand == ConstraintDistinctProperty {
			p.add(joinPath(prefix, fmt.Sprintf("constraint %d", i+1)), "%s can only be used at the job or group level", c.Operand)
			continue
		}
		p.addErrs(joinPath(prefix, fmt.Sprintf("constraint %d", i+1)), c.Validate())
	}
	for i, a := range t.Affinities {
		p.addErrs(joinPath(prefix, fmt.Sprintf("affinity %d", i+1)), a.Validate())
	}
	if r := t.Resources; r == nil {
		p.add(prefix, "missing resources")
	} else {
		rp := joinPath(prefix, "resources")
		if r.CPU < 0 {
			p.add(rp, "cpu must be >= 0 MHz, got %d", r.CPU)
		}
		if r.Cores < 0 {
			p.add(rp, "cores must be >= 0, got %d", r.Cores)
		}
		if r.CPU == 0 && r.Cores == 0 {
			p.add(rp, "cpu must be > 0 MHz when no cores are requested")
		}
		if r.CPU > 0 && r.Cores > 0 {
			p.add(rp, "cpu and cores cannot both be set")
		}
		if r.MemoryMB < minTaskMemoryMB {
			p.add(rp, "memory must be >= %d MB, got %d", minTaskMemoryMB, r.MemoryMB)
		}
		if r.MemoryMaxMB != 0 && r.MemoryMaxMB < r.MemoryMB {
			p.add(rp, "memory_max (%d MB) must be >= memory (%d MB)", r.MemoryMaxMB, r.MemoryMB)
		}
		if r.DiskMB < 0 {
			p.add(rp, "disk must be >= 0 MB, got %d", r.DiskMB)
		}
	}
	if lc := t.LogConfig; lc != nil && !lc.Disabled {
		lp := joinPath(prefix, "logs")
		if lc.MaxFiles < 1 {
			p.add(lp, "max_files must be >= 1, got %d", lc.MaxFiles)
		}
		if lc.MaxFileSizeMB < 1 {
			p.add(lp, "max_file_size must be >= 1 MB, got %d", lc.MaxFileSizeMB)
		}
		// stdout and stderr each keep MaxFiles files.
		if need := 2 * lc.MaxFiles * lc.MaxFileSizeMB; groupDiskMB > 0 && need > groupDiskMB {
			p.add(lp, "log storage (%d MB) exceeds the group's ephemeral disk (%d MB)", need, groupDiskMB)
		}
	}
	if lc := t.Lifecycle; lc != nil {
		switch lc.Hook {
		case TaskLifecycleHookPrestart, TaskLifecycleHookPoststart, TaskLifecycleHookPoststop:
		default:
			p.add(joinPath(prefix, "lifecycle"), "invalid hook %q: must be prestart, poststart or poststop", lc.Hook)
		}
	}
}

func (r *RestartPolicy) validate(p *problems, prefix string) {
	switch r.Mode {
	case RestartPolicyModeDelay, RestartPolicyModeFail:
	default:
		p.add(prefix, "unsupported restart mode %q: must be %q or %q", r.Mode, RestartPolicyModeDelay, RestartPolicyModeFail)
	}
	if r.Attempts < 0 {
		p.add(prefix, "attempts must be >= 0, got %d", r.Attempts)
	}
	if r.Delay < 0 {
		p.add(prefix, "delay must be >= 0, got %s", r.Delay)
	}
	if r.Attempts > 0 && r.Interval < MinRestartInterval {
		p.add(prefix, "interval must be >= %s, got %s", MinRestartInterval, r.Interval)
	}
	if r.Attempts > 0 && time.Duration(r.Attempts)*r.Delay > r.Interval {
		p.add(prefix, "%d attempts with a %s delay do not fit in the %s interval", r.Attempts, r.Delay, r.Interval)
	}
}

func (r *ReschedulePolicy) validate(p *problems, prefix string) {
	if r.Attempts < 0 {
		p.add(prefix, "attempts must be >= 0, got %d", r.Attempts)
	}
	if !r.Enabled() {
		return
	}
	switch r.DelayFunction {
	case RescheduleDelayConstant, RescheduleDelayExponential, RescheduleDelayFibonacci:
	default:
		p.add(prefix, "invalid delay_function %q: must be constant, exponential or fibonacci", r.DelayFunction)
	}
	if r.Delay < MinRescheduleDelay {
		p.add(prefix, "delay must be >= %s, got %s", MinRescheduleDelay, r.Delay)
	}
	if r.DelayFunction != RescheduleDelayConstant && r.DelayFunction != "" {
		if r.MaxDelay < r.Delay {
			p.add(prefix, "max_delay (%s) must be >= delay (%s)", r.MaxDelay, r.Delay)
		}
	}
	if r.Unlimited {
		if r.Attempts > 0 {
			p.add(prefix, "attempts must not be set when unlimited is true")
		}
		return
	}
	if r.Interval < MinRescheduleInterval {
		p.add(prefix, "interval must be >= %s, got %s", MinRescheduleInterval, r.Interval)
	}
}

func (u *UpdateStrategy) validate(p *problems, prefix string) {
	switch u.HealthCheck {
	case UpdateHealthCheckChecks, UpdateHealthCheckTaskStates, UpdateHealthCheckManual:
	default:
		p.add(prefix, "invalid health_check %q", u.HealthCheck)
	}
	if u.MaxParallel < 0 {
		p.add(prefix, "max_parallel must be >= 0, got %d", u.MaxParallel)
	}
	if u.Canary < 0 {
		p.add(prefix, "canary must be >= 0, got %d", u.Canary)
	}
	if u.MinHealthyTime < 0 {
		p.add(prefix, "min_healthy_time must be >= 0, got %s", u.MinHealthyTime)
	}
	if u.HealthyDeadline <= 0 {
		p.add(prefix, "healthy_deadline must be > 0, got %s", u.HealthyDeadline)
	}
	if u.MinHealthyTime >= u.HealthyDeadline {
		p.add(prefix, "min_healthy_time (%s) must be less than healthy_deadline (%s)", u.MinHealthyTime, u.HealthyDeadline)
	}
	if u.ProgressDeadline != 0 && u.HealthyDeadline >= u.ProgressDeadline {
		p.add(prefix, "healthy_deadline (%s) must be less than progress_deadline (%s)", u.HealthyDeadline, u.ProgressDeadline)
	}
	if u.Stagger <= 0 {
		p.add(prefix, "stagger must be > 0, got %s", u.Stagger)
	}
}
