package schedtest

import (
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/opennomad/nomad/structs"
)

// State is a small in-memory cluster state for scheduler tests. Writers
// (Upsert*) bump a Raft-like index; Snapshot returns an immutable view
// that satisfies the scheduler's State interface. It mimics the indexing
// rules of the real state store (versions, create/modify indexes, allocs
// of a purged job) closely enough for the scheduler, nothing more.
type State struct {
	mu   sync.Mutex
	data *data
}

type jobKey struct{ ns, id string }

type data struct {
	index       uint64
	nodes       map[string]*structs.Node
	jobs        map[jobKey]*structs.Job
	jobVersions map[jobKey]map[uint64]*structs.Job
	allocs      map[string]*structs.Allocation
	evals       map[string]*structs.Evaluation
	deployments map[string]*structs.Deployment
	schedConfig *structs.SchedulerConfiguration
}

func (d *data) clone() *data {
	n := *d
	n.nodes = maps.Clone(d.nodes)
	n.jobs = maps.Clone(d.jobs)
	n.jobVersions = make(map[jobKey]map[uint64]*structs.Job, len(d.jobVersions))
	for k, v := range d.jobVersions {
		n.jobVersions[k] = maps.Clone(v)
	}
	n.allocs = maps.Clone(d.allocs)
	n.evals = maps.Clone(d.evals)
	n.deployments = maps.Clone(d.deployments)
	return &n
}

// NewState returns an empty state at index 1.
func NewState() *State {
	return &State{data: &data{
		index:       1,
		nodes:       map[string]*structs.Node{},
		jobs:        map[jobKey]*structs.Job{},
		jobVersions: map[jobKey]map[uint64]*structs.Job{},
		allocs:      map[string]*structs.Allocation{},
		evals:       map[string]*structs.Evaluation{},
		deployments: map[string]*structs.Deployment{},
	}}
}

// write runs fn on a private copy of the data at the next index and then
// publishes it, so snapshots taken earlier never see the change.
func (s *State) write(fn func(d *data, idx uint64)) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.data.clone()
	d.index++
	fn(d, d.index)
	s.data = d
	return d.index
}

// Index returns the latest index.
func (s *State) Index() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data.index
}

// UpsertNode inserts or replaces nodes.
func (s *State) UpsertNode(nodes ...*structs.Node) uint64 {
	return s.write(func(d *data, idx uint64) {
		for _, n := range nodes {
			if old, ok := d.nodes[n.ID]; ok {
				n.CreateIndex = old.CreateIndex
			} else {
				n.CreateIndex = idx
			}
			n.ModifyIndex = idx
			if n.ComputedClass == "" {
				n.ComputeClass()
			}
			d.nodes[n.ID] = n
		}
	})
}

// DeleteNode removes a node.
func (s *State) DeleteNode(id string) uint64 {
	return s.write(func(d *data, _ uint64) { delete(d.nodes, id) })
}

// UpsertJob registers a job. A changed spec becomes a new version, as in
// the real store; CreateIndex survives re-registration.
func (s *State) UpsertJob(j *structs.Job) uint64 {
	return s.write(func(d *data, idx uint64) {
		k := jobKey{j.Namespace, j.ID}
		if old, ok := d.jobs[k]; ok {
			j.CreateIndex = old.CreateIndex
			j.Version = old.Version
			if specChanged(old, j) {
				j.Version = old.Version + 1
			}
		} else {
			j.CreateIndex = idx
			j.Version = 0
		}
		j.ModifyIndex = idx
		j.JobModifyIndex = idx
		d.jobs[k] = j
		if d.jobVersions[k] == nil {
			d.jobVersions[k] = map[uint64]*structs.Job{}
		}
		d.jobVersions[k][j.Version] = j
	})
}

// specChanged ignores the fields the store itself maintains.
func specChanged(a, b *structs.Job) bool {
	ac, bc := a.Copy(), b.Copy()
	for _, c := range []*structs.Job{ac, bc} {
		c.Version, c.CreateIndex, c.ModifyIndex, c.JobModifyIndex = 0, 0, 0, 0
		c.Status, c.StatusDescription, c.Stable, c.SubmitTime = "", "", false, 0
	}
	return !reflect.DeepEqual(ac, bc)
}

// DeleteJob purges a job (its allocs stay, as in the real store).
func (s *State) DeleteJob(ns, id string) uint64 {
	return s.write(func(d *data, _ uint64) {
		delete(d.jobs, jobKey{ns, id})
		delete(d.jobVersions, jobKey{ns, id})
	})
}

// UpsertAllocs inserts or replaces allocs; allocs without a job get the
// registered job attached.
func (s *State) UpsertAllocs(allocs ...*structs.Allocation) uint64 {
	return s.write(func(d *data, idx uint64) {
		for _, a := range allocs {
			upsertAlloc(d, idx, a)
		}
	})
}

