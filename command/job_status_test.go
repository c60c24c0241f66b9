package command

import (
	"encoding/json"
	"testing"

	"github.com/opennomad/nomad/api"
)

// runningJob registers a job with count allocations on one node and
// waits for it to be scheduled.
func runningJob(id string, count int) func(t *testing.T, c testCluster) {
	return func(t *testing.T, c testCluster) {
		c.AddNode(t, &api.Node{Name: "node-1"})
		registerJob(t, c, testJob(id, count, 256))
		c.Settle(t)
	}
}

func periodicJob(id string) *api.Job {
	j := testJob(id, 1, 64)
	j.Type = new(api.JobTypeBatch)
	j.Periodic = &api.PeriodicConfig{Spec: new("*/15 * * * *"), TimeZone: new("UTC")}
	return j
}

func TestJobStatus(t *testing.T) {
	runCases(t, []cmdCase{
		{name: "no jobs", args: []string{"job", "status"}, wantOut: "No running jobs"},
		{
			name: "list",
			setup: func(t *testing.T, c testCluster) {
				runningJob("web", 1)(t, c)
				registerJob(t, c, periodicJob("report"))
			},
			args: []string{"status"},
			wantOut: `ID      Type            Priority  Status   Submit Date
report  batch/periodic  50        running  <time>
web     service         50        running  <time>`,
		},
		{
			name:  "list across namespaces adds the column",
			setup: runningJob("web", 1),
			args:  []string{"job", "status", "-namespace=*"},
			wantOut: `ID   Namespace  Type     Priority  Status   Submit Date
web  default    service  50        running  <time>`,
		},
		{
			// fakeOnly: a real client would have started the allocations.
			name:     "one job: attributes, summary and allocations",
			fakeOnly: true,
			setup:    runningJob("web", 2),
			args:     []string{"job", "status", "web"},
			wantOut: `ID            = web
Name          = web
Submit Date   = <time>
Type          = service
Priority      = 50
Datacenters   = dc1
Namespace     = default
Node Pool     = default
Status        = running
Periodic      = false
Parameterized = false

Summary
Task Group  Queued  Starting  Running  Failed  Complete  Lost  Unknown
web         0       2         0        0       0         0     0

Allocations
ID        Node ID   Task Group  Version  Desired  Status   Created               Modified
<id>  <id>  web         0        run      pending  <time>  <time>
<id>  <id>  web         0        run      pending  <time>  <time>`,
		},
		{
			name:   "a unique prefix finds the job; -short shows the attributes only",
			setup:  runningJob("web", 1),
			args:   []string{"job", "status", "-short", "we"},
			outHas: []string{"ID            = web\n"},
			outNot: []string{"Summary", "Allocations"},
		},
		{
			name: "a job waiting for capacity shows why",
			setup: func(t *testing.T, c testCluster) {
				registerJob(t, c, testJob("web", 3, 256))
				c.Settle(t)
			},
			args: []string{"job", "status", "-evals", "web"},
			outHas: []string{
				"Summary\nTask Group  Queued  Starting  Running  Failed  Complete  Lost  Unknown\nweb         3       0         0        0       0         0     0",
				// The fake also says no node is available in datacenter dc1.
				"Placement Failure\nTask Group \"web\" (failed to place 3 allocations):\n",
				`
  * Node pool "default" has no nodes
  * No nodes were eligible for evaluation
  Why: No ready, eligible node exists`,
				"Evaluations\nID        Priority  Triggered By   Status    Placement Failures\n<id>  50        queued-allocs  blocked   true\n<id>  50        job-register   complete  true",
				"Allocations\nNo allocations placed",
			},
		},
		{
			name: "periodic job: next launch and children",
			setup: func(t *testing.T, c testCluster) {
				registerJob(t, c, periodicJob("report"))
			},
			args: []string{"job", "status", "report"},
			outHas: []string{
				"Periodic             = true\n",
				"Next Periodic Launch = <time> (15m0s from now)",
				"Children Job Summary\nPending  Running  Dead\n0        0        0",
				"Previously Launched Jobs\nNo instances of the job",
			},
		},
		{
			name: "ambiguous prefix lists the matches",
			setup: func(t *testing.T, c testCluster) {
				registerJob(t, c, testJob("web", 1, 64))
				registerJob(t, c, testJob("worker", 1, 64))
			},
			args:     []string{"job", "status", "w"},
			wantCode: 1,
			errHas:   []string{"Prefix matched multiple jobs\n\nID      Type     Priority  Status   Submit Date\nweb ", "\nworker "},
		},
		{name: "unknown job", args: []string{"job", "status", "nope"}, wantCode: 1,
			errHas: []string{`No job with prefix or ID "nope" found`}},
		{name: "too many arguments", args: []string{"job", "status", "a", "b"}, wantCode: 1,
			errHas: []string{"This command takes zero or one argument"}},
		{
			name:  "json list",
			setup: runningJob("web", 1),
			args:  []string{"job", "status", "-json"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				var jobs []*api.JobListStub
				if err := json.Unmarshal([]byte(res.stdout), &jobs); err != nil || len(jobs) != 1 || jobs[0].ID != "web" {
					t.Errorf("json = %v %s", err, res.stdout)
				}
			},
		},
		{
			name:    "template",
			setup:   runningJob("web", 1),
			args:    []string{"job", "status", "-t", "{{.ID}} has {{len .TaskGroups}} group", "web"},
			wantOut: "web has 1 group",
		},
		{name: "json and template together", args: []string{"job", "status", "-json", "-t", "x"}, wantCode: 1,
			errHas: []string{"both -json and -t are not allowed"}},
		{name: "bad template", setup: runningJob("web", 1), args: []string{"job", "status", "-t", "{{.Nope", "web"}, wantCode: 1,
			errHas: []string{"invalid template"}},
	})
}
