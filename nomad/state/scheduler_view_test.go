package state_test

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/planjudge"
	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/scheduler"
	"github.com/opennomad/nomad/structs"
)

// The scheduler reads state only through scheduler.State, and the plan
// judge through planjudge.State; the store's view must satisfy both.
var (
	_ scheduler.State = (*state.SchedulerView)(nil)
	_ planjudge.State = (*state.SchedulerView)(nil)
)

func TestSchedulerView_Reads(t *testing.T) {
	s, err := state.NewStateStore(nil)
	must.NoError(t, err)
	node := &structs.Node{ID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(),
		Status: structs.NodeStatusReady, SchedulingEligibility: structs.NodeSchedulingEligible}
	must.NoError(t, s.UpsertNode(1, node))
	job := &structs.Job{ID: "web", Namespace: structs.DefaultNamespace, Type: structs.JobTypeService,
		TaskGroups: []*structs.TaskGroup{{Name: "web", Count: 1}}}
	must.NoError(t, s.UpsertJob(2, job))
	eval := &structs.Evaluation{ID: structs.GenerateUUID(), Namespace: job.Namespace, JobID: job.ID,
		Status: structs.EvalStatusPending, Type: job.Type}
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{eval}))
	alloc := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: job.Namespace, JobID: job.ID,
		Job: job, NodeID: node.ID, TaskGroup: "web", EvalID: eval.ID,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending}
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{alloc}))
	d := structs.NewDeployment(job, 50, time.Unix(0, 0).UTC())
	must.NoError(t, s.UpsertDeployment(5, d))

	var v scheduler.State = s.Snapshot().SchedulerView()
	// Writes after the snapshot are invisible to the scheduler.
	must.NoError(t, s.SchedulerSetConfig(6, structs.DefaultSchedulerConfiguration()))

	nodes, err := v.Nodes()
	must.NoError(t, err)
	must.Len(t, 1, nodes)
	n, _ := v.NodeByID(node.ID)
	must.Eq(t, node.ID, n.ID)
	j, _ := v.JobByID(job.Namespace, job.ID)
	must.Eq(t, job.ID, j.ID)
	jv, _ := v.JobByIDAndVersion(job.Namespace, job.ID, 0)
	must.NotNil(t, jv)
	a, _ := v.AllocByID(alloc.ID)
	must.Eq(t, alloc.ID, a.ID)
	byJob, _ := v.AllocsByJob(job.Namespace, job.ID, false)
	must.Len(t, 1, byJob)
	byNode, _ := v.AllocsByNode(node.ID)
	must.Len(t, 1, byNode)
	live, _ := v.AllocsByNodeTerminal(node.ID, false)
	must.Len(t, 1, live)
	e, _ := v.EvalByID(eval.ID)
	must.Eq(t, eval.ID, e.ID)
	ld, _ := v.LatestDeploymentByJobID(job.Namespace, job.ID)
	must.Eq(t, d.ID, ld.ID)
	dd, _ := v.DeploymentByID(d.ID)
	must.Eq(t, d.ID, dd.ID)
	cfg, err := v.SchedulerConfig()
	must.NoError(t, err)
	must.Nil(t, cfg)
	idx, _ := v.LatestIndex()
	must.Eq(t, 5, idx)
	// The newest node or alloc write: the allocs at 4, not the deployment.
	placement, err := s.Snapshot().SchedulerView().PlacementIndex()
	must.NoError(t, err)
	must.Eq(t, 4, placement)
}
