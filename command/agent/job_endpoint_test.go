package agent

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

const registerBody = `{
  "Job": {
    "ID": "web",
    "Datacenters": ["dc1"],
    "TaskGroups": [{
      "Name": "cache",
      "Count": 2,
      "Tasks": [{
        "Name": "redis",
        "Driver": "raw_exec",
        "Config": {"command": "/bin/sleep", "args": ["100"]},
        "Resources": {"CPU": 200, "MemoryMB": 64}
      }]
    }]
  },
  "EnforceIndex": true,
  "JobModifyIndex": 0,
  "EvalPriority": 70
}`

func TestJobs_Register(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.onWrite("Job.Register", func(args, reply interface{}) error {
		out := reply.(*structs.JobRegisterResponse)
		out.EvalID, out.EvalCreateIndex, out.JobModifyIndex, out.Index = "e1", 12, 12, 12
		return nil
	})
	resp, body := h.do("PUT", "/v1/jobs?namespace=default", registerBody, "X-Nomad-Token", "tok")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "12", resp.Header.Get("X-Nomad-Index"))

	var out api.JobRegisterResponse
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.Eq(t, api.JobRegisterResponse{EvalID: "e1", EvalCreateIndex: 12, JobModifyIndex: 12}, out)

	args := h.rpc.lastCall(t, "Job.Register").(*structs.JobRegisterRequest)
	must.True(t, args.EnforceIndex)
	must.Eq(t, 70, args.EvalPriority)
	must.Eq(t, "default", args.Namespace)
	must.Eq(t, "global", args.Region)
	must.Eq(t, "tok", args.AuthToken)

	// Defaults were filled the way Nomad's agent fills them.
	j := args.Job
	must.Eq(t, "web", j.ID)
	must.Eq(t, "web", j.Name)
	must.Eq(t, "service", j.Type)
	must.Eq(t, 50, j.Priority)
	must.Eq(t, "global", j.Region)
	must.Eq(t, "default", j.NodePool)
	tg := j.TaskGroups[0]
	must.Eq(t, 2, tg.Count)
	must.Eq(t, 300, tg.EphemeralDisk.SizeMB)
	must.NotNil(t, tg.RestartPolicy)
	must.NotNil(t, tg.ReschedulePolicy)
	must.NotNil(t, tg.Update)
	task := tg.Tasks[0]
	must.Eq(t, 200, task.Resources.CPU)
	must.Eq(t, 64, task.Resources.MemoryMB)
	must.Eq(t, 10, task.LogConfig.MaxFiles)
	must.Eq[any](t, "/bin/sleep", task.Config["command"])
}

func TestJobs_RegisterViaJobPath(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("POST", "/v1/job/web?namespace=prod&region=west", registerBody)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	args := h.rpc.lastCall(t, "Job.Register").(*structs.JobRegisterRequest)
	must.Eq(t, "prod", args.Job.Namespace)
	must.Eq(t, "prod", args.Namespace)
	must.Eq(t, "west", args.Job.Region)
}

// TestJobs_RegisterValidation shows every problem of an invalid job in
// one 400 answer: the server's check (endpoints.PrepareJob, which the
// test RPC runs as the server would), passed through by the agent.
func TestJobs_RegisterValidation(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("PUT", "/v1/jobs", `{"Job": {
	  "ID": "bad job",
	  "Priority": 500,
	  "TaskGroups": [{"Name": "g", "Count": -1, "Tasks": [{"Name": "t", "Resources": {"MemoryMB": 1}}]}]
	}}`)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrContains(t, body, "validation errors:")
	must.StrContains(t, body, `job ID "bad job" must not contain spaces`)
	must.StrContains(t, body, "priority")
	must.StrContains(t, body, `group "g"`)
	must.StrContains(t, body, `task "t"`)
}

