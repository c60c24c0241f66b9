package command

import (
	"fmt"
	"path"
	"sort"

	"github.com/opennomad/nomad/api"
)

// The fake agent's scheduler: deliberately simple (first fit on memory),
// just enough that a registration leads to allocations or to an honest
// placement failure, the way the real servers answer. Cases that need a
// particular outcome script their own steps instead.

// defaultSchedule processes an evaluation in one step.
func defaultSchedule(f *fakeAgent, ev *api.Evaluation) []func() {
	return []func(){func() { f.processEval(ev.ID) }}
}

// processEval reconciles the evaluation's job: stops what a stopped job
// still runs, places missing allocations, records failures with a blocked
// evaluation, and completes the evaluation.
func (f *fakeAgent) processEval(evalID string) {
	ev := f.evals[evalID]
	job := f.currentJob(ev.Namespace, ev.JobID)
	failed := map[string]*api.AllocationMetric{}
	queued := map[string]int{}
	if job != nil {
		stopped := job.Stop != nil && *job.Stop
		for _, tg := range job.TaskGroups {
			var live []*api.Allocation
			for _, a := range f.jobAllocs(ev.Namespace, ev.JobID) {
				if a.TaskGroup == deref(tg.Name) && !allocTerminal(a.DesiredStatus, a.ClientStatus) {
					live = append(live, a)
				}
			}
			want := derefInt(tg.Count)
			if stopped {
				want = 0
			}
			for i := want; i < len(live); i++ {
				f.updateAlloc(live[i].ID, func(a *api.Allocation) {
					a.DesiredStatus, a.DesiredDescription = api.AllocDesiredStatusStop, "alloc not needed due to job update"
					a.ClientStatus = api.AllocClientStatusComplete
					a.EvalID = evalID
				})
			}
			for i := len(live); i < want; i++ {
				node, metric := f.pickNode(job, tg)
				if node == nil {
					if prev, ok := failed[deref(tg.Name)]; ok {
						prev.CoalescedFailures++
					} else {
						failed[deref(tg.Name)] = metric
					}
					queued[deref(tg.Name)]++
					continue
				}
				f.placeAlloc(job, tg, i, node, evalID, metric)
			}
		}
	}
	blockedID := ""
	if len(failed) > 0 {
		blocked := &api.Evaluation{
			ID: f.nextID("eval"), Namespace: ev.Namespace, Priority: ev.Priority, Type: ev.Type,
			TriggeredBy: "queued-allocs", JobID: ev.JobID, Status: api.EvalStatusBlocked,
			StatusDescription: "created to place remaining allocations", PreviousEval: ev.ID,
			FailedTGAllocs: failed, QueuedAllocations: queued,
		}
		blocked.CreateIndex = f.bump()
		blocked.ModifyIndex, blocked.CreateTime, blocked.ModifyTime = blocked.CreateIndex, f.now.UnixNano(), f.now.UnixNano()
		f.evals[blocked.ID] = blocked
		blockedID = blocked.ID
	}
	f.updateEval(evalID, func(e *api.Evaluation) {
		e.Status = api.EvalStatusComplete
		if len(failed) > 0 {
			e.FailedTGAllocs, e.BlockedEval, e.QueuedAllocations = failed, blockedID, queued
		}
	})
}

// pickNode returns the first node with room for the group, or nil and the
// metric that explains why there was none.
func (f *fakeAgent) pickNode(job *api.Job, tg *api.TaskGroup) (*api.Node, *api.AllocationMetric) {
	pool := deref(job.NodePool)
	metric := &api.AllocationMetric{NodePool: pool, NodesAvailable: map[string]int{}}
	for _, dc := range job.Datacenters {
		if dc != "*" {
			metric.NodesAvailable[dc] = 0
		}
	}
	ask := groupMemory(tg)
	for _, n := range f.sortedNodes() {
		if n.NodePool != pool {
			continue
		}
		metric.NodesInPool++
		if n.Status != api.NodeStatusReady || n.SchedulingEligibility != api.NodeSchedulingEligible || !inDatacenters(n, job) {
			continue
		}
		metric.NodesAvailable[n.Datacenter]++
		metric.NodesEvaluated++
		if f.freeMemory(n) < ask {
			metric.NodesExhausted++
			if metric.DimensionExhausted == nil {
				metric.DimensionExhausted = map[string]int{}
			}
			metric.DimensionExhausted["memory"]++
			continue
		}
		return n, metric
	}
	return nil, metric
}

