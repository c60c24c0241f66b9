package command

import (
	"testing"

	"github.com/opennomad/nomad/api"
)

func parameterizedTestJob(id string) *api.Job {
	j := testJob(id, 1, 64)
	j.Type = new(api.JobTypeBatch)
	j.ParameterizedJob = &api.ParameterizedJobConfig{Payload: "optional", MetaRequired: []string{"input"}}
	return j
}

func TestJobDispatch(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name: "dispatch and monitor",
			setup: func(t *testing.T, c testCluster) {
				addNode(t, c)
				registerJob(t, c, parameterizedTestJob("convert"))
			},
			files: map[string]string{"input.txt": "hello"},
			args:  []string{"job", "dispatch", "-meta", "input=a.png", "convert", "{dir}/input.txt"},
			outHas: []string{"Dispatched Job ID = convert/dispatch-", "Evaluation ID     = <id>",
				`==> <time>: Monitoring evaluation "<id>"`, `Evaluation triggered by job "convert/dispatch-`},
		},
		{
			name: "detached",
			setup: func(t *testing.T, c testCluster) {
				registerJob(t, c, parameterizedTestJob("convert"))
			},
			args:   []string{"job", "dispatch", "-detach", "-meta", "input=a", "convert"},
			outHas: []string{"Dispatched Job ID = convert/dispatch-"},
			outNot: []string{"Monitoring"},
		},
		{
			name: "missing meta is the server's error",
			setup: func(t *testing.T, c testCluster) {
				registerJob(t, c, parameterizedTestJob("convert"))
			},
			args:     []string{"job", "dispatch", "convert"},
			wantCode: 1,
			errHas:   []string{"Failed to dispatch job", "required meta keys: [input]"},
		},
		{
			name:     "bad meta flag",
			args:     []string{"job", "dispatch", "-meta", "novalue", "convert"},
			wantCode: 1,
			errHas:   []string{`-meta "novalue" must be key=value`},
		},
	})
}

func TestJobPeriodicForce(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name: "force and monitor",
			setup: func(t *testing.T, c testCluster) {
				addNode(t, c)
				registerJob(t, c, periodicJob("report"))
			},
			args:   []string{"job", "periodic", "force", "report"},
			outHas: []string{`==> <time>: Monitoring evaluation "<id>"`, `Evaluation triggered by job "report/periodic-`},
		},
		{
			name:    "detached",
			setup:   func(t *testing.T, c testCluster) { registerJob(t, c, periodicJob("report")) },
			args:    []string{"job", "periodic", "force", "-detach", "report"},
			wantOut: "Force periodic successful\nEvaluation ID: <id>",
		},
		{
			name:     "not periodic",
			setup:    runningJob("web", 1),
			args:     []string{"job", "periodic", "force", "web"},
			wantCode: 1,
			errHas:   []string{`Error forcing periodic job "web"`, "non-periodic"},
		},
	})
}
