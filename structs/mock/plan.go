package mock

import "github.com/opennomad/nomad/structs"

// SizedAlloc returns a new, pending alloc of the job's first group on
// node that uses cpu MHz and memMB MB and no ports, so that only cpu and
// memory decide whether allocs fit together: the plan judge's and the
// applier's tests reason about fit with it.
func SizedAlloc(job *structs.Job, node *structs.Node, cpu, memMB int64) *structs.Allocation {
	tg := job.TaskGroups[0]
	return &structs.Allocation{
		ID:        structs.GenerateUUID(),
		Namespace: job.Namespace,
		EvalID:    structs.GenerateUUID(),
		Name:      structs.AllocName(job.ID, tg.Name, 0),
		NodeID:    node.ID,
		NodeName:  node.Name,
		JobID:     job.ID,
		Job:       job,
		TaskGroup: tg.Name,
		AllocatedResources: &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{
				tg.Tasks[0].Name: {
					Cpu:    structs.AllocatedCpuResources{CpuShares: cpu},
					Memory: structs.AllocatedMemoryResources{MemoryMB: memMB},
				},
			},
		},
		DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:  structs.AllocClientStatusPending,
		Metrics:       &structs.AllocMetric{},
	}
}

// PlanBuilder assembles a plan: placements, stops and preemptions.
type PlanBuilder struct{ plan *structs.Plan }

// BuildPlan starts from plan (usually an eval's MakePlan).
func BuildPlan(plan *structs.Plan) *PlanBuilder { return &PlanBuilder{plan: plan} }

// Place adds new or updated allocs.
func (b *PlanBuilder) Place(allocs ...*structs.Allocation) *PlanBuilder {
	for _, a := range allocs {
		b.plan.AppendAlloc(a)
	}
	return b
}

// Stop stops allocs as no longer needed.
func (b *PlanBuilder) Stop(allocs ...*structs.Allocation) *PlanBuilder {
	for _, a := range allocs {
		b.plan.AppendStoppedAlloc(a, structs.AllocNotNeeded, "", "")
	}
	return b
}

// Preempt evicts allocs for the alloc named by.
func (b *PlanBuilder) Preempt(by string, allocs ...*structs.Allocation) *PlanBuilder {
	for _, a := range allocs {
		b.plan.AppendPreemptedAlloc(a, by)
	}
	return b
}

// AllAtOnce makes the plan all or nothing.
func (b *PlanBuilder) AllAtOnce() *PlanBuilder {
	b.plan.AllAtOnce = true
	return b
}

// Build returns the plan.
func (b *PlanBuilder) Build() *structs.Plan { return b.plan }
