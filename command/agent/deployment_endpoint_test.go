package agent

import (
	"net/http"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// The deployment, periodic force and dispatch endpoints of a real dev
// agent, driven by HashiCorp's Go client and by ours. No client runs in
// the agent, so the test registers a node and reports its allocs
// through the server's RPCs, as a client would.

// waitUntil polls cond for up to 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runAllocs reports every pending alloc of the mock job running, its
// task started long enough ago to count as healthy, and returns how many.
func runAllocs(t *testing.T, ra *realAgent, jobID string) int {
	t.Helper()
	var out structs.JobAllocationsResponse
	must.NoError(t, ra.agent.server.RPC("Job.Allocations", &structs.JobSpecificRequest{JobID: jobID}, &out))
	var updates []*structs.Allocation
	for _, a := range out.Allocations {
		if a.ClientStatus != structs.AllocClientStatusPending || a.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		// mock.Job's one task is "web".
		updates = append(updates, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
			TaskStates: map[string]*structs.TaskState{
				"web": {State: structs.TaskStateRunning, StartedAt: time.Now().Add(-time.Hour)},
			}})
	}
	if len(updates) > 0 {
		var reply structs.GenericResponse
		must.NoError(t, ra.agent.server.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: updates}, &reply))
	}
	return len(updates)
}

func TestRealServer_Deployments(t *testing.T) {
	ra := startDevAgent(t)
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)
	var nodeReply structs.NodeUpdateResponse
	must.NoError(t, ra.agent.server.RPC("Node.Register", &structs.NodeRegisterRequest{Node: mock.Node()}, &nodeReply))

	job := mock.Job(mock.JobID("web"), mock.Count(2))
	job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1, HealthCheck: structs.UpdateHealthCheckTaskStates,
		MinHealthyTime: 10 * time.Millisecond, HealthyDeadline: time.Minute, ProgressDeadline: 10 * time.Minute}
	register := func(j *structs.Job) {
		t.Helper()
		var reply structs.JobRegisterResponse
		must.NoError(t, ra.agent.server.RPC("Job.Register", &structs.JobRegisterRequest{Job: j}, &reply))
	}
	register(job.Copy())
	waitUntil(t, "first version placed", func() bool { return runAllocs(t, ra, "web") == 2 })
	v1 := job.Copy()
	v1.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "1"}
	register(v1)

	var latest *nomadapi.Deployment
	waitUntil(t, "the canary of version 1", func() bool {
		latest, _, err = client.Jobs().LatestDeployment("web", nil)
		must.NoError(t, err)
		return latest != nil && latest.JobVersion == 1 && len(latest.TaskGroups["web"].PlacedCanaries) == 1
	})
	must.Eq(t, "running", latest.Status)

	list, qm, err := client.Deployments().List(nil)
	must.NoError(t, err)
	must.Len(t, 2, list)
	must.Positive(t, qm.LastIndex)
	byJob, _, err := client.Jobs().Deployments("web", false, nil)
	must.NoError(t, err)
	must.Len(t, 2, byJob)
	info, _, err := client.Deployments().Info(latest.ID, nil)
	must.NoError(t, err)
	must.Eq(t, latest.ID, info.ID)
	allocs, _, err := client.Deployments().Allocations(latest.ID, nil)
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	_, _, err = client.Deployments().Info("nope", nil)
	must.ErrorContains(t, err, "404")

	// Promotion needs a healthy canary: 400 with the reason until then.
	_, _, err = client.Deployments().PromoteAll(latest.ID, nil)
	must.ErrorContains(t, err, "healthy allocations")
	runAllocs(t, ra, "web")
	waitUntil(t, "the canary judged healthy", func() bool {
		d, _, err := client.Deployments().Info(latest.ID, nil)
		must.NoError(t, err)
		return d.TaskGroups["web"].HealthyAllocs == 1
	})
	upd, wm, err := client.Deployments().PromoteAll(latest.ID, nil)
	must.NoError(t, err)
	must.NotEq(t, "", upd.EvalID)
	must.Positive(t, wm.LastIndex)

	// Pause, resume and fail with our client.
	ours, err := api.NewClient(&api.Config{Address: ra.base})
	must.NoError(t, err)
	paused, _, err := ours.Deployments().Pause(latest.ID, true, nil)
	must.NoError(t, err)
	must.Eq(t, "", paused.EvalID)
	d, _, err := ours.Deployments().Info(latest.ID, nil)
	must.NoError(t, err)
	must.Eq(t, api.DeploymentStatusPaused, d.Status)
	_, _, err = ours.Deployments().Pause(latest.ID, false, nil)
	must.NoError(t, err)
	failed, _, err := ours.Deployments().Fail(latest.ID, nil)
	must.NoError(t, err)
	must.NotEq(t, "", failed.EvalID)
	_, _, err = ours.Deployments().Fail(latest.ID, nil)
	must.ErrorContains(t, err, "only an active deployment")

	// A body naming another deployment is refused.
	resp, body := ra.do("PUT", "/v1/deployment/pause/"+latest.ID, `{"DeploymentID": "other", "Pause": true}`)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "Deployment ID does not match", body)

	// A job without deployments answers null, not 404.
	_, body = ra.do("GET", "/v1/job/none/deployment", "")
	must.Eq(t, "null\n", body)
}