func upsertAlloc(d *data, idx uint64, a *structs.Allocation) {
	if old, ok := d.allocs[a.ID]; ok {
		a.CreateIndex = old.CreateIndex
		if a.Job == nil {
			a.Job = old.Job
		}
	} else {
		a.CreateIndex = idx
	}
	if a.Job == nil {
		a.Job = d.jobs[jobKey{a.Namespace, a.JobID}]
	}
	a.ModifyIndex = idx
	a.AllocModifyIndex = idx
	d.allocs[a.ID] = a
	// Link the replaced alloc to its replacement, as the real store does.
	if prev, ok := d.allocs[a.PreviousAllocation]; ok && a.PreviousAllocation != "" && prev.NextAllocation != a.ID {
		p := prev.Copy()
		p.NextAllocation = a.ID
		p.ModifyIndex = idx
		d.allocs[p.ID] = p
	}
}

// UpsertEvals inserts or replaces evals.
func (s *State) UpsertEvals(evals ...*structs.Evaluation) uint64 {
	return s.write(func(d *data, idx uint64) {
		for _, e := range evals {
			if old, ok := d.evals[e.ID]; ok {
				e.CreateIndex = old.CreateIndex
			} else {
				e.CreateIndex = idx
			}
			e.ModifyIndex = idx
			d.evals[e.ID] = e
		}
	})
}

// UpsertDeployment inserts or replaces a deployment.
func (s *State) UpsertDeployment(dep *structs.Deployment) uint64 {
	return s.write(func(d *data, idx uint64) {
		if old, ok := d.deployments[dep.ID]; ok {
			dep.CreateIndex = old.CreateIndex
		} else {
			dep.CreateIndex = idx
		}
		dep.ModifyIndex = idx
		d.deployments[dep.ID] = dep
	})
}

// SetSchedulerConfig stores the cluster scheduler configuration.
func (s *State) SetSchedulerConfig(c *structs.SchedulerConfiguration) uint64 {
	return s.write(func(d *data, idx uint64) {
		c.ModifyIndex = idx
		d.schedConfig = c
	})
}

// ApplyPlanResult commits a plan result the way the plan applier does:
// stops and preemptions are merged into the stored allocs, placements and
// in-place updates are upserted, the deployment and its status updates
// are written. It returns the index of the write.
func (s *State) ApplyPlanResult(job *structs.Job, r *structs.PlanResult) uint64 {
	return s.write(func(d *data, idx uint64) {
		for _, allocs := range r.NodeUpdate {
			for _, stop := range allocs {
				old, ok := d.allocs[stop.ID]
				if !ok {
					continue
				}
				n := old.Copy()
				n.DesiredStatus = stop.DesiredStatus
				n.DesiredDescription = stop.DesiredDescription
				if stop.ClientStatus != "" {
					n.ClientStatus = stop.ClientStatus
				}
				if stop.FollowupEvalID != "" {
					n.FollowupEvalID = stop.FollowupEvalID
				}
				upsertAlloc(d, idx, n)
			}
		}
		for _, allocs := range r.NodePreemptions {
			for _, p := range allocs {
				old, ok := d.allocs[p.ID]
				if !ok {
					continue
				}
				n := old.Copy()
				n.DesiredStatus = structs.AllocDesiredStatusEvict
				n.DesiredDescription = p.DesiredDescription
				n.PreemptedByAllocation = p.PreemptedByAllocation
				upsertAlloc(d, idx, n)
			}
		}
		for _, allocs := range r.NodeAllocation {
			for _, a := range allocs {
				n := a.Copy()
				if n.Job == nil {
					n.Job = job
				}
				upsertAlloc(d, idx, n)
			}
		}
		if dep := r.Deployment; dep != nil {
			dc := dep.Copy()
			if old, ok := d.deployments[dc.ID]; ok {
				dc.CreateIndex = old.CreateIndex
			} else {
				dc.CreateIndex = idx
			}
			dc.ModifyIndex = idx
			d.deployments[dc.ID] = dc
		}
		for _, u := range r.DeploymentUpdates {
			if old, ok := d.deployments[u.DeploymentID]; ok {
				dc := old.Copy()
				dc.Status, dc.StatusDescription, dc.ModifyIndex = u.Status, u.StatusDescription, idx
				d.deployments[dc.ID] = dc
			}
		}
	})
}

// Snapshot returns an immutable view of the current state.
func (s *State) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &Snapshot{d: s.data}
}

// Snapshot is a read-only view of State at one index; it implements the
// scheduler's State interface.
type Snapshot struct {
	d *data

	byNodeOnce sync.Once
	byNode     map[string][]*structs.Allocation

	nodesOnce sync.Once
	nodes     []*structs.Node
}

