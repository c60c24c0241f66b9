package command

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// Allocation and evaluation IDs the fake assigns, in order.
const (
	alloc1 = "aaaa0001-0000-4000-8000-000000000001"
	eval1  = "eeee0001-0000-4000-8000-000000000001"
	eval2  = "eeee0002-0000-4000-8000-000000000002"
)

// runningAlloc places one allocation and marks it running with task
// events, as a client would report.
func runningAlloc(t *testing.T, c testCluster) {
	t.Helper()
	runningJob("web", 1)(t, c)
	f := c.fake()
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	started := fakeEpoch.Add(5 * time.Second)
	f.updateAlloc(alloc1, func(a *api.Allocation) {
		a.ClientStatus, a.ClientDescription = api.AllocClientStatusRunning, "Tasks are running"
		a.TaskStates = map[string]*api.TaskState{"server": {
			State: api.TaskStateRunning, StartedAt: started,
			Events: []*api.TaskEvent{
				{Type: "Received", Time: fakeEpoch.Add(2 * time.Second).UnixNano(), DisplayMessage: "Task received by client"},
				{Type: "Task Setup", Time: fakeEpoch.Add(3 * time.Second).UnixNano(), DisplayMessage: "Building Task Directory"},
				{Type: "Started", Time: started.UnixNano(), DisplayMessage: "Task started by client"},
			},
		}}
		a.Metrics = &api.AllocationMetric{
			NodesEvaluated: 2, NodesFiltered: 1, NodesInPool: 2, NodePool: "default",
			ConstraintFiltered: map[string]int{"missing drivers": 1},
			ScoreMetaData:      []*api.NodeScoreMeta{{NodeID: node1, Scores: map[string]float64{"binpack": 0.25, "job-anti-affinity": 0}, NormScore: 0.125}},
		}
	})
}

func TestAllocStatus(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name:     "attributes, task state and events",
			fakeOnly: true,
			setup:    runningAlloc,
			args:     []string{"alloc", "status", "aaaa0001"},
			wantOut: `ID                  = <id>
Eval ID             = <id>
Name                = web.web[0]
Node ID             = <id>
Node Name           = node-1
Job ID              = web
Job Version         = 0
Client Status       = running
Client Description  = Tasks are running
Desired Status      = run
Desired Description = <none>
Created             = <time>
Modified            = <time>

Task "server" is "running"
Task Resources:
CPU      Memory   Disk
100 MHz  256 MiB  300 MiB

Task Events:
Started At     = <time>
Finished At    = N/A
Total Restarts = 0
Last Restart   = N/A

Recent Events:
Time                  Type        Description
<time>  Started     Task started by client
<time>  Task Setup  Building Task Directory
<time>  Received    Task received by client`,
		},
		{
			name:     "verbose adds placement metrics and scores",
			fakeOnly: true,
			setup:    runningAlloc,
			args:     []string{"alloc", "status", "-verbose", "aaaa0001"},
			outHas: []string{`Placement Metrics
* Nodes evaluated: 2, filtered: 1, exhausted: 0, in pool "default": 2
* Constraint "missing drivers": 1 node excluded by filter

Node                                  binpack  job-anti-affinity  final score
<id>  0.25     0                  0.125`,
			},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if !strings.Contains(res.stdout, "ID                  = "+alloc1) || !strings.Contains(res.stdout, node1+"  0.25") {
					t.Errorf("verbose output lacks full IDs:\n%s", res.stdout)
				}
			},
		},
		{name: "short", fakeOnly: true, setup: runningAlloc, args: []string{"alloc", "status", "-short", "aaaa0001"},
			outHas: []string{"Task \"server\" is \"running\""}, outNot: []string{"Recent Events"}},
		{name: "json", setup: runningJob("web", 1), args: []string{"alloc", "status", "-json", "aaaa0001"},
			fakeOnly: true,
			check: func(t *testing.T, c testCluster, res cmdResult) {
				var a api.Allocation
				if err := json.Unmarshal([]byte(res.stdout), &a); err != nil || a.ID != alloc1 {
					t.Errorf("json: %v %s", err, res.stdout)
				}
			}},
		{name: "unknown", args: []string{"alloc", "status", "ffff"}, wantCode: 1, errHas: []string{`No allocation with prefix or ID "ffff" found`}},
		{name: "ambiguous", fakeOnly: true, setup: runningJob("web", 2), args: []string{"alloc", "status", "aaaa"}, wantCode: 1,
			errHas: []string{"Prefix matched multiple allocations\n\nID        Job ID  Node ID   Task Group"}},
		{name: "no argument", args: []string{"alloc", "status"}, wantCode: 1, errHas: []string{"This command takes one argument: <allocation>"}},
	})
}

