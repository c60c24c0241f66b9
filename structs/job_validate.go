package structs

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/cronexpr"
)

// Validation limits.
const (
	maxJobIDLength     = 128
	minTaskMemoryMB    = 10
	minEphemeralDiskMB = 10
	maxDynamicPortsAsk = 1000
)

// validNodePoolName is the node pool name syntax Nomad accepts.
var validNodePoolName = regexp.MustCompile(`^[a-zA-Z0-9-_]{1,128}$`)

// PriorityProblem describes a requested priority (of an eval, of a
// dispatched job) outside [JobMinPriority, JobMaxPriority], naming it
// what, e.g. "eval priority must be between 1 and 100, got 0". It is ""
// when p is in range or 0, which means "unset: the job's own".
func PriorityProblem(what string, p int) string {
	if p == 0 || (p >= JobMinPriority && p <= JobMaxPriority) {
		return ""
	}
	return fmt.Sprintf("%s must be between %d and %d, got %d", what, JobMinPriority, JobMaxPriority, p)
}

// Validate checks a canonicalized job and returns a *ValidationError with
// every problem found, or nil. Each problem names its path, e.g.
// `group "web": task "api": memory must be >= 10 MB, got 0`. Validate
// never modifies the job and never panics on a partially filled one.
func (j *Job) Validate() error {
	if j == nil {
		return &ValidationError{Problems: []string{"missing job"}}
	}
	var p problems
	j.validateTop(&p)
	groups := map[string]bool{}
	for i, tg := range j.TaskGroups {
		if tg == nil {
			p.add(fmt.Sprintf("group %d", i+1), "group is empty")
			continue
		}
		// An unnamed group is named by its position: `group 2: ...`.
		prefix := fmt.Sprintf("group %q", tg.Name)
		if tg.Name == "" {
			prefix = fmt.Sprintf("group %d", i+1)
		}
		if tg.Name != "" && groups[tg.Name] {
			p.add(prefix, "group name is used more than once")
		}
		groups[tg.Name] = true
		tg.validate(&p, prefix, j)
	}
	return p.err()
}

func (j *Job) validateTop(p *problems) {
	j.validateNames(p)
	switch {
	case j.ID == "":
		p.add("", "missing job ID")
	case len(j.ID) > maxJobIDLength:
		p.add("", "job ID must be at most %d characters, got %d", maxJobIDLength, len(j.ID))
	// As Nomad: a space or a NUL is refused, other characters (tabs,
	// newlines, "/", "?") are not; paths carry the ID escaped.
	case strings.ContainsAny(j.ID, " \x00"):
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
	if j.NodePool == "" {
		p.add("", "missing job node pool")
	} else if !validNodePoolName.MatchString(j.NodePool) {
		p.add("", "invalid node pool %q: only letters, digits, '-' and '_' are allowed, at most 128", j.NodePool)
	}
	if len(j.TaskGroups) == 0 {
		p.add("", "missing job task groups")
	}
	validateConstraints(p, "", j.Constraints, true)
	if j.IsSystemLike() {
		if len(j.Affinities) > 0 {
			p.add("", "%s jobs may not have an affinity block", j.Type)
		}
		if len(j.Spreads) > 0 {
			p.add("", "%s jobs may not have a spread block", j.Type)
		}
	}
	validateAffinities(p, "", j.Affinities)
	validateSpreads(p, "", j.Spreads)
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
		j.ParameterizedJob.validate(p)
	}
}

