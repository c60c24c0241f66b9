package state

import (
	"github.com/opennomad/nomad/structs"
)

// SchedulerView is a snapshot seen through the read-only, watch-free
// interface the scheduler plans against (scheduler.State) and the plan
// applier judges plans against (planjudge.State); this package imports
// neither, the tests assert the fit. Like the snapshot it wraps it never
// changes, so one Process call, or the judging of one plan, sees one
// consistent state.
type SchedulerView struct {
	snap *StateSnapshot
}

// SchedulerView returns the snapshot's scheduler view.
func (s *StateSnapshot) SchedulerView() *SchedulerView {
	return &SchedulerView{snap: s}
}

// Snapshot returns the snapshot the view reads.
func (v *SchedulerView) Snapshot() *StateSnapshot { return v.snap }

// Nodes returns every node, sorted by ID. The slice and the nodes are
// shared with other readers and must not be modified: the scheduler
// copies the nodes it keeps, so a copy per evaluation would be waste.
func (v *SchedulerView) Nodes() ([]*structs.Node, error) {
	return v.snap.sharedNodes(nil)
}

// NodeByID returns the node or nil.
func (v *SchedulerView) NodeByID(id string) (*structs.Node, error) {
	return v.snap.NodeByID(nil, id)
}

// JobByID returns the job or nil.
func (v *SchedulerView) JobByID(namespace, id string) (*structs.Job, error) {
	return v.snap.JobByID(nil, namespace, id)
}

// JobByIDAndVersion returns one stored version of a job, or nil.
func (v *SchedulerView) JobByIDAndVersion(namespace, id string, version uint64) (*structs.Job, error) {
	return v.snap.JobByIDAndVersion(nil, namespace, id, version)
}

// AllocByID returns the alloc or nil.
func (v *SchedulerView) AllocByID(id string) (*structs.Allocation, error) {
	return v.snap.AllocByID(nil, id)
}

// AllocsByJob returns the job's allocs; see StateStore.AllocsByJob.
func (v *SchedulerView) AllocsByJob(namespace, jobID string, anyCreateIndex bool) ([]*structs.Allocation, error) {
	return v.snap.AllocsByJob(nil, namespace, jobID, anyCreateIndex)
}

// AllocsByNode returns every alloc on the node.
func (v *SchedulerView) AllocsByNode(nodeID string) ([]*structs.Allocation, error) {
	return v.snap.AllocsByNode(nil, nodeID)
}

// AllocsByNodeTerminal returns the node's allocs whose TerminalStatus
// equals terminal; see StateStore.AllocsByNodeTerminal (the live list is
// shared: never modify it).
func (v *SchedulerView) AllocsByNodeTerminal(nodeID string, terminal bool) ([]*structs.Allocation, error) {
	return v.snap.AllocsByNodeTerminal(nil, nodeID, terminal)
}

// EvalByID returns the eval or nil.
func (v *SchedulerView) EvalByID(id string) (*structs.Evaluation, error) {
	return v.snap.EvalByID(nil, id)
}

// LatestDeploymentByJobID returns the job's newest deployment or nil.
func (v *SchedulerView) LatestDeploymentByJobID(namespace, jobID string) (*structs.Deployment, error) {
	return v.snap.LatestDeploymentByJobID(nil, namespace, jobID)
}

// DeploymentByID returns the deployment or nil.
func (v *SchedulerView) DeploymentByID(id string) (*structs.Deployment, error) {
	return v.snap.DeploymentByID(nil, id)
}

// SchedulerConfig returns the cluster scheduler configuration, nil when
// none was ever written.
func (v *SchedulerView) SchedulerConfig() (*structs.SchedulerConfiguration, error) {
	_, c, err := v.snap.SchedulerConfig(nil)
	return c, err
}

// LatestIndex is the Raft index the snapshot reflects.
func (v *SchedulerView) LatestIndex() (uint64, error) {
	return v.snap.LatestIndex()
}

// PlacementIndex is the index of the newest write to nodes or allocs, the
// state a plan's fit depends on; zero when neither was ever written.
func (v *SchedulerView) PlacementIndex() (uint64, error) {
	allocs, err := v.snap.Index(TableAllocs)
	if err != nil {
		return 0, err
	}
	nodes, err := v.snap.Index(TableNodes)
	if err != nil {
		return 0, err
	}
	return max(allocs, nodes), nil
}
