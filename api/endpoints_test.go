package api

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

// endpointCase drives one client method against the fake agent and checks
// the request it sent and what it decoded.
type endpointCase struct {
	name      string
	reply     reply
	call      func(c *Client) (any, error)
	wantMeth  string
	wantPath  string
	wantQuery url.Values // nil: no query string at all
	wantBody  string     // "" means no body
	check     func(t *testing.T, out any)
}

func runEndpointCases(t *testing.T, cases []endpointCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			agent := newFakeAgent(t, tc.reply)
			out, err := tc.call(agent.client(t))
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			req := agent.only(t)
			if req.Method != tc.wantMeth || req.Path != tc.wantPath {
				t.Fatalf("request = %s %s, want %s %s", req.Method, req.Path, tc.wantMeth, tc.wantPath)
			}
			wantQuery := tc.wantQuery
			if wantQuery == nil {
				wantQuery = url.Values{}
			}
			if !reflect.DeepEqual(req.Query, wantQuery) {
				t.Fatalf("query = %v, want %v", req.Query, wantQuery)
			}
			if tc.wantBody == "" {
				if len(req.Body) != 0 {
					t.Fatalf("unexpected body %s", req.Body)
				}
			} else {
				assertJSONEqual(t, req.Body, tc.wantBody)
				if ct := req.Header.Get("Content-Type"); ct != "application/json" {
					t.Fatalf("content type = %q", ct)
				}
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

func TestJobsEndpoints(t *testing.T) {
	runEndpointCases(t, []endpointCase{
		{
			name:  "register",
			reply: reply{Body: `{"EvalID":"e-1","EvalCreateIndex":12,"JobModifyIndex":11,"Warnings":"group \"g\": count is 0"}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().Register(&Job{ID: new("web"), Priority: new(70)}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/jobs",
			wantBody: `{"Job":` + emptyJobJSON(`"ID":"web","Priority":70`) + `,"Region":"","Namespace":"","SecretID":""}`,
			check: func(t *testing.T, out any) {
				r := out.(*JobRegisterResponse)
				if r.EvalID != "e-1" || r.EvalCreateIndex != 12 || r.JobModifyIndex != 11 || r.Warnings == "" {
					t.Fatalf("response = %+v", r)
				}
			},
		},
		{
			name:  "enforce register with options",
			reply: reply{Body: `{"EvalID":"e-2"}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().RegisterOpts(&Job{ID: new("web")}, &RegisterOptions{
					EnforceIndex: true, ModifyIndex: 0, PreserveCounts: true, EvalPriority: 90,
					Submission: &JobSubmission{Source: "job \"web\" {}", Format: "hcl2"},
				}, &WriteOptions{Namespace: "prod", IdempotencyToken: "once"})
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/jobs",
			wantQuery: url.Values{"namespace": {"prod"}, "idempotency_token": {"once"}},
			wantBody: `{"Job":` + emptyJobJSON(`"ID":"web"`) + `,"EnforceIndex":true,"PreserveCounts":true,"EvalPriority":90,
				"Submission":{"Source":"job \"web\" {}","Format":"hcl2","VariableFlags":null,"Variables":""},
				"Region":"","Namespace":"","SecretID":""}`,
		},
		{
			name:     "list",
			reply:    reply{Body: fixture(t, "jobs_list.json")},
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().List(nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/jobs",
			check: func(t *testing.T, out any) {
				jobs := out.([]*JobListStub)
				if len(jobs) != 2 || !jobs[0].Periodic || jobs[0].JobSummary.Children.Dead != 12 {
					t.Fatalf("jobs = %+v", jobs)
				}
				web := jobs[1]
				if web.Priority != 60 || web.SubmitTime != 1714557600123456789 ||
					web.JobSummary.Summary["frontend"].Running != 3 || web.Datacenters[1] != "dc2" {
					t.Fatalf("web = %+v", web)
				}
			},
		},
		{
			name:     "prefix list",
			reply:    reply{Body: `[]`},
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().PrefixList("we"); return r, err },
			wantMeth: "GET", wantPath: "/v1/jobs",
			wantQuery: url.Values{"prefix": {"we"}},
		},
		{
			name:     "info",
			reply:    reply{Body: fixture(t, "job_info.json")},
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().Info("web", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/job/web",
			check: func(t *testing.T, out any) {
				j := out.(*Job)
				tg := j.TaskGroups[0]
				task := tg.Tasks[0]
				switch {
				case *j.Priority != 60 || *j.Version != 4 || !*j.Stable || *j.JobModifyIndex != 118:
					t.Fatalf("job fields = %+v", j)
				case *j.Spreads[0].Weight != 80 || j.Spreads[0].SpreadTarget[1].Percent != 30:
					t.Fatalf("spread = %+v", j.Spreads[0])
				case *tg.Update.MinHealthyTime != 15*time.Second || *tg.Update.Canary != 1 || !*tg.Update.AutoRevert:
					t.Fatalf("group update = %+v", tg.Update)
				case tg.Networks[0].ReservedPorts[0].Value != 9000 || tg.Networks[0].DynamicPorts[0].To != 8080:
					t.Fatalf("network = %+v", tg.Networks[0])
				case *tg.ShutdownDelay != 5*time.Second || *tg.EphemeralDisk.SizeMB != 500:
					t.Fatalf("group = %+v", tg)
				case *task.KillTimeout != 10*time.Second || task.KillSignal != "SIGINT" || !task.Leader:
					t.Fatalf("task = %+v", task)
				case *task.Resources.MemoryMaxMB != 256 || *task.LogConfig.MaxFiles != 5:
					t.Fatalf("task resources/logs = %+v %+v", task.Resources, task.LogConfig)
				}
				portMap := task.Config["port_map"].([]any)[0].(map[string]any)
				if portMap["http"].(float64) != 8080 {
					t.Fatalf("config = %+v", task.Config)
				}
			},
		},
		{
			name:     "summary",
			reply:    reply{Body: fixture(t, "job_summary.json")},
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().Summary("web", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/job/web/summary",
			check: func(t *testing.T, out any) {
				s := out.(*JobSummary).Summary["frontend"]
				if s != (TaskGroupSummary{Queued: 1, Complete: 4, Failed: 2, Running: 3, Lost: 1}) {
					t.Fatalf("summary = %+v", s)
				}
			},
		},
		{
			name:  "plan with diff",
			reply: reply{Body: fixture(t, "job_plan.json")},
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().Plan(&Job{ID: new("web")}, true, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/job/web/plan",
			wantBody: `{"Job":` + emptyJobJSON(`"ID":"web"`) + `,"Diff":true,"PolicyOverride":false,"Region":"","Namespace":"","SecretID":""}`,
			check: func(t *testing.T, out any) {
				p := out.(*JobPlanResponse)
				if p.Diff.TaskGroups[0].Updates["create"] != 2 || p.Diff.TaskGroups[0].Fields[0].New != "5" {
					t.Fatalf("diff = %+v", p.Diff)
				}
				if p.Annotations.DesiredTGUpdates["frontend"].Place != 2 {
					t.Fatalf("annotations = %+v", p.Annotations)
				}
				m := p.FailedTGAllocs["frontend"]
				if m.DimensionExhausted["memory"] != 3 || m.NodesAvailable["dc2"] != 1 ||
					m.ConstraintFiltered["${attr.kernel.name} = linux"] != 1 || m.AllocationTime != 812345 {
					t.Fatalf("failed allocs = %+v", m)
				}
				if p.CreatedEvals[0].Status != EvalStatusBlocked {
					t.Fatalf("created evals = %+v", p.CreatedEvals)
				}
			},
		},
		{
			name:  "force evaluate",
			reply: reply{Body: `{"EvalID":"e-3","EvalCreateIndex":20,"JobModifyIndex":11}`},
			call: func(c *Client) (any, error) {
				id, _, err := c.Jobs().EvaluateWithOpts("web", EvalOptions{ForceReschedule: true}, nil)
				return id, err
			},
			wantMeth: "PUT", wantPath: "/v1/job/web/evaluate",
			wantBody: `{"JobID":"web","EvalOptions":{"ForceReschedule":true},"Region":"","Namespace":"","SecretID":""}`,
			check: func(t *testing.T, out any) {
				if out.(string) != "e-3" {
					t.Fatalf("eval id = %v", out)
				}
			},
		},
		{
			name:     "allocations all",
			reply:    reply{Body: fixture(t, "allocations_list.json")},
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().Allocations("web", true, nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/job/web/allocations",
			wantQuery: url.Values{"all": {"true"}},
			check: func(t *testing.T, out any) {
				a := out.([]*AllocationListStub)[0]
				ts := a.TaskStates["server"]
				if a.JobVersion != 4 || ts.Restarts != 1 || ts.StartedAt.Nanosecond() != 500000000 ||
					!*a.DeploymentStatus.Healthy || ts.Events[0].Type != "Started" {
					t.Fatalf("alloc stub = %+v", a)
				}
			},
		},
		{
			name:     "evaluations",
			reply:    reply{Body: "[" + fixture(t, "evaluation.json") + "]"},
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().Evaluations("web", nil); return r, err },
			wantMeth: "GET", wantPath: "/v1/job/web/evaluations",
		},
		{
			name:  "versions with diffs",
			reply: reply{Body: `{"Versions":[{"ID":"web","Version":1},{"ID":"web","Version":0}],"Diffs":[{"Type":"Edited","ID":"web"}],"Index":9}`},
			call: func(c *Client) (any, error) {
				v, d, _, err := c.Jobs().Versions("web", true, nil)
				return []any{v, d}, err
			},
			wantMeth: "GET", wantPath: "/v1/job/web/versions",
			wantQuery: url.Values{"diffs": {"true"}},
			check: func(t *testing.T, out any) {
				v := out.([]any)[0].([]*Job)
				d := out.([]any)[1].([]*JobDiff)
				if len(v) != 2 || *v[0].Version != 1 || d[0].Type != DiffTypeEdited {
					t.Fatalf("versions = %+v diffs = %+v", v, d)
				}
			},
		},
		{
			name:  "deregister purge",
			reply: reply{Body: `{"EvalID":"e-4","EvalCreateIndex":30,"JobModifyIndex":29}`},
			call: func(c *Client) (any, error) {
				id, _, err := c.Jobs().Deregister("web", true, nil)
				return id, err
			},
			wantMeth: "DELETE", wantPath: "/v1/job/web",
			wantQuery: url.Values{"purge": {"true"}, "global": {"false"}, "eval_priority": {"0"}, "no_shutdown_delay": {"false"}},
			check: func(t *testing.T, out any) {
				if out.(string) != "e-4" {
					t.Fatalf("eval id = %v", out)
				}
			},
		},
		{
			name:  "deregister with options",
			reply: reply{Body: `{"EvalID":"e-5"}`},
			call: func(c *Client) (any, error) {
				id, _, err := c.Jobs().DeregisterOpts("web", &DeregisterOptions{EvalPriority: 80, NoShutdownDelay: true}, nil)
				return id, err
			},
			wantMeth: "DELETE", wantPath: "/v1/job/web",
			wantQuery: url.Values{"purge": {"false"}, "global": {"false"}, "eval_priority": {"80"}, "no_shutdown_delay": {"true"}},
		},
		{
			name:  "parse",
			reply: reply{Body: `{"ID":"example","Name":"example","Type":"service","TaskGroups":[{"Name":"cache","Count":1}]}`},
			call: func(c *Client) (any, error) {
				return c.Jobs().ParseHCLOpts(&JobsParseRequest{JobHCL: `job "example" {}`, Variables: `x = 1`, Canonicalize: true})
			},
			wantMeth: "PUT", wantPath: "/v1/jobs/parse",
			wantBody: `{"JobHCL":"job \"example\" {}","Variables":"x = 1","Canonicalize":true}`,
			check: func(t *testing.T, out any) {
				j := out.(*Job)
				if *j.ID != "example" || *j.TaskGroups[0].Name != "cache" {
					t.Fatalf("job = %+v", j)
				}
			},
		},
		{
			name:  "validate",
			reply: reply{Body: `{"DriverConfigValidated":false,"ValidationErrors":["group \"g\": count must be >= 0"],"Error":"1 error occurred","Warnings":""}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().Validate(&Job{ID: new("web")}, &WriteOptions{Region: "eu"})
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/validate/job",
			wantQuery: url.Values{"region": {"eu"}},
			wantBody:  `{"Job":` + emptyJobJSON(`"ID":"web"`) + `,"Region":"eu","Namespace":"","SecretID":""}`,
			check: func(t *testing.T, out any) {
				if len(out.(*JobValidateResponse).ValidationErrors) != 1 {
					t.Fatalf("response = %+v", out)
				}
			},
		},
		{
			name:  "dispatch",
			reply: reply{Body: `{"DispatchedJobID":"batch/dispatch-1-abcd1234","EvalID":"e-6","EvalCreateIndex":40,"JobCreateIndex":40}`},
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().Dispatch(&JobDispatchRequest{JobID: "batch", Payload: []byte("hi"), Meta: map[string]string{"k": "v"}}, nil)
				return r, err
			},
			wantMeth: "PUT", wantPath: "/v1/job/batch/dispatch",
			wantBody: `{"JobID":"batch","Payload":"aGk=","Meta":{"k":"v"},"IdPrefixTemplate":"","Priority":0}`,
			check: func(t *testing.T, out any) {
				if out.(*JobDispatchResponse).DispatchedJobID != "batch/dispatch-1-abcd1234" {
					t.Fatalf("response = %+v", out)
				}
			},
		},
	})
}

// emptyJobJSON renders a Job with only the given fields set, as
// encoding/json writes it (every unset pointer as null).
func emptyJobJSON(fields string) string {
	return `{` + fields + nullJobFields(fields) + `}`
}

// nullJobFields lists the JSON of every other Job field.
func nullJobFields(set string) string {
	all := []string{"Region", "Namespace", "ID", "Name", "Type", "Priority", "AllAtOnce", "Datacenters",
		"NodePool", "Constraints", "Affinities", "TaskGroups", "Update", "Spreads", "Periodic",
		"ParameterizedJob", "Reschedule", "Migrate", "Meta", "Stop", "ParentID",
		"DispatchIdempotencyToken", "Payload", "ConsulNamespace", "VaultNamespace", "NomadTokenID",
		"Status", "StatusDescription", "Stable", "Version", "VersionTag", "SubmitTime", "CreateIndex", "ModifyIndex",
		"JobModifyIndex"}
	out := `,"Dispatched":false`
	for _, f := range all {
		if !containsField(set, f) {
			out += `,"` + f + `":null`
		}
	}
	return out
}

func containsField(set, field string) bool {
	return strings.Contains(set, `"`+field+`":`)
}
