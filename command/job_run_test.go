package command

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/api"
)

// scripted returns a fake scheduler that runs the given steps for each
// new evaluation, one step per blocking query.
func scripted(steps ...func(f *fakeAgent, ev *api.Evaluation)) func(*fakeAgent, *api.Evaluation) []func() {
	return func(f *fakeAgent, ev *api.Evaluation) []func() {
		out := make([]func(), len(steps))
		for i, s := range steps {
			s := s
			out[i] = func() { s(f, ev) }
		}
		return out
	}
}

// placeAll places every group's allocations on the first node.
func placeAll(f *fakeAgent, ev *api.Evaluation) {
	job := f.currentJob(ev.Namespace, ev.JobID)
	node := f.sortedNodes()[0]
	for _, tg := range job.TaskGroups {
		for i := 0; i < derefInt(tg.Count); i++ {
			f.placeAlloc(job, tg, i, node, ev.ID, &api.AllocationMetric{NodesEvaluated: 1})
		}
	}
}

// runAll marks the evaluation's allocations running.
func runAll(f *fakeAgent, ev *api.Evaluation) {
	for _, a := range f.allocs {
		if a.EvalID == ev.ID {
			f.updateAlloc(a.ID, func(a *api.Allocation) {
				a.ClientStatus, a.ClientDescription = api.AllocClientStatusRunning, "Tasks are running"
			})
		}
	}
}

// completeEval marks the evaluation complete, applying change first.
func completeEval(change func(f *fakeAgent, e *api.Evaluation)) func(f *fakeAgent, ev *api.Evaluation) {
	return func(f *fakeAgent, ev *api.Evaluation) {
		f.updateEval(ev.ID, func(e *api.Evaluation) {
			e.Status = api.EvalStatusComplete
			if change != nil {
				change(f, e)
			}
		})
	}
}

func addNode(t *testing.T, c testCluster) { c.AddNode(t, &api.Node{Name: "node-1"}) }