func TestJobs_RegisterWarnsAboutIgnoredBlocks(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.onWrite("Job.Register", func(args, reply interface{}) error {
		reply.(*structs.JobRegisterResponse).Warnings = "server warning"
		return nil
	})
	resp, body := h.do("PUT", "/v1/jobs", `{"Job": {
	  "ID": "web",
	  "TaskGroups": [{"Name": "g", "Services": [{"Name": "s", "Provider": "nomad", "CheckRestart": {"Limit": 3}}],
	    "Tasks": [{"Name": "t", "Driver": "raw_exec", "Templates": [{"EmbeddedTmpl": "x"}]}]}]
	}}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var out api.JobRegisterResponse
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.Eq(t, "server warning\n"+
		`group "g": service "s": check_restart blocks are not supported by this server and were ignored`+"\n"+
		`group "g": task "t": template blocks are not supported by this server and were ignored`, out.Warnings)
}

func TestJobs_ServerValidationErrorIs400(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.onWrite("Job.Register", func(args, reply interface{}) error {
		return &structs.ValidationError{Problems: []string{"Enforcing job modify index 0: job already exists"}}
	})
	resp, body := h.do("PUT", "/v1/jobs", registerBody)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "Enforcing job modify index 0: job already exists", body)
}

func TestJobs_ListAndGet(t *testing.T) {
	h := newTestHTTP(t)
	job := mock.Job(mock.JobID("web"))
	must.NoError(t, h.rpc.state.UpsertJob(5, job))
	other := mock.Job(mock.JobID("db"))
	must.NoError(t, h.rpc.state.UpsertJob(6, other))

	_, body := h.do("GET", "/v1/jobs?prefix=we", "")
	var stubs []api.JobListStub
	must.NoError(t, json.Unmarshal([]byte(body), &stubs))
	must.Len(t, 1, stubs)
	must.Eq(t, "web", stubs[0].ID)
	must.NotNil(t, stubs[0].JobSummary)

	resp, body := h.do("GET", "/v1/job/web", "")
	must.Eq(t, "5", resp.Header.Get("X-Nomad-Index"))
	var got api.Job
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	must.Eq(t, "web", *got.ID)
	must.Eq(t, 5, *got.JobModifyIndex)
	must.Eq(t, job.TaskGroups[0].Count, *got.TaskGroups[0].Count)

	// ?meta=true asks for the meta field of stubs.
	h.do("GET", "/v1/jobs?meta=true", "")
	must.Eq(t, &structs.JobStubFields{Meta: true}, h.rpc.lastCall(t, "Job.List").(*structs.JobListRequest).Fields)
}

func TestJobs_SubResources(t *testing.T) {
	h := newTestHTTP(t)
	job := mock.Job(mock.JobID("web"))
	must.NoError(t, h.rpc.state.UpsertJob(5, job))
	node := mock.Node()
	must.NoError(t, h.rpc.state.UpsertNode(6, node))
	eval := mock.Eval(mock.EvalForJob(job))
	must.NoError(t, h.rpc.state.UpsertEvals(7, []*structs.Evaluation{eval}))
	alloc := mock.Alloc(mock.ForJob(job, 0), mock.OnNode(node))
	alloc.EvalID = eval.ID
	must.NoError(t, h.rpc.state.UpsertAllocs(8, []*structs.Allocation{alloc}))

	_, body := h.do("GET", "/v1/job/web/allocations?all=true", "")
	var allocs []api.AllocationListStub
	must.NoError(t, json.Unmarshal([]byte(body), &allocs))
	must.Len(t, 1, allocs)
	must.Eq(t, alloc.ID, allocs[0].ID)
	must.True(t, h.rpc.lastCall(t, "Job.Allocations").(*structs.JobSpecificRequest).All)

	_, body = h.do("GET", "/v1/job/web/evaluations", "")
	var evals []api.Evaluation
	must.NoError(t, json.Unmarshal([]byte(body), &evals))
	must.Len(t, 1, evals)
	must.Eq(t, eval.ID, evals[0].ID)

	_, body = h.do("GET", "/v1/job/web/summary", "")
	var sum api.JobSummary
	must.NoError(t, json.Unmarshal([]byte(body), &sum))
	must.Eq(t, "web", sum.JobID)
	must.MapContainsKey(t, sum.Summary, job.TaskGroups[0].Name)

	_, body = h.do("GET", "/v1/job/web/versions?diffs=true", "")
	var versions api.JobVersionsResponse
	must.NoError(t, json.Unmarshal([]byte(body), &versions))
	must.Len(t, 1, versions.Versions)
	must.True(t, h.rpc.lastCall(t, "Job.GetJobVersions").(*structs.JobVersionsRequest).Diffs)

	// A job with no allocations lists [] and not null.
	_, body = h.do("GET", "/v1/job/none/allocations", "")
	must.Eq(t, "[]\n", body)
	_, body = h.do("GET", "/v1/job/none/evaluations", "")
	must.Eq(t, "[]\n", body)
}

func TestJobs_Deregister(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.onWrite("Job.Deregister", func(args, reply interface{}) error {
		out := reply.(*structs.JobDeregisterResponse)
		out.EvalID, out.EvalCreateIndex, out.JobModifyIndex, out.Index = "e2", 20, 20, 20
		return nil
	})
	resp, body := h.do("DELETE", "/v1/job/batch%2Fdispatch-1?purge=true&global=false&eval_priority=90&no_shutdown_delay=true", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "20", resp.Header.Get("X-Nomad-Index"))
	var out api.JobDeregisterResponse
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.Eq(t, "e2", out.EvalID)
	args := h.rpc.lastCall(t, "Job.Deregister").(*structs.JobDeregisterRequest)
	must.Eq(t, "batch/dispatch-1", args.JobID)
	must.True(t, args.Purge)
	must.False(t, args.Global)
	must.True(t, args.NoShutdownDelay)
	must.Eq(t, 90, args.EvalPriority)
}

func TestJobs_Plan(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.onWrite("Job.Plan", func(args, reply interface{}) error {
		out := reply.(*structs.JobPlanResponse)
		out.JobModifyIndex = 3
		out.Annotations = &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{"cache": {Place: 2}}}
		out.FailedTGAllocs = map[string]*structs.AllocMetric{"cache": {NodesEvaluated: 1}}
		out.Index = 3
		return nil
	})
	resp, body := h.do("POST", "/v1/job/web/plan", `{"Job": {"ID": "web", "TaskGroups": [{"Name": "cache", "Tasks": [{"Name": "t", "Driver": "raw_exec"}]}]}, "Diff": true, "PolicyOverride": true}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "3", resp.Header.Get("X-Nomad-Index"))
	var out api.JobPlanResponse
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.Eq(t, 2, out.Annotations.DesiredTGUpdates["cache"].Place)
	must.Eq(t, 1, out.FailedTGAllocs["cache"].NodesEvaluated)
	must.NotNil(t, out.CreatedEvals)
	args := h.rpc.lastCall(t, "Job.Plan").(*structs.JobPlanRequest)
	must.True(t, args.Diff)
	must.True(t, args.PolicyOverride)
	must.Eq(t, "web", args.Job.ID)
}