func TestRealServer_PeriodicForceAndDispatch(t *testing.T) {
	ra := startDevAgent(t)
	client, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)

	periodic := nomadapi.NewBatchJob("nightly", "nightly", "global", 50)
	periodic.Datacenters = []string{"dc1"}
	periodic.Periodic = &nomadapi.PeriodicConfig{Enabled: new(true), Spec: new("0 3 * * *"), SpecType: new("cron")}
	task := nomadapi.NewTask("run", "raw_exec").SetConfig("command", "/bin/true")
	periodic.AddTaskGroup(nomadapi.NewTaskGroup("run", 1).AddTask(task))
	_, _, err = client.Jobs().Register(periodic, nil)
	must.NoError(t, err)

	evalID, wm, err := client.Jobs().PeriodicForce("nightly", nil)
	must.NoError(t, err)
	must.NotEq(t, "", evalID)
	must.Positive(t, wm.LastIndex)
	eval, _, err := client.Evaluations().Info(evalID, nil)
	must.NoError(t, err)
	must.StrHasPrefix(t, "nightly/periodic-", eval.JobID)
	_, _, err = client.Jobs().PeriodicForce("nope", nil)
	must.ErrorContains(t, err, "404")

	param := nomadapi.NewBatchJob("convert", "convert", "global", 50)
	param.Datacenters = []string{"dc1"}
	param.ParameterizedJob = &nomadapi.ParameterizedJobConfig{Payload: "optional", MetaRequired: []string{"input"}}
	param.AddTaskGroup(nomadapi.NewTaskGroup("run", 1).AddTask(nomadapi.NewTask("run", "raw_exec").SetConfig("command", "/bin/true")))
	_, _, err = client.Jobs().Register(param, nil)
	must.NoError(t, err)
	out, _, err := client.Jobs().Dispatch("convert", map[string]string{"input": "a.png"}, []byte("data"), "", nil)
	must.NoError(t, err)
	must.StrHasPrefix(t, "convert/dispatch-", out.DispatchedJobID)
	must.NotEq(t, "", out.EvalID)
	child, _, err := client.Jobs().Info(out.DispatchedJobID, nil)
	must.NoError(t, err)
	must.Eq(t, "a.png", child.Meta["input"])
	must.Eq(t, []byte("data"), child.Payload)

	_, _, err = client.Jobs().Dispatch("convert", nil, nil, "", nil)
	must.ErrorContains(t, err, "400")
	must.True(t, strings.Contains(err.Error(), "required meta keys"), must.Sprint(err))
}