func TestJobRun(t *testing.T) {
	const hcl = "job.nomad.hcl"
	runCases(t, []cmdCase{
		{
			name: "placed",
			// A real server rolls a service job out in a deployment, which
			// job run follows until a client reports the allocations
			// healthy; the real test agent runs no client.
			fakeOnly: true,
			setup:    addNode,
			files:    map[string]string{hcl: testJobHCL("web", 1, 256)},
			args:     []string{"job", "run", "{dir}/" + hcl},
			wantOut: `==> <time>: Monitoring evaluation "<id>"
    <time>: Evaluation triggered by job "web"
    <time>: Allocation "<id>" created: node "<id>", group "web"
    <time>: Evaluation status changed: "pending" -> "complete"
==> <time>: Evaluation "<id>" finished with status "complete"`,
		},
		{
			name:     "no nodes: placement failures explained, exit 2",
			files:    map[string]string{hcl: testJobHCL("web", 2, 256)},
			args:     []string{"run", "{dir}/" + hcl},
			wantCode: 2,
			// The real servers also name the job's deployment; the fake
			// also says no node is available in datacenter dc1.
			outHas: []string{`==> <time>: Monitoring evaluation "<id>"
    <time>: Evaluation triggered by job "web"`, `==> <time>: Evaluation "<id>" finished with status "complete" but failed to place all allocations:
    <time>: Task Group "web" (failed to place 2 allocations):
`, `
      * Node pool "default" has no nodes
      * No nodes were eligible for evaluation
      Why: No ready, eligible node exists in node pool "default" in the job's datacenters; start a client there, or check the nodes' status, eligibility and drain (nomad node status).
    <time>: Evaluation "<id>" waiting for additional capacity to place remainder`},
		},
		{
			name: "memory exhausted: exit 2 with the dimension and the verdict",
			setup: func(t *testing.T, c testCluster) {
				c.AddNode(t, &api.Node{Name: "small", NodeResources: &api.NodeResources{
					Cpu: api.NodeCpuResources{CpuShares: 2000}, Memory: api.NodeMemoryResources{MemoryMB: 512}}})
			},
			files:    map[string]string{hcl: testJobHCL("web", 1, 1024)},
			args:     []string{"job", "run", "{dir}/" + hcl},
			wantCode: 2,
			outHas: []string{
				`Task Group "web" (failed to place 1 allocation):
      * Resources exhausted on 1 node
      * Dimension "memory" exhausted on 1 node`,
				`      Why: 1 node passed the filters but none had enough free memory; free capacity, lower the group's resources, or add nodes.`,
				`waiting for additional capacity to place remainder`,
			},
			// The real scheduler names the node that came closest and
			// what it lacked (the fake scheduler does not).
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if _, real := c.(*realAgent); real && !strings.Contains(res.stdout, `* Closest: node "small" lacked 512 MB memory`) {
					t.Errorf("no closest node:\n%s", res.stdout)
				}
			},
		},
		{
			name:    "detach prints the evaluation ID",
			setup:   addNode,
			files:   map[string]string{hcl: testJobHCL("web", 1, 256)},
			args:    []string{"job", "run", "-detach", "{dir}/" + hcl},
			wantOut: "Job registration successful\nEvaluation ID: <id>",
		},
		{
			name:  "output prints the API JSON without registering",
			files: map[string]string{hcl: testJobHCL("web", 3, 256)},
			args:  []string{"job", "run", "-output", "{dir}/" + hcl},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				var out struct{ Job *api.Job }
				if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || out.Job == nil {
					t.Fatalf("output is not {\"Job\": ...}: %v\n%s", err, res.stdout)
				}
				if *out.Job.ID != "web" || *out.Job.TaskGroups[0].Count != 3 {
					t.Errorf("job = %+v", out.Job)
				}
				if f := c.fake(); f != nil && len(f.requestsTo("PUT", "/v1/jobs")) != 0 {
					t.Error("-output registered the job")
				}
			},
		},
		{
			name: "periodic job prints the next launch",
			files: map[string]string{hcl: `job "report" {
  type = "batch"
  periodic {
    crons     = ["0 3 * * *"]
    time_zone = "UTC"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
  }
}`},
			args:    []string{"job", "run", "{dir}/" + hcl},
			wantOut: "Job registration successful\nApproximate next launch time: <time> (16h0m0s from now)",
		},
		{
			name: "variables from -var reach the job",
			files: map[string]string{hcl: `variable "count" {
  type    = number
  default = 1
}
job "web" {
  group "web" {
    count = var.count
    task "server" {
      driver = "raw_exec"
      config { command = "/bin/sleep" }
    }
  }
}`},
			args: []string{"job", "run", "-detach", "-var", "count=4", "{dir}/" + hcl},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				job := readJob(t, c, "web")
				if *job.TaskGroups[0].Count != 4 {
					t.Errorf("count = %d, want 4 from -var", *job.TaskGroups[0].Count)
				}
			},
		},
		{
			name:  "job from stdin",
			setup: addNode,
			stdin: testJobHCL("piped", 1, 128),
			args:  []string{"job", "run", "-detach", "-"},
			check: func(t *testing.T, c testCluster, res cmdResult) { readJob(t, c, "piped") },
		},
		{
			name:  "JSON job wrapped as job inspect prints it",
			setup: addNode,
			files: map[string]string{"job.json": mustJSON(t, map[string]*api.Job{"Job": testJob("fromjson", 1, 128)})},
			args:  []string{"job", "run", "-json", "-detach", "{dir}/job.json"},
			check: func(t *testing.T, c testCluster, res cmdResult) { readJob(t, c, "fromjson") },
		},
		{
			name:  "eval priority and preserve counts are sent",
			setup: addNode,
			files: map[string]string{hcl: testJobHCL("web", 1, 128)},
			args:  []string{"job", "run", "-detach", "-eval-priority", "90", "-preserve-counts", "{dir}/" + hcl},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				f := c.fake()
				if f == nil {
					return
				}
				body := f.requestsTo("PUT", "/v1/jobs")[0].Body
				if !strings.Contains(body, `"EvalPriority":90`) || !strings.Contains(body, `"PreserveCounts":true`) ||
					!strings.Contains(body, `"Format":"hcl2"`) {
					t.Errorf("register body = %s", body)
				}
			},
		},
		{
			name: "check-index that no longer matches is refused",
			setup: func(t *testing.T, c testCluster) {
				registerJob(t, c, testJob("web", 1, 128))
			},
			files:    map[string]string{hcl: testJobHCL("web", 1, 128)},
			args:     []string{"job", "run", "-check-index", "1", "{dir}/" + hcl},
			wantCode: 1,
			errHas:   []string{"Error submitting job: the job's modify index is no longer 1 (run 'nomad job plan' again)"},
		},
		{
			name: "check-index 0 requires a new job",
			setup: func(t *testing.T, c testCluster) {
				registerJob(t, c, testJob("web", 1, 128))
			},
			files:    map[string]string{hcl: testJobHCL("web", 1, 128)},
			args:     []string{"job", "run", "-check-index", "0", "{dir}/" + hcl},
			wantCode: 1,
			errHas:   []string{"-check-index 0 requires that the job does not exist yet"},
		},
	})
}

