package command

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

func testDeployment(jobID, status, desc string) api.Deployment {
	return api.Deployment{
		ID: "d0d0d0d0-1111-4000-8000-000000000001", Namespace: api.DefaultNamespace, JobID: jobID,
		Status: status, StatusDescription: desc,
		TaskGroups: map[string]*api.DeploymentState{"web": {
			DesiredTotal: 2, PlacedAllocs: 2, HealthyAllocs: 2, ProgressDeadline: 10 * time.Minute,
			RequireProgressBy: fakeEpoch.Add(10 * time.Minute),
		}},
	}
}

func TestFormatDeploymentGroups(t *testing.T) {
	cases := []struct {
		name string
		tgs  map[string]*api.DeploymentState
		want string
	}{
		{"plain", map[string]*api.DeploymentState{"web": {DesiredTotal: 3, PlacedAllocs: 2, HealthyAllocs: 1}},
			"Task Group  Desired  Placed  Healthy  Unhealthy\nweb         3        2       1        0"},
		{"canaries, auto revert and a deadline not yet set", map[string]*api.DeploymentState{
			"api": {AutoRevert: true, DesiredTotal: 3, DesiredCanaries: 1, PlacedAllocs: 1, ProgressDeadline: time.Minute},
			"web": {DesiredTotal: 2, PlacedAllocs: 2, HealthyAllocs: 2},
		}, "Task Group  Auto Revert  Promoted  Desired  Canaries  Placed  Healthy  Unhealthy  Progress Deadline\n" +
			"api         true         false     3        1         1       0        0          N/A\n" +
			"web         false        N/A       2        0         2       2        0          N/A"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := formatDeploymentGroups(&api.Deployment{TaskGroups: tc.tgs})
			if got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// withDeployment is a scheduling step that puts the eval into a running
// deployment of its job.
func withDeployment(f *fakeAgent, ev *api.Evaluation) {
	d := testDeployment(ev.JobID, api.DeploymentStatusRunning, "Deployment is running")
	f.setDeployment(d)
	f.updateEval(ev.ID, func(e *api.Evaluation) { e.DeploymentID = d.ID })
}

// deploymentEnds is a step that ends the deployment with status.
func deploymentEnds(status, desc string) func(f *fakeAgent, ev *api.Evaluation) {
	return func(f *fakeAgent, ev *api.Evaluation) {
		d := *f.latestDeployment(ev.Namespace, ev.JobID)
		d.Status, d.StatusDescription = status, desc
		f.setDeployment(d)
	}
}

func TestJobRunFollowsTheDeployment(t *testing.T) {
	const hcl = "job.nomad.hcl"
	files := map[string]string{hcl: testJobHCL("web", 2, 256)}
	runCases(t, []cmdCase{
		{
			name:     "successful",
			fakeOnly: true,
			setup: func(t *testing.T, c testCluster) {
				addNode(t, c)
				c.fake().schedule = scripted(withDeployment, placeAll, completeEval(nil),
					deploymentEnds(api.DeploymentStatusSuccessful, "Deployment completed successfully"))
			},
			files: files,
			args:  []string{"job", "run", "{dir}/" + hcl},
			wantOut: `==> <time>: Monitoring evaluation "<id>"
    <time>: Evaluation triggered by job "web"
    <time>: Evaluation within deployment: "<id>"
    <time>: Allocation "<id>" created: node "<id>", group "web"
    <time>: Allocation "<id>" created: node "<id>", group "web"
    <time>: Evaluation status changed: "pending" -> "complete"
==> <time>: Evaluation "<id>" finished with status "complete"
==> <time>: Monitoring deployment "<id>"
    <time>: Deployment "<id>" running: Deployment is running
  ✓ Deployment "<id>" successful

    <time>
    ID          = <id>
    Job ID      = web
    Job Version = 0
    Status      = successful
    Description = Deployment completed successfully

    Deployed
    Task Group  Desired  Placed  Healthy  Unhealthy  Progress Deadline
    web         2        2       2        0          <time>`,
		},
		{
			name:     "failed: exit 1",
			fakeOnly: true,
			setup: func(t *testing.T, c testCluster) {
				addNode(t, c)
				c.fake().schedule = scripted(withDeployment, placeAll, completeEval(nil),
					deploymentEnds(api.DeploymentStatusFailed, "Failed due to progress deadline"))
			},
			files:    files,
			args:     []string{"job", "run", "{dir}/" + hcl},
			wantCode: 1,
			outHas:   []string{`  ! Deployment "<id>" failed`, "Description = Failed due to progress deadline"},
		},
		{
			name:     "detached: no monitoring at all",
			fakeOnly: true,
			setup: func(t *testing.T, c testCluster) {
				addNode(t, c)
				c.fake().schedule = scripted(withDeployment, placeAll, completeEval(nil))
			},
			files:  files,
			args:   []string{"job", "run", "-detach", "{dir}/" + hcl},
			outNot: []string{"Monitoring deployment"},
		},
	})
}

func TestJobStatusShowsTheLatestDeployment(t *testing.T) {
	runCases(t, []cmdCase{{
		name:     "latest deployment",
		fakeOnly: true,
		setup: func(t *testing.T, c testCluster) {
			runningJob("web", 2)(t, c)
			c.fake().setDeployment(testDeployment("web", api.DeploymentStatusSuccessful, "Deployment completed successfully"))
		},
		args: []string{"job", "status", "web"},
		outHas: []string{`Latest Deployment
ID          = <id>
Status      = successful
Description = Deployment completed successfully

Deployed
Task Group  Desired  Placed  Healthy  Unhealthy  Progress Deadline
web         2        2       2        0          <time>

Allocations`},
	}})
}
