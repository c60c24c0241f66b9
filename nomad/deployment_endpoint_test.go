package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/state"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// deployedJob registers a service job of count 2 whose update block
// rolls one alloc at a time with canaries, runs its first version and
// registers a second one, and returns the job and the second version's
// deployment, waiting for promotion.
func deployedJob(t *testing.T, s *Server, healthCheck string) (*structs.Job, *structs.Deployment) {
	t.Helper()
	registerNode(t, s, mock.Node())
	job := mock.Job(mock.Count(2))
	job.TaskGroups[0].Update = &structs.UpdateStrategy{
		MaxParallel: 1, Canary: 1, HealthCheck: healthCheck,
		MinHealthyTime: 10 * time.Millisecond, HealthyDeadline: time.Minute, ProgressDeadline: 10 * time.Minute,
	}
	registerJob(t, s, job.Copy())
	for _, a := range waitForLive(t, s, job, 2) {
		updateAllocs(t, s, runningUpdate(a, time.Now()))
	}
	v1 := job.Copy()
	v1.TaskGroups[0].Tasks[0].Env = map[string]string{"VERSION": "1"}
	registerJob(t, s, v1)
	waitForLive(t, s, job, 3) // two old, one canary
	d := waitForDeployment(t, s, job, 1, structs.DeploymentStatusRunning)
	return job, d
}

// canary returns the deployment's one placed canary.
func canary(t *testing.T, s *Server, d *structs.Deployment) *structs.Allocation {
	t.Helper()
	var reply structs.AllocListResponse
	must.NoError(t, s.RPC("Deployment.Allocations", &structs.DeploymentSpecificRequest{DeploymentID: d.ID}, &reply))
	must.Len(t, 1, reply.Allocations)
	a, err := s.State().AllocByID(nil, reply.Allocations[0].ID)
	must.NoError(t, err)
	must.True(t, a.DeploymentStatus != nil && a.DeploymentStatus.Canary)
	return a
}

func TestDeploymentEndpoint_ReadsAndPromote(t *testing.T) {
	s := newPipelineServer(t, 2, nil)
	job, d := deployedJob(t, s, structs.UpdateHealthCheckTaskStates)

	var list structs.DeploymentListResponse
	must.NoError(t, s.RPC("Deployment.List", &structs.DeploymentListRequest{}, &list))
	must.Len(t, 2, list.Deployments)
	must.Eq(t, d.ID, list.Deployments[0].ID, must.Sprint("newest first"))
	must.Positive(t, list.Index)
	must.NoError(t, s.RPC("Job.Deployments", &structs.JobSpecificRequest{JobID: job.ID}, &list))
	must.Len(t, 2, list.Deployments)
	var one structs.SingleDeploymentResponse
	must.NoError(t, s.RPC("Job.LatestDeployment", &structs.JobSpecificRequest{JobID: job.ID}, &one))
	must.Eq(t, d.ID, one.Deployment.ID)
	must.NoError(t, s.RPC("Deployment.GetDeployment", &structs.DeploymentSpecificRequest{DeploymentID: d.ID}, &one))
	must.Eq(t, d.ID, one.Deployment.ID)
	must.NoError(t, s.RPC("Deployment.GetDeployment", &structs.DeploymentSpecificRequest{DeploymentID: "nope"}, &one))
	must.Nil(t, one.Deployment)

	// An unhealthy canary cannot be promoted; a healthy one can.
	var resp structs.DeploymentUpdateResponse
	err := s.RPC("Deployment.Promote", &structs.DeploymentPromoteRequest{DeploymentID: d.ID, All: true}, &resp)
	must.ErrorContains(t, err, "healthy allocations")
	c := canary(t, s, d)
	updateAllocs(t, s, runningUpdate(c, time.Now()))
	waitForState(t, s, func(ws memdb.WatchSet, store *state.StateStore) (bool, string) {
		dep, err := store.DeploymentByID(ws, d.ID)
		must.NoError(t, err)
		st := dep.TaskGroups["web"]
		return st.HealthyAllocs == 1, fmt.Sprintf("%d healthy", st.HealthyAllocs)
	})
	must.NoError(t, s.RPC("Deployment.Promote", &structs.DeploymentPromoteRequest{DeploymentID: d.ID, All: true}, &resp))
	must.NotEq(t, "", resp.EvalID)
	must.Positive(t, resp.DeploymentModifyIndex)
	dep, err := s.State().DeploymentByID(nil, d.ID)
	must.NoError(t, err)
	must.True(t, dep.TaskGroups["web"].Promoted)
}

func TestDeploymentEndpoint_PauseFailAndManualHealth(t *testing.T) {
	s := newPipelineServer(t, 2, nil)
	_, d := deployedJob(t, s, structs.UpdateHealthCheckManual)

	var resp structs.DeploymentUpdateResponse
	must.NoError(t, s.RPC("Deployment.Pause", &structs.DeploymentPauseRequest{DeploymentID: d.ID, Pause: true}, &resp))
	must.Eq(t, "", resp.EvalID, must.Sprint("pausing needs no eval"))
	waitForDeployment(t, s, &structs.Job{Namespace: d.Namespace, ID: d.JobID}, 1, structs.DeploymentStatusPaused)
	must.NoError(t, s.RPC("Deployment.Pause", &structs.DeploymentPauseRequest{DeploymentID: d.ID, Pause: false}, &resp))
	must.NotEq(t, "", resp.EvalID, must.Sprint("resuming continues the roll-out"))

	c := canary(t, s, d)
	must.NoError(t, s.RPC("Deployment.SetAllocHealth", &structs.DeploymentAllocHealthRequest{
		DeploymentID: d.ID, HealthyAllocationIDs: []string{c.ID},
	}, &resp))
	got, err := s.State().AllocByID(nil, c.ID)
	must.NoError(t, err)
	must.True(t, got.DeploymentStatus.IsHealthy())

	must.NoError(t, s.RPC("Deployment.Fail", &structs.DeploymentFailRequest{DeploymentID: d.ID}, &resp))
	dep, err := s.State().DeploymentByID(nil, d.ID)
	must.NoError(t, err)
	must.Eq(t, structs.DeploymentStatusFailed, dep.Status)
	must.Eq(t, structs.DeploymentStatusDescriptionFailedByUser, dep.StatusDescription)

	cases := []struct {
		name   string
		method string
		req    interface{}
		code   int
		msg    string
	}{
		{"fail a failed deployment", "Deployment.Fail", &structs.DeploymentFailRequest{DeploymentID: d.ID}, 400, "only an active deployment"},
		{"unknown deployment", "Deployment.Pause", &structs.DeploymentPauseRequest{DeploymentID: "nope"}, 404, "deployment not found"},
		{"no deployment ID", "Deployment.Fail", &structs.DeploymentFailRequest{}, 400, "missing deployment ID"},
		{"promote nothing", "Deployment.Promote", &structs.DeploymentPromoteRequest{DeploymentID: d.ID}, 400, "at least one task group"},
		{"health of nothing", "Deployment.SetAllocHealth", &structs.DeploymentAllocHealthRequest{DeploymentID: d.ID}, 400, "at least one"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.RPC(tc.method, tc.req, &resp)
			code, msg, ok := structs.ErrorCode(err)
			must.True(t, ok, must.Sprintf("%v", err))
			must.Eq(t, tc.code, code)
			must.StrContains(t, msg, tc.msg)
		})
	}
}