func (pc *PeriodicConfig) validate(p *problems) {
	if !pc.Enabled {
		return
	}
	switch pc.SpecType {
	case PeriodicSpecCron, "":
	default:
		p.add("periodic", "unknown spec type %q: only %q is supported", pc.SpecType, PeriodicSpecCron)
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

func (pj *ParameterizedJobConfig) validate(p *problems) {
	switch pj.Payload {
	case "", DispatchPayloadOptional, DispatchPayloadRequired, DispatchPayloadForbidden:
	default:
		p.add("parameterized", "unknown payload requirement %q: must be optional, required or forbidden", pj.Payload)
	}
	if k, ok := firstRepeated(append(append([]string(nil), pj.MetaRequired...), pj.MetaOptional...)); ok {
		p.add("parameterized", "meta key %q is listed more than once in meta_required and meta_optional", k)
	}
}

func (tg *TaskGroup) validate(p *problems, prefix string, j *Job) {
	tg.validateNames(p, prefix)
	if tg.Name == "" {
		p.add(prefix, "missing group name")
	}
	if tg.Count < 0 {
		p.add(prefix, "count must be >= 0, got %d", tg.Count)
	}
	if j.Type == JobTypeSystem && tg.Count > 1 {
		p.add(prefix, "count must be 0 or 1 for system jobs (one alloc per node), got %d", tg.Count)
	}
	if len(tg.Tasks) == 0 {
		p.add(prefix, "missing tasks")
	}
	validateConstraints(p, prefix, tg.Constraints, true)
	if j.IsSystemLike() && (len(tg.Affinities) > 0 || len(tg.Spreads) > 0) {
		p.add(prefix, "%s jobs may not have affinity or spread blocks", j.Type)
	}
	validateAffinities(p, prefix, tg.Affinities)
	validateSpreads(p, prefix, tg.Spreads)
	tg.validatePolicies(p, prefix, j.Type)
	if tg.Scaling != nil {
		for _, msg := range tg.Scaling.Validate(tg.Count) {
			p.add(prefix, "scaling: %s", msg)
		}
	}

	diskMB := 0
	if tg.EphemeralDisk == nil {
		p.add(prefix, "missing ephemeral disk")
	} else if tg.EphemeralDisk.SizeMB < minEphemeralDiskMB {
		p.add(joinPath(prefix, "ephemeral_disk"), "size must be >= %d MB, got %d", minEphemeralDiskMB, tg.EphemeralDisk.SizeMB)
	} else {
		diskMB = tg.EphemeralDisk.SizeMB
	}
	tg.validatePorts(p, prefix)
	tg.validateGroupServices(p, prefix)
	tg.validateVolumes(p, prefix)

	tasks := map[string]bool{}
	leaders := 0
	for i, t := range tg.Tasks {
		if t == nil {
			p.add(joinPath(prefix, fmt.Sprintf("task %d", i+1)), "task is empty")
			continue
		}
		tprefix := joinPath(prefix, taskPathElem(t, i))
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

// taskPathElem names a task in a problem path: `task "api"`, or `task 2`
// for an unnamed one.
func taskPathElem(t *Task, i int) string {
	if t.Name == "" {
		return fmt.Sprintf("task %d", i+1)
	}
	return fmt.Sprintf("task %q", t.Name)
}

// validatePolicies checks the restart, reschedule, update and migrate
// blocks, and that each is allowed for the job type. Whether a block is
// allowed is only judged for a known job type; an unknown one is already
// reported at the top.
func (tg *TaskGroup) validatePolicies(p *problems, prefix, jobType string) {
	knownType := jobType == JobTypeService || jobType == JobTypeBatch || jobType == JobTypeSystem || jobType == JobTypeSysBatch
	if tg.RestartPolicy == nil {
		p.add(prefix, "missing restart policy")
	} else {
		tg.RestartPolicy.validate(p, joinPath(prefix, "restart"))
	}
	if tg.ReschedulePolicy != nil {
		if jobType == JobTypeSystem {
			// A system alloc belongs to its node; there is nowhere else to go.
			p.add(prefix, "system jobs may not have a reschedule policy")
		} else {
			tg.ReschedulePolicy.validate(p, joinPath(prefix, "reschedule"))
		}
	}
	if tg.Update != nil {
		if knownType && jobType != JobTypeService && jobType != JobTypeSystem {
			p.add(prefix, "%s jobs may not have an update block", jobType)
		}
		tg.Update.validate(p, joinPath(prefix, "update"))
	}
	if tg.Migrate != nil {
		if knownType && jobType != JobTypeService {
			p.add(prefix, "%s jobs may not have a migrate block", jobType)
		}
		tg.Migrate.validate(p, joinPath(prefix, "migrate"))
	}
}

func validateConstraints(p *problems, prefix string, cs []*Constraint, distinctAllowed bool) {
	for i, c := range cs {
		cp := joinPath(prefix, fmt.Sprintf("constraint %d", i+1))
		if c == nil {
			p.add(cp, "constraint is empty")
			continue
		}
		if !distinctAllowed && (c.Operand == ConstraintDistinctHosts || c.Operand == ConstraintDistinctProperty) {
			p.add(cp, "%s can only be used at the job or group level", c.Operand)
			continue
		}
		p.addErrs(cp, c.Validate())
	}
}

func validateAffinities(p *problems, prefix string, as []*Affinity) {
	for i, a := range as {
		ap := joinPath(prefix, fmt.Sprintf("affinity %d", i+1))
		if a == nil {
			p.add(ap, "affinity is empty")
			continue
		}
		p.addErrs(ap, a.Validate())
	}
}

func validateSpreads(p *problems, prefix string, ss []*Spread) {
	for i, s := range ss {
		sp := joinPath(prefix, fmt.Sprintf("spread %d", i+1))
		if s == nil {
			p.add(sp, "spread is empty")
			continue
		}
		p.addErrs(sp, s.Validate())
	}
}
