package scheduler

import (
	"maps"
	"reflect"

	"github.com/opennomad/nomad/structs"
)

// tasksUpdated reports whether moving a group's allocs from job a to job
// b needs new allocs (a destructive update) rather than an in-place one,
// and names the first difference that forces it. Anything a running task
// sees — driver, config, environment, meta, resources, ports, disk,
// lifecycle — forces a replacement; scheduling-only changes (count,
// constraints, affinities, spreads, policies, priority) do not.
func tasksUpdated(a, b *structs.Job, group string) (bool, string) {
	ag, bg := a.LookupTaskGroup(group), b.LookupTaskGroup(group)
	if ag == nil || bg == nil {
		return true, "task group added or removed"
	}
	if len(ag.Tasks) != len(bg.Tasks) {
		return true, "number of tasks"
	}
	if !networksEqual(ag.Networks, bg.Networks) {
		return true, "group network"
	}
	if !ephemeralDiskEqual(ag.EphemeralDisk, bg.EphemeralDisk) {
		return true, "ephemeral disk"
	}
	if !reflect.DeepEqual(ag.Volumes, bg.Volumes) {
		// A running task keeps the volumes it was started with.
		return true, "volumes"
	}
	for _, at := range ag.Tasks {
		bt := bg.LookupTask(at.Name)
		if bt == nil {
			return true, "task " + at.Name + " removed"
		}
		if why := taskDifference(at, bt); why != "" {
			return true, "task " + at.Name + ": " + why
		}
		if !maps.Equal(a.CombinedTaskMeta(group, at.Name), b.CombinedTaskMeta(group, bt.Name)) {
			return true, "task " + at.Name + ": meta"
		}
	}
	return false, ""
}

// taskDifference names the first task field whose change needs a new
// alloc, or "".
func taskDifference(a, b *structs.Task) string {
	switch {
	case a.Driver != b.Driver:
		return "driver"
	case a.User != b.User:
		return "user"
	case a.Leader != b.Leader:
		return "leader"
	case !reflect.DeepEqual(a.Config, b.Config):
		return "config"
	case !maps.Equal(a.Env, b.Env):
		return "env"
	case !reflect.DeepEqual(a.Lifecycle, b.Lifecycle):
		return "lifecycle"
	case !reflect.DeepEqual(a.LogConfig, b.LogConfig):
		return "logs"
	case !reflect.DeepEqual(a.DispatchPayload, b.DispatchPayload):
		return "dispatch payload"
	case !reflect.DeepEqual(a.VolumeMounts, b.VolumeMounts):
		return "volume mounts"
	}
	ar, br := a.Resources, b.Resources
	if ar == nil || br == nil {
		if ar != br {
			return "resources"
		}
		return ""
	}
	switch {
	case ar.CPU != br.CPU:
		return "cpu"
	case ar.Cores != br.Cores:
		return "cores"
	case ar.MemoryMB != br.MemoryMB:
		return "memory"
	case ar.MemoryMaxMB != br.MemoryMaxMB:
		return "memory max"
	case ar.DiskMB != br.DiskMB:
		return "disk"
	case !networksEqual(ar.Networks, br.Networks):
		return "network"
	}
	return ""
}

func networksEqual(a, b structs.Networks) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func ephemeralDiskEqual(a, b *structs.EphemeralDisk) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// inplaceChecker decides, for allocs of an older job version, between
// ignoring them, updating them in place and replacing them. Checks are
// compiled once per pass.
type inplaceChecker struct {
	job    *structs.Job
	jobs   checkList
	groups map[string]checkList
}

func newInplaceChecker(job *structs.Job) *inplaceChecker {
	return &inplaceChecker{job: job, jobs: jobChecks(job), groups: map[string]checkList{}}
}

// decide implements allocUpdateFn. An in-place update keeps the alloc on
// its node, so the node must still be one the new version may use: in
// the job's pool and datacenters, and passing its constraints.
func (c *inplaceChecker) decide(state State, eval *structs.Evaluation, existing *structs.Allocation,
	job *structs.Job, tg *structs.TaskGroup) (ignore, destructive bool, updated *structs.Allocation) {
	if existing.Job == nil {
		// Without the version it was placed with there is nothing to
		// compare; leave it alone rather than churn it.
		return true, false, nil
	}
	if existing.Job.JobModifyIndex == job.JobModifyIndex && existing.Job.CreateIndex == job.CreateIndex {
		return true, false, nil
	}
	if changed, _ := tasksUpdated(existing.Job, job, tg.Name); changed {
		return false, true, nil
	}
	node, err := state.NodeByID(existing.NodeID)
	if err != nil || node == nil {
		return false, true, nil
	}
	if job.NodePool != "" && job.NodePool != structs.NodePoolAll && nodePool(node) != job.NodePool {
		return false, true, nil
	}
	if !matchesAnyDatacenter(job.Datacenters, node.Datacenter) {
		return false, true, nil
	}
	groups, ok := c.groups[tg.Name]
	if !ok {
		groups = groupChecks(tg)
		c.groups[tg.Name] = groups
	}
	for _, l := range []*checkList{&c.jobs, &groups} {
		if firstFailure(l.perClass, node) != "" || firstFailure(l.perNode, node) != "" {
			return false, true, nil
		}
	}
	u := existing.CopySkipJob()
	u.Job = job
	u.EvalID = eval.ID
	return false, false, u
}
