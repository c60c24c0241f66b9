package schedtest

import (
	"time"

	"github.com/opennomad/nomad/structs"
)

// Job returns a canonicalized service job "web-<n>" with one group "web"
// of 10 allocs, each one exec task asking 500 MHz and 256 MB.
func Job() *structs.Job {
	id := "web-" + NextID()[24:]
	j := &structs.Job{
		Region:      structs.DefaultRegion,
		Namespace:   structs.DefaultNamespace,
		ID:          id,
		Name:        id,
		Type:        structs.JobTypeService,
		Priority:    structs.JobDefaultPriority,
		Datacenters: []string{"dc1"},
		TaskGroups: []*structs.TaskGroup{{
			Name:          "web",
			Count:         10,
			EphemeralDisk: &structs.EphemeralDisk{SizeMB: 150},
			Tasks: []*structs.Task{{
				Name:      "web",
				Driver:    "exec",
				Config:    map[string]interface{}{"command": "/bin/date"},
				Env:       map[string]string{"FOO": "bar"},
				Resources: &structs.Resources{CPU: 500, MemoryMB: 256},
			}},
		}},
		Status: structs.JobStatusPending,
	}
	j.Canonicalize()
	return j
}

// BatchJob returns Job() turned into a batch job.
func BatchJob() *structs.Job {
	return retype(Job(), structs.JobTypeBatch)
}

// SystemJob returns a system job with one group of one exec task.
func SystemJob() *structs.Job {
	j := retype(Job(), structs.JobTypeSystem)
	j.TaskGroups[0].Count = 1
	return j
}

// SysBatchJob returns a sysbatch job with one group of one exec task.
func SysBatchJob() *structs.Job {
	j := retype(Job(), structs.JobTypeSysBatch)
	j.TaskGroups[0].Count = 1
	return j
}

// retype rebuilds the type-dependent defaults of a job for another type.
func retype(j *structs.Job, typ string) *structs.Job {
	j.Type = typ
	for _, tg := range j.TaskGroups {
		tg.RestartPolicy = nil
		tg.ReschedulePolicy = nil
		tg.Migrate = nil
		tg.Update = nil
	}
	j.Canonicalize()
	return j
}

// AllocResources is the AllocatedResources a placement of the group gets
// (without ports or cores), as the scheduler would grant them.
func AllocResources(tg *structs.TaskGroup) *structs.AllocatedResources {
	ar := &structs.AllocatedResources{
		Tasks:          map[string]*structs.AllocatedTaskResources{},
		TaskLifecycles: map[string]*structs.TaskLifecycleConfig{},
	}
	if tg.EphemeralDisk != nil {
		ar.Shared.DiskMB = int64(tg.EphemeralDisk.SizeMB)
	}
	for _, t := range tg.Tasks {
		tr := &structs.AllocatedTaskResources{}
		if t.Resources != nil {
			tr.Cpu.CpuShares = int64(t.Resources.CPU)
			tr.Memory.MemoryMB = int64(t.Resources.MemoryMB)
		}
		ar.Tasks[t.Name] = tr
		ar.TaskLifecycles[t.Name] = t.Lifecycle
	}
	return ar
}

// Alloc returns a running alloc of the job's first group at the name
// index idx on the node.
func Alloc(job *structs.Job, node *structs.Node, idx int) *structs.Allocation {
	return GroupAlloc(job, job.TaskGroups[0].Name, node, idx)
}

// GroupAlloc returns a running alloc of the named group at index idx.
func GroupAlloc(job *structs.Job, group string, node *structs.Node, idx int) *structs.Allocation {
	tg := job.LookupTaskGroup(group)
	return &structs.Allocation{
		ID:                 NextID(),
		Namespace:          job.Namespace,
		EvalID:             NextID(),
		Name:               structs.AllocName(job.ID, group, idx),
		NodeID:             node.ID,
		NodeName:           node.Name,
		JobID:              job.ID,
		Job:                job,
		TaskGroup:          group,
		AllocatedResources: AllocResources(tg),
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusRunning,
	}
}

// Failed marks the alloc failed at the time given, as a client would
// report it: client status failed and every task dead and failed.
func Failed(a *structs.Allocation, at time.Time) *structs.Allocation {
	a.ClientStatus = structs.AllocClientStatusFailed
	a.TaskStates = map[string]*structs.TaskState{}
	for _, t := range a.Job.LookupTaskGroup(a.TaskGroup).Tasks {
		a.TaskStates[t.Name] = &structs.TaskState{
			State: structs.TaskStateDead, Failed: true, StartedAt: at.Add(-time.Minute), FinishedAt: at,
		}
	}
	return a
}

// Complete marks the alloc as successfully finished at the time given.
func Complete(a *structs.Allocation, at time.Time) *structs.Allocation {
	a.ClientStatus = structs.AllocClientStatusComplete
	a.TaskStates = map[string]*structs.TaskState{}
	for _, t := range a.Job.LookupTaskGroup(a.TaskGroup).Tasks {
		a.TaskStates[t.Name] = &structs.TaskState{
			State: structs.TaskStateDead, StartedAt: at.Add(-time.Minute), FinishedAt: at,
		}
	}
	return a
}

// Eval returns a pending eval of the job triggered by the reason given.
func Eval(job *structs.Job, triggeredBy string) *structs.Evaluation {
	return &structs.Evaluation{
		ID:             NextID(),
		Namespace:      job.Namespace,
		Priority:       job.Priority,
		Type:           job.Type,
		TriggeredBy:    triggeredBy,
		JobID:          job.ID,
		JobModifyIndex: job.JobModifyIndex,
		Status:         structs.EvalStatusPending,
	}
}