func TestJobRunMonitorScripted(t *testing.T) {
	const hcl = "job.nomad.hcl"
	files := map[string]string{hcl: testJobHCL("web", 2, 256)}
	runCases(t, []cmdCase{
		{
			name:     "pending, allocations created and running, then complete",
			fakeOnly: true,
			setup: func(t *testing.T, c testCluster) {
				addNode(t, c)
				c.fake().schedule = scripted(placeAll, runAll, completeEval(nil))
			},
			files: files,
			args:  []string{"job", "run", "{dir}/" + hcl},
			wantOut: `==> <time>: Monitoring evaluation "<id>"
    <time>: Evaluation triggered by job "web"
    <time>: Allocation "<id>" created: node "<id>", group "web"
    <time>: Allocation "<id>" created: node "<id>", group "web"
    <time>: Allocation "<id>" status changed: "pending" -> "running" (Tasks are running)
    <time>: Allocation "<id>" status changed: "pending" -> "running" (Tasks are running)
    <time>: Evaluation status changed: "pending" -> "complete"
==> <time>: Evaluation "<id>" finished with status "complete"`,
		},
		{
			name:     "constraints, classes and dimensions are listed biggest first with a verdict",
			fakeOnly: true,
			setup: func(t *testing.T, c testCluster) {
				c.fake().schedule = scripted(completeEval(func(f *fakeAgent, e *api.Evaluation) {
					e.FailedTGAllocs = map[string]*api.AllocationMetric{"web": {
						NodesEvaluated: 5, NodesFiltered: 3, NodesInPool: 5, NodePool: "default",
						NodesAvailable:     map[string]int{"dc1": 5},
						ClassFiltered:      map[string]int{"gpu": 1},
						ConstraintFiltered: map[string]int{"${attr.kernel.name} = windows": 2, "missing drivers": 1},
						NodesExhausted:     2,
						ClassExhausted:     map[string]int{"large": 2},
						DimensionExhausted: map[string]int{"memory": 1, "cpu": 2},
						ResourcesExhausted: map[string]*api.Resources{"server": {CPU: new(500), MemoryMB: new(4096)}},
						CoalescedFailures:  1,
					}}
				}))
			},
			files:    files,
			args:     []string{"job", "run", "{dir}/" + hcl},
			wantCode: 2,
			outHas: []string{`==> <time>: Evaluation "<id>" finished with status "complete" but failed to place all allocations:
    <time>: Task Group "web" (failed to place 2 allocations):
      * Class "gpu": 1 node excluded by filter
      * Constraint "${attr.kernel.name} = windows": 2 nodes excluded by filter
      * Constraint "missing drivers": 1 node excluded by filter
      * Resources exhausted on 2 nodes
      * Class "large" exhausted on 2 nodes
      * Dimension "cpu" exhausted on 2 nodes
      * Dimension "memory" exhausted on 1 node
      * Task "server" asks for cpu 500 MHz, memory 4096 MB
      Why: 2 nodes passed the filters but none had enough free cpu, memory; free capacity, lower the group's resources, or add nodes.`},
			outNot: []string{"waiting for additional capacity"},
		},
		{
			name:     "every node filtered out",
			fakeOnly: true,
			setup: func(t *testing.T, c testCluster) {
				c.fake().schedule = scripted(completeEval(func(f *fakeAgent, e *api.Evaluation) {
					e.FailedTGAllocs = map[string]*api.AllocationMetric{"web": {
						NodesEvaluated: 3, NodesFiltered: 3, NodesInPool: 3, NodePool: "default",
						ConstraintFiltered: map[string]int{"${meta.rack} = r9": 3},
					}}
				}))
			},
			files:    files,
			args:     []string{"job", "run", "{dir}/" + hcl},
			wantCode: 2,
			outHas: []string{`      * Constraint "${meta.rack} = r9": 3 nodes excluded by filter
      Why: All 3 nodes evaluated were excluded by the constraints above; relax them or add nodes that satisfy them.`},
		},
		{
			name:     "next evaluation is followed",
			fakeOnly: true,
			setup: func(t *testing.T, c testCluster) {
				addNode(t, c)
				f := c.fake()
				f.schedule = func(f *fakeAgent, ev *api.Evaluation) []func() {
					if ev.TriggeredBy == "rolling-update" {
						return scripted(placeAll, completeEval(nil))(f, ev)
					}
					return []func(){func() {
						job := f.currentJob(ev.Namespace, ev.JobID)
						f.schedule = nil
						next := f.createEval(job, "rolling-update", func(n *api.Evaluation) {
							n.PreviousEval, n.WaitUntil = ev.ID, fakeEpoch.Add(30*time.Second)
						})
						f.updateEval(ev.ID, func(e *api.Evaluation) { e.Status, e.NextEval = api.EvalStatusComplete, next.ID })
						// The follow-up is processed by the scheduler set above.
						f.steps = scripted(placeAll, completeEval(nil))(f, next)
					}}
				}
			},
			files: files,
			args:  []string{"job", "run", "{dir}/" + hcl},
			now:   func() time.Time { return fakeEpoch },
			wantOut: `==> <time>: Monitoring evaluation "<id>"
    <time>: Evaluation triggered by job "web"
    <time>: Evaluation status changed: "pending" -> "complete"
==> <time>: Evaluation "<id>" finished with status "complete"
==> <time>: Monitoring next evaluation "<id>" in 30s
==> <time>: Monitoring evaluation "<id>"
    <time>: Evaluation triggered by job "web"
    <time>: Allocation "<id>" created: node "<id>", group "web"
    <time>: Allocation "<id>" created: node "<id>", group "web"
    <time>: Evaluation status changed: "pending" -> "complete"
==> <time>: Evaluation "<id>" finished with status "complete"`,
		},
		{
			name:     "failed evaluation exits 1 with its reason",
			fakeOnly: true,
			setup: func(t *testing.T, c testCluster) {
				c.fake().schedule = scripted(func(f *fakeAgent, ev *api.Evaluation) {
					f.updateEval(ev.ID, func(e *api.Evaluation) {
						e.Status, e.StatusDescription = api.EvalStatusFailed, "maximum attempts reached (3)"
					})
				})
			},
			files:    files,
			args:     []string{"job", "run", "{dir}/" + hcl},
			wantCode: 1,
			outHas: []string{`==> <time>: Evaluation "<id>" finished with status "failed"
    <time>: Reason: maximum attempts reached (3)`},
		},
		{
			name:     "verbose shows full IDs",
			fakeOnly: true,
			setup:    addNode,
			files:    files,
			args:     []string{"job", "run", "-verbose", "{dir}/" + hcl},
			check: func(t *testing.T, c testCluster, res cmdResult) {
				if !strings.Contains(res.stdout, `Monitoring evaluation "eeee0001-0000-4000-8000-000000000001"`) {
					t.Errorf("no full eval ID:\n%s", res.stdout)
				}
			},
		},
	})
}