func TestJobs_Evaluate(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.onWrite("Job.Evaluate", func(args, reply interface{}) error {
		out := reply.(*structs.JobRegisterResponse)
		out.EvalID, out.Index = "e3", 30
		return nil
	})
	resp, body := h.do("POST", "/v1/job/web/evaluate", `{"JobID": "web", "EvalOptions": {"ForceReschedule": true}}`)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, body, `"EvalID":"e3"`)
	args := h.rpc.lastCall(t, "Job.Evaluate").(*structs.JobEvaluateRequest)
	must.True(t, args.EvalOptions.ForceReschedule)

	// No body at all is accepted.
	resp, _ = h.do("POST", "/v1/job/web/evaluate", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
}

func TestJobs_Parse(t *testing.T) {
	h := newTestHTTP(t)
	hcl := `
variable "count" {
  type    = number
  default = 1
}
job "example" {
  group "cache" {
    count = var.count
    task "redis" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
      }
    }
  }
}`
	body, _ := json.Marshal(api.JobsParseRequest{JobHCL: hcl, Variables: "count = 3", Canonicalize: true})
	resp, out := h.do("POST", "/v1/jobs/parse", string(body))
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(out))
	var job api.Job
	must.NoError(t, json.Unmarshal([]byte(out), &job))
	must.Eq(t, "example", *job.ID)
	must.Eq(t, 3, *job.TaskGroups[0].Count)
	must.Eq(t, 50, *job.Priority) // canonicalized

	// Without Canonicalize the defaults stay unset.
	body, _ = json.Marshal(api.JobsParseRequest{JobHCL: hcl})
	_, out = h.do("POST", "/v1/jobs/parse", string(body))
	must.NoError(t, json.Unmarshal([]byte(out), &job))
	must.Nil(t, job.Priority)

	// Parse errors are 400 with their position; file functions are off.
	body, _ = json.Marshal(api.JobsParseRequest{JobHCL: "job \"x\" {\n  bogus = 1\n}\n"})
	resp, out = h.do("POST", "/v1/jobs/parse", string(body))
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrContains(t, out, "input.hcl:2:3")
	body, _ = json.Marshal(api.JobsParseRequest{JobHCL: "job \"x\" {\n  meta { secret = file(\"/etc/passwd\") }\n}\n"})
	resp, _ = h.do("POST", "/v1/jobs/parse", string(body))
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
}

func TestJobs_Validate(t *testing.T) {
	h := newTestHTTP(t)
	resp, body := h.do("PUT", "/v1/validate/job", `{"Job": {"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "raw_exec"}]}]}}`)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	var out api.JobValidateResponse
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.Eq(t, "", out.Error)
	must.Eq(t, []string{}, out.ValidationErrors)

	_, body = h.do("PUT", "/v1/validate/job", `{"Job": {"ID": "x", "Priority": 1000}}`)
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	must.NotEq(t, "", out.Error)
	must.SliceNotEmpty(t, out.ValidationErrors)
}

// TestJobs_NULInNamesIs400 sends names holding a NUL byte (JSON's
// \u0000): each is refused with 400 naming its field.
func TestJobs_NULInNamesIs400(t *testing.T) {
	cases := []struct{ name, job, want string }{
		{"namespace", `{"ID": "web", "Namespace": "de\u0000fault", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "raw_exec"}]}]}`,
			`namespace "de\x00fault" must not contain null characters`},
		{"group name", `{"ID": "web", "TaskGroups": [{"Name": "g\u0000", "Tasks": [{"Name": "t", "Driver": "raw_exec"}]}]}`,
			`group "g\x00": group name "g\x00" must not contain null characters`},
		{"job meta key", `{"ID": "web", "Meta": {"o\u0000wner": "x"}, "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "raw_exec"}]}]}`,
			`meta key "o\x00wner" must not contain null characters`},
		{"task meta key", `{"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "raw_exec", "Meta": {"k\u0000": "v"}}]}]}`,
			`group "g": task "t": meta key "k\x00" must not contain null characters`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHTTP(t)
			resp, body := h.do("PUT", "/v1/jobs", `{"Job": `+tc.job+`}`)
			must.Eq(t, http.StatusBadRequest, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, tc.want)
		})
	}
}