func (f *fakeAgent) sortedNodes() []*api.Node {
	out := make([]*api.Node, 0, len(f.nodes))
	for _, n := range f.nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func inDatacenters(n *api.Node, job *api.Job) bool {
	for _, dc := range job.Datacenters {
		if ok, _ := path.Match(dc, n.Datacenter); ok {
			return true
		}
	}
	return false
}

// groupMemory is the memory a group asks for, in MB.
func groupMemory(tg *api.TaskGroup) int64 {
	var mb int64
	for _, t := range tg.Tasks {
		if t.Resources != nil && t.Resources.MemoryMB != nil {
			mb += int64(*t.Resources.MemoryMB)
		}
	}
	return mb
}

// freeMemory is a node's memory not held by live allocations.
func (f *fakeAgent) freeMemory(n *api.Node) int64 {
	free := n.NodeResources.Memory.MemoryMB
	for _, a := range f.allocs {
		if a.NodeID == n.ID && !allocTerminal(a.DesiredStatus, a.ClientStatus) && a.AllocatedResources != nil {
			for _, t := range a.AllocatedResources.Tasks {
				free -= t.Memory.MemoryMB
			}
		}
	}
	return free
}

// placeAlloc creates a pending allocation of the group on node.
func (f *fakeAgent) placeAlloc(job *api.Job, tg *api.TaskGroup, index int, node *api.Node, evalID string, metric *api.AllocationMetric) *api.Allocation {
	res := &api.AllocatedResources{Tasks: map[string]*api.AllocatedTaskResources{}}
	if tg.EphemeralDisk != nil && tg.EphemeralDisk.SizeMB != nil {
		res.Shared.DiskMB = int64(*tg.EphemeralDisk.SizeMB)
	}
	for _, t := range tg.Tasks {
		tr := &api.AllocatedTaskResources{}
		if t.Resources != nil {
			tr.Cpu.CpuShares = int64(derefInt(t.Resources.CPU))
			tr.Memory.MemoryMB = int64(derefInt(t.Resources.MemoryMB))
		}
		res.Tasks[t.Name] = tr
	}
	idx := f.bump()
	a := &api.Allocation{
		ID: f.nextID("alloc"), Namespace: deref(job.Namespace), EvalID: evalID,
		Name:   fmt.Sprintf("%s.%s[%d]", jobID(job), deref(tg.Name), index),
		NodeID: node.ID, NodeName: node.Name, JobID: jobID(job), Job: job, TaskGroup: deref(tg.Name),
		AllocatedResources: res, Metrics: metric,
		DesiredStatus: api.AllocDesiredStatusRun, ClientStatus: api.AllocClientStatusPending,
		CreateIndex: idx, ModifyIndex: idx, AllocModifyIndex: idx, CreateTime: f.now.UnixNano(), ModifyTime: f.now.UnixNano(),
	}
	f.allocs[a.ID] = a
	return a
}

// drainSteps moves a node's live allocations away: mark them for
// migration, stop them and place replacements elsewhere, then complete the
// drain. A forced drain skips the marking.
func (f *fakeAgent) drainSteps(nodeID string, force bool) []func() {
	live := func() []*api.Allocation {
		var out []*api.Allocation
		for _, a := range f.allocs {
			if a.NodeID == nodeID && !allocTerminal(a.DesiredStatus, a.ClientStatus) {
				out = append(out, a)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
		return out
	}
	var steps []func()
	if !force {
		steps = append(steps, func() {
			for _, a := range live() {
				f.updateAlloc(a.ID, func(a *api.Allocation) { a.DesiredTransition.Migrate = new(true) })
			}
		})
	}
	steps = append(steps,
		func() {
			for _, a := range live() {
				f.updateAlloc(a.ID, func(a *api.Allocation) {
					a.DesiredStatus, a.DesiredDescription = api.AllocDesiredStatusStop, "alloc is being migrated"
				})
			}
		},
		func() {
			for _, a := range f.allocs {
				if a.NodeID != nodeID || a.ClientStatus != api.AllocClientStatusRunning && a.ClientStatus != api.AllocClientStatusPending {
					continue
				}
				f.updateAlloc(a.ID, func(a *api.Allocation) { a.ClientStatus = api.AllocClientStatusComplete })
				if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil {
					if node, metric := f.pickNode(a.Job, tg); node != nil {
						f.placeAlloc(a.Job, tg, 0, node, a.EvalID, metric)
					}
				}
			}
		},
		func() {
			f.updateNode(nodeID, func(n *api.Node) {
				n.DrainStrategy, n.Drain = nil, false
				n.LastDrain = &api.DrainMetadata{Status: api.DrainStatusComplete, UpdatedAt: f.now}
			})
		},
	)
	return steps
}

// defaultPlan answers a plan like the servers would for the two simple
// cases: a new job (everything added and placed) or an unchanged one.
func defaultPlan(f *fakeAgent, job *api.Job) *api.JobPlanResponse {
	job.Canonicalize()
	prev := f.currentJob(deref(job.Namespace), jobID(job))
	resp := &api.JobPlanResponse{
		Annotations: &api.PlanAnnotations{DesiredTGUpdates: map[string]*api.DesiredUpdates{}},
		Diff:        &api.JobDiff{Type: api.DiffTypeNone, ID: jobID(job)},
	}
	if prev == nil {
		resp.Diff.Type = api.DiffTypeAdded
	} else {
		resp.JobModifyIndex = derefUint64(prev.JobModifyIndex)
	}
	for _, tg := range job.TaskGroups {
		name, count := deref(tg.Name), uint64(derefInt(tg.Count))
		gd := &api.TaskGroupDiff{Type: api.DiffTypeNone, Name: name}
		if prev == nil {
			gd.Type = api.DiffTypeAdded
			gd.Updates = map[string]uint64{"create": count}
			resp.Annotations.DesiredTGUpdates[name] = &api.DesiredUpdates{Place: count}
			if len(job.Datacenters) == 0 {
				job.Datacenters = []string{"*"}
			}
			if deref(job.NodePool) == "" {
				job.NodePool = new("default")
			}
			if node, metric := f.pickNode(job, tg); node == nil {
				metric.CoalescedFailures = int(count) - 1
				if resp.FailedTGAllocs == nil {
					resp.FailedTGAllocs = map[string]*api.AllocationMetric{}
				}
				resp.FailedTGAllocs[name] = metric
			}
		} else {
			gd.Updates = map[string]uint64{"ignore": count}
			resp.Annotations.DesiredTGUpdates[name] = &api.DesiredUpdates{Ignore: count}
		}
		for _, t := range tg.Tasks {
			td := &api.TaskDiff{Type: gd.Type, Name: t.Name}
			if prev == nil {
				td.Annotations = []string{"forces create"}
			}
			gd.Tasks = append(gd.Tasks, td)
		}
		resp.Diff.TaskGroups = append(resp.Diff.TaskGroups, gd)
	}
	return resp
}