func TestJobRunBadInput(t *testing.T) {
	const hcl = "job.nomad.hcl"
	runCases(t, []cmdCase{
		{name: "no argument", args: []string{"job", "run"}, wantCode: 1,
			errHas: []string{"This command takes one argument: <path>", "nomad job run -help"}},
		{name: "two arguments", args: []string{"job", "run", "a", "b"}, wantCode: 1,
			errHas: []string{"This command takes one argument"}},
		{name: "flag after the path is an argument", args: []string{"job", "run", "a.hcl", "-detach"}, wantCode: 1,
			errHas: []string{"This command takes one argument"}},
		{name: "unknown flag", args: []string{"job", "run", "-bogus", "x"}, wantCode: 1,
			errHas: []string{"flag provided but not defined: -bogus"}},
		{name: "bad check index", args: []string{"job", "run", "-check-index", "abc", "x"}, wantCode: 1,
			errHas: []string{`invalid value "abc" for flag -check-index`}},
		{name: "eval priority out of range", args: []string{"job", "run", "-eval-priority", "101", "x"}, wantCode: 1,
			errHas: []string{"Invalid -eval-priority 101: must be between 1 and 100"}},
		{name: "missing file", args: []string{"job", "run", "{dir}/nope.hcl"}, wantCode: 1,
			errHas: []string{`reading job file "{dir}/nope.hcl"`, "no such file"}},
		{name: "empty file", files: map[string]string{hcl: "  \n"}, args: []string{"job", "run", "{dir}/" + hcl}, wantCode: 1,
			errHas: []string{"is empty"}},
		{name: "HCL syntax error names the position",
			files:    map[string]string{hcl: "job \"x\" {\n  group \"g\" {\n    count = \n  }\n}\n"},
			args:     []string{"job", "run", "{dir}/" + hcl},
			wantCode: 1,
			errHas:   []string{"Error getting job struct: parsing job file {dir}/" + hcl, "{dir}/" + hcl + ":3:"}},
		{name: "undeclared variable",
			files:    map[string]string{hcl: testJobHCL("web", 1, 128)},
			args:     []string{"job", "run", "-var", "nope=1", "{dir}/" + hcl},
			wantCode: 1,
			errHas:   []string{"nope"}},
		{name: "invalid JSON",
			files:    map[string]string{"job.json": `{"Job": {"ID": 5}}`},
			args:     []string{"job", "run", "-json", "{dir}/job.json"},
			wantCode: 1,
			errHas:   []string{"parsing JSON job file {dir}/job.json"}},
		{name: "JSON without a job",
			files:    map[string]string{"job.json": `{"Foo": 1}`},
			args:     []string{"job", "run", "-json", "{dir}/job.json"},
			wantCode: 1,
			errHas:   []string{"has no job"}},
		{name: "-var with -json",
			files:    map[string]string{"job.json": `{}`},
			args:     []string{"job", "run", "-json", "-var", "a=1", "{dir}/job.json"},
			wantCode: 1,
			errHas:   []string{"-var and -var-file apply to HCL job files only"}},
		{name: "server rejects the job",
			files:    map[string]string{hcl: "job \"empty\" {\n}\n"},
			args:     []string{"job", "run", "{dir}/" + hcl},
			wantCode: 1,
			errHas:   []string{"Error submitting job: Unexpected response code: 400", "job task groups"}},
	})
}