func (s *Snapshot) nodeAllocs(nodeID string) []*structs.Allocation {
	s.byNodeOnce.Do(func() {
		s.byNode = map[string][]*structs.Allocation{}
		for _, a := range s.d.allocs {
			s.byNode[a.NodeID] = append(s.byNode[a.NodeID], a)
		}
		for _, as := range s.byNode {
			sortAllocs(as)
		}
	})
	return s.byNode[nodeID]
}

// Nodes returns every node sorted by ID, as the real store iterates them.
func (s *Snapshot) Nodes() ([]*structs.Node, error) {
	s.nodesOnce.Do(func() {
		s.nodes = slices.Collect(maps.Values(s.d.nodes))
		slices.SortFunc(s.nodes, func(a, b *structs.Node) int { return compareStrings(a.ID, b.ID) })
	})
	return slices.Clone(s.nodes), nil
}

// NodeByID returns the node or nil.
func (s *Snapshot) NodeByID(id string) (*structs.Node, error) { return s.d.nodes[id], nil }

// JobByID returns the job or nil.
func (s *Snapshot) JobByID(ns, id string) (*structs.Job, error) {
	return s.d.jobs[jobKey{ns, id}], nil
}

// JobByIDAndVersion returns one version of the job or nil.
func (s *Snapshot) JobByIDAndVersion(ns, id string, v uint64) (*structs.Job, error) {
	return s.d.jobVersions[jobKey{ns, id}][v], nil
}

// AllocByID returns the alloc or nil.
func (s *Snapshot) AllocByID(id string) (*structs.Allocation, error) { return s.d.allocs[id], nil }

// AllocsByJob returns the job's allocs sorted by ID.
func (s *Snapshot) AllocsByJob(ns, jobID string, anyCreateIndex bool) ([]*structs.Allocation, error) {
	job := s.d.jobs[jobKey{ns, jobID}]
	var out []*structs.Allocation
	for _, a := range s.d.allocs {
		if a.Namespace != ns || a.JobID != jobID {
			continue
		}
		if !anyCreateIndex && job != nil && a.Job != nil && a.Job.CreateIndex != job.CreateIndex {
			continue
		}
		out = append(out, a)
	}
	sortAllocs(out)
	return out, nil
}

// AllocsByNode returns the node's allocs sorted by ID.
func (s *Snapshot) AllocsByNode(nodeID string) ([]*structs.Allocation, error) {
	return slices.Clone(s.nodeAllocs(nodeID)), nil
}

// AllocsByNodeTerminal returns the node's allocs by terminal status.
func (s *Snapshot) AllocsByNodeTerminal(nodeID string, terminal bool) ([]*structs.Allocation, error) {
	var out []*structs.Allocation
	for _, a := range s.nodeAllocs(nodeID) {
		if a.TerminalStatus() == terminal {
			out = append(out, a)
		}
	}
	return out, nil
}

// EvalByID returns the eval or nil.
func (s *Snapshot) EvalByID(id string) (*structs.Evaluation, error) { return s.d.evals[id], nil }

// LatestDeploymentByJobID returns the job's newest deployment or nil.
func (s *Snapshot) LatestDeploymentByJobID(ns, jobID string) (*structs.Deployment, error) {
	var latest *structs.Deployment
	for _, d := range s.d.deployments {
		if d.Namespace == ns && d.JobID == jobID && (latest == nil || d.CreateIndex > latest.CreateIndex) {
			latest = d
		}
	}
	return latest, nil
}

// DeploymentByID returns the deployment or nil.
func (s *Snapshot) DeploymentByID(id string) (*structs.Deployment, error) {
	return s.d.deployments[id], nil
}

// SchedulerConfig returns the stored configuration or nil.
func (s *Snapshot) SchedulerConfig() (*structs.SchedulerConfiguration, error) {
	return s.d.schedConfig, nil
}

// LatestIndex returns the snapshot's index.
func (s *Snapshot) LatestIndex() (uint64, error) { return s.d.index, nil }

// Allocs returns every alloc sorted by ID, for assertions.
func (s *Snapshot) Allocs() []*structs.Allocation {
	out := slices.Collect(maps.Values(s.d.allocs))
	sortAllocs(out)
	return out
}

// Evals returns every eval sorted by ID, for assertions.
func (s *Snapshot) Evals() []*structs.Evaluation {
	out := slices.Collect(maps.Values(s.d.evals))
	slices.SortFunc(out, func(a, b *structs.Evaluation) int { return compareStrings(a.ID, b.ID) })
	return out
}

func sortAllocs(as []*structs.Allocation) {
	slices.SortFunc(as, func(a, b *structs.Allocation) int { return compareStrings(a.ID, b.ID) })
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