func TestAllocStop(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name:     "stop and follow the replacement",
			fakeOnly: true,
			setup:    runningAlloc,
			args:     []string{"alloc", "stop", "aaaa0001"},
			wantOut: `==> <time>: Monitoring evaluation "<id>"
    <time>: Evaluation triggered by job "web"
    <time>: Allocation "<id>" created: node "<id>", group "web"
    <time>: Evaluation status changed: "pending" -> "complete"
==> <time>: Evaluation "<id>" finished with status "complete"`,
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if a := c.fake().allocs[alloc1]; a.DesiredStatus != api.AllocDesiredStatusStop {
					t.Errorf("desired status = %s", a.DesiredStatus)
				}
			},
		},
		{
			name: "detach with no shutdown delay", fakeOnly: true, setup: runningAlloc,
			args: []string{"alloc", "stop", "-detach", "-no-shutdown-delay", "aaaa0001"}, wantOut: "<id>",
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if q := c.fake().requestsTo("PUT", "/v1/allocation/")[0].Query; !strings.Contains(q, "no_shutdown_delay=true") {
					t.Errorf("query = %s", q)
				}
			},
		},
		{name: "unknown", args: []string{"alloc", "stop", "ffff"}, wantCode: 1, errHas: []string{"No allocation with prefix"}},
	})
}

// failedJob registers a job that cannot be placed (no nodes), leaving a
// complete evaluation with failures and a blocked one.
func failedJob(t *testing.T, c testCluster) {
	registerJob(t, c, testJob("web", 2, 256))
	c.Settle(t)
}

func TestEvalList(t *testing.T) {
	runCases(t, []cmdCase{
		{name: "none", args: []string{"eval", "list"}, wantOut: "No evals found"},
		{
			name:  "newest first with placement failures",
			setup: failedJob,
			args:  []string{"eval", "list"},
			wantOut: `ID        Priority  Triggered By   Job ID  Namespace  Node ID  Status    Placement Failures
<id>  50        queued-allocs  web     default    <none>   blocked   true
<id>  50        job-register   web     default    <none>   complete  true`,
		},
		{name: "by status", setup: failedJob, args: []string{"eval", "list", "-status", "blocked"},
			outHas: []string{"queued-allocs"}, outNot: []string{"job-register"}},
		{name: "by job", setup: failedJob, args: []string{"eval", "list", "-job", "other"}, wantOut: "No evals found"},
		{name: "paged", fakeOnly: true, setup: failedJob, args: []string{"eval", "list", "-per-page", "1"},
			outHas: []string{"blocked", "Results have been paginated. To get the next page run:\n\nnomad eval list -page-token <id>"}},
		{name: "json", setup: failedJob, args: []string{"eval", "list", "-json"},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				var evals []*api.Evaluation
				if err := json.Unmarshal([]byte(res.stdout), &evals); err != nil || len(evals) != 2 {
					t.Errorf("json: %v %s", err, res.stdout)
				}
			}},
		{name: "bad status", args: []string{"eval", "list", "-status", "done"}, wantCode: 1,
			errHas: []string{`Invalid -status "done": must be one of pending, blocked, complete, failed, canceled`}},
		{name: "an argument", args: []string{"eval", "list", "x"}, wantCode: 1, errHas: []string{"This command takes no arguments"}},
	})
}

func TestEvalStatus(t *testing.T) {
	runCases(t, []cmdCase{
		{
			name:     "a complete evaluation with failures explains them",
			fakeOnly: true,
			setup:    failedJob,
			args:     []string{"eval", "status", "eeee0001"},
			wantOut: `ID                 = <id>
Create Time        = <time>
Modify Time        = <time>
Status             = complete
Status Description = <none>
Type               = service
TriggeredBy        = job-register
Job ID             = web
Namespace          = default
Priority           = 50
Placement Failures = true
Previous Eval      = <none>
Next Eval          = <none>
Blocked Eval       = <id>

Related Evaluations
ID        Priority  Triggered By   Node ID  Status   Description
<id>  50        queued-allocs  <none>   blocked  created to place remaining allocations

Failed Placements
Task Group "web" (failed to place 2 allocations):
  * No nodes are available in datacenter "dc1"
  * Node pool "default" has no nodes
  * No nodes were eligible for evaluation
  Why: No ready, eligible node exists in node pool "default" in the job's datacenters; start a client there, or check the nodes' status, eligibility and drain (nomad node status).

Evaluation "<id>" waiting for additional capacity to place remainder`,
		},
		{name: "monitor a blocked evaluation exits 2", fakeOnly: true, setup: failedJob,
			args: []string{"eval", "status", "-monitor", eval2}, wantCode: 2,
			outHas: []string{`Evaluation "<id>" is blocked, waiting for capacity to place:`,
				`Task Group "web" (failed to place 2 allocations):`}},
		{name: "monitor a finished evaluation", fakeOnly: true, setup: runningJob("web", 1),
			args: []string{"eval", "status", "-monitor", eval1}, wantCode: 0,
			outHas: []string{`Allocation "<id>" created: node "<id>", group "web"`, `finished with status "complete"`}},
		{name: "unknown", args: []string{"eval", "status", "ffff"}, wantCode: 1, errHas: []string{`No evaluation with prefix or ID "ffff" found`}},
		{name: "ambiguous", setup: failedJob, args: []string{"eval", "status", "eeee"}, fakeOnly: true, wantCode: 1,
			errHas: []string{"Prefix matched multiple evaluations"}},
		{name: "template", setup: failedJob, fakeOnly: true, args: []string{"eval", "status", "-t", "{{.TriggeredBy}}", eval1},
			wantOut: "job-register"},
	})
}