func TestCommandsReportAnUnreachableAgent(t *testing.T) {
	srv := httptest.NewServer(nil)
	addr := srv.URL
	srv.Close()
	for _, args := range [][]string{
		{"job", "status"}, {"node", "status"}, {"eval", "list"}, {"server", "members"},
		{"operator", "scheduler", "get-config"}, {"system", "gc"},
	} {
		res := runCommand(t, addr, runOpts{}, args...)
		if res.code != 1 || !strings.Contains(res.stderr, "cannot reach the agent at "+addr) ||
			!strings.Contains(res.stderr, "NOMAD_ADDR") {
			t.Errorf("%v: code %d, stderr %q", args, res.code, res.stderr)
		}
	}
}

// readJob fetches a job through the API, failing the test if it is
// missing.
func readJob(t *testing.T, c testCluster, id string) *api.Job {
	t.Helper()
	client, err := api.NewClient(&api.Config{Address: c.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	job, _, err := client.Jobs().Info(id, nil)
	if err != nil {
		t.Fatalf("reading job %q: %v", id, err)
	}
	return job
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestJobRunInterruptedMonitorSaysTheEvaluationGoesOn(t *testing.T) {
	f := newFakeAgent(t)
	f.schedule = func(*fakeAgent, *api.Evaluation) []func() { return nil } // never processed
	dir := t.TempDir()
	path := dir + "/job.hcl"
	if err := os.WriteFile(path, []byte(testJobHCL("web", 1, 64)), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runCommand(t, f.Addr(), runOpts{timeout: 300 * time.Millisecond}, "job", "run", path)
	if res.code != 1 || !strings.Contains(res.stdout, "Monitoring stopped; the evaluation goes on. Check it with 'nomad eval status "+eval1+"'") {
		t.Fatalf("%+v", res)
	}
}

func TestJobRunPrintsParserWarnings(t *testing.T) {
	f := newFakeAgent(t)
	f.AddNode(t, &api.Node{})
	dir := t.TempDir()
	path := dir + "/job.hcl"
	src := strings.Replace(testJobHCL("web", 1, 64), `group "web" {`, `group "web" {
    consul {
      namespace = "apps"
    }`, 1)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runCommand(t, f.Addr(), runOpts{}, "job", "run", "-detach", path)
	if res.code != 0 || !strings.Contains(res.stderr, "Job Warnings:\n* group \"web\": consul blocks are parsed but not acted on by this server") {
		t.Fatalf("%+v", res)
	}
}

func TestCommonFlagsOverrideTheEnvironment(t *testing.T) {
	f := newFakeAgent(t)
	// NOMAD_ADDR points at nothing; -address wins.
	res := runCommand(t, "http://127.0.0.1:1", runOpts{}, "job", "status",
		"-address", f.Addr(), "-token", "s3cret", "-region", "eu", "-namespace", "prod")
	if res.code != 0 {
		t.Fatalf("%+v", res)
	}
	r := f.requestsTo("GET", "/v1/jobs")[0]
	if r.Token != "s3cret" || !strings.Contains(r.Query, "region=eu") || !strings.Contains(r.Query, "namespace=prod") {
		t.Errorf("request = %+v", r)
	}
	// And the environment is used when no flag is given.
	res = runCommand(t, f.Addr(), runOpts{env: map[string]string{"NOMAD_TOKEN": "from-env", "NOMAD_NAMESPACE": "ops"}}, "job", "status")
	if res.code != 0 {
		t.Fatalf("%+v", res)
	}
	reqs := f.requestsTo("GET", "/v1/jobs")
	if last := reqs[len(reqs)-1]; last.Token != "from-env" || !strings.Contains(last.Query, "namespace=ops") {
		t.Errorf("request with NOMAD_TOKEN and NOMAD_NAMESPACE = %+v", last)
	}
}
