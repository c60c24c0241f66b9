package agent

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

func TestHTTP_QueryParamErrors(t *testing.T) {
	h := newTestHTTP(t)
	cases := []struct {
		path string
		want string
	}{
		{"/v1/jobs?index=abc", "Invalid index"},
		{"/v1/jobs?index=-1", "Invalid index"},
		{"/v1/jobs?index=1&wait=forever", "Invalid wait time"},
		{"/v1/jobs?wait=10", "Invalid wait time"},
		{"/v1/nodes?stale=maybe", "Expect `true` or `false` for `stale` query string parameter"},
		{"/v1/evaluations?per_page=x", "Invalid per_page"},
		{"/v1/allocations?reverse=yes", "Expect `true` or `false` for `reverse` query string parameter"},
		{"/v1/job/x/allocations?all=sometimes", `Failed to parse value of "all" (sometimes) as a bool`},
		{"/v1/job/x?index=1.5", "Invalid index"},
		{"/v1/event/stream?index=x", "Invalid index"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := h.do("GET", tc.path, "")
			must.Eq(t, http.StatusBadRequest, resp.StatusCode)
			must.Eq(t, tc.want, body)
			must.StrHasPrefix(t, "text/plain", resp.Header.Get("Content-Type"))
		})
	}
}

func TestHTTP_QueryOptionsReachTheServer(t *testing.T) {
	h := newTestHTTP(t)
	resp, _ := h.do("GET", "/v1/jobs?namespace=prod&region=r2&stale&prefix=we&filter=Status%3D%3D%22running%22&per_page=5&next_token=t1&reverse=true", "",
		"X-Nomad-Token", "secret")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	// Pagination is the agent's (see list_options.go): the server is
	// asked for the whole list; a job list's filter is the server's, which
	// evaluates it over whole jobs.
	q := h.rpc.lastCall(t, "Job.List").(*structs.JobListRequest).QueryOptions
	must.Eq(t, structs.QueryOptions{
		Region: "r2", Namespace: "prod", AllowStale: true, Prefix: "we", AuthToken: "secret",
		Filter: `Status=="running"`,
	}, q)

	// Defaults: the agent's region, the default namespace; a bearer token.
	h.do("GET", "/v1/jobs?stale=false", "", "Authorization", "Bearer tok")
	q = h.rpc.lastCall(t, "Job.List").(*structs.JobListRequest).QueryOptions
	must.Eq(t, "global", q.Region)
	must.Eq(t, "default", q.Namespace)
	must.False(t, q.AllowStale)
	must.Eq(t, "tok", q.AuthToken)
}

func TestHTTP_BlockingWaitPassedToServer(t *testing.T) {
	cases := []struct {
		query string
		index uint64
		wait  time.Duration
	}{
		{"", 0, 0},
		{"index=5", 5, 0},
		{"index=5&wait=1h", 5, time.Hour},
		{"index=5&wait=1500ms", 5, 1500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			h := newTestHTTP(t)
			h.rpc.onWrite("Job.List", func(args, reply interface{}) error { return nil })
			h.do("GET", "/v1/jobs?"+tc.query, "")
			q := h.rpc.lastCall(t, "Job.List").(*structs.JobListRequest).QueryOptions
			must.Eq(t, tc.index, q.MinQueryIndex)
			must.Eq(t, tc.wait, q.MaxQueryTime)
		})
	}
}

func TestHTTP_ReadHeaders(t *testing.T) {
	h := newTestHTTP(t)
	job := mock.Job()
	must.NoError(t, h.rpc.state.UpsertJob(42, job))

	resp, body := h.do("GET", "/v1/jobs", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "42", resp.Header.Get("X-Nomad-Index"))
	must.Eq(t, "true", resp.Header.Get("X-Nomad-KnownLeader"))
	must.Eq(t, "0", resp.Header.Get("X-Nomad-LastContact"))
	must.Eq(t, "", resp.Header.Get("X-Nomad-NextToken"))
	must.Eq(t, "application/json", resp.Header.Get("Content-Type"))
	must.StrContains(t, body, `"ID":"`+job.ID+`"`)
	must.StrHasSuffix(t, "\n", body)

	// An empty table answers index 0, as Nomad's does.
	h2 := newTestHTTP(t)
	resp, body = h2.do("GET", "/v1/jobs", "")
	must.Eq(t, "0", resp.Header.Get("X-Nomad-Index"))
	must.Eq(t, "[]\n", body)

	h.rpc.onWrite("Job.List", func(args, reply interface{}) error {
		out := reply.(*structs.JobListResponse)
		out.Index, out.LastContact, out.KnownLeader = 9, 1500*time.Millisecond, false
		out.Jobs = []*structs.JobListStub{{ID: "a"}, {ID: "b"}}
		return nil
	})
	resp, _ = h.do("GET", "/v1/jobs?per_page=1", "")
	must.Eq(t, "9", resp.Header.Get("X-Nomad-Index"))
	must.Eq(t, "false", resp.Header.Get("X-Nomad-KnownLeader"))
	must.Eq(t, "1500", resp.Header.Get("X-Nomad-LastContact"))
	must.Eq(t, "b", resp.Header.Get("X-Nomad-NextToken"))
}

// TestHTTP_BlockingQueryWakes blocks a GET on the job list at the current
// index and shows it returns as soon as a write lands, with the new
// index.
func TestHTTP_BlockingQueryWakes(t *testing.T) {
	h := newTestHTTP(t)
	must.NoError(t, h.rpc.state.UpsertJob(10, mock.Job()))

	type result struct {
		index string
		body  string
	}
	done := make(chan result)
	go func() {
		resp, err := http.Get(h.srv.URL + "/v1/jobs?index=10&wait=60s")
		if err != nil {
			done <- result{body: err.Error()}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- result{index: resp.Header.Get("X-Nomad-Index"), body: string(b)}
	}()

	// The request is parked in the store's watch; the write wakes it.
	waitForCall(t, h.rpc, "Job.List")
	job := mock.Job()
	must.NoError(t, h.rpc.state.UpsertJob(11, job))
	got := <-done
	must.Eq(t, "11", got.index)
	must.StrContains(t, got.body, job.ID)
}

func TestHTTP_BlockingQueryTimesOut(t *testing.T) {
	h := newTestHTTP(t)
	must.NoError(t, h.rpc.state.UpsertJob(10, mock.Job()))
	resp, _ := h.do("GET", "/v1/jobs?index=10&wait=20ms", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "10", resp.Header.Get("X-Nomad-Index"))
}

// waitForCall waits until the fake server has seen method, so a test
// knows its request reached the server before it writes.
func waitForCall(t *testing.T, f *testRPC, method string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		for _, c := range f.calls {
			if c.Method == method {
				f.mu.Unlock()
				return
			}
		}
		f.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%s was never called", method)
}

func TestHTTP_Gzip(t *testing.T) {
	h := newTestHTTP(t)
	must.NoError(t, h.rpc.state.UpsertJob(3, mock.Job()))

	req, _ := http.NewRequest("GET", h.srv.URL+"/v1/jobs", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	must.Eq(t, "gzip", resp.Header.Get("Content-Encoding"))
	must.Eq(t, "3", resp.Header.Get("X-Nomad-Index"))
	zr, err := gzip.NewReader(resp.Body)
	must.NoError(t, err)
	var jobs []map[string]any
	must.NoError(t, json.NewDecoder(zr).Decode(&jobs))
	must.Len(t, 1, jobs)

	// Errors are compressed too, with their status.
	req, _ = http.NewRequest("GET", h.srv.URL+"/v1/job/missing", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err = http.DefaultTransport.RoundTrip(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	zr, err = gzip.NewReader(resp.Body)
	must.NoError(t, err)
	b, _ := io.ReadAll(zr)
	must.Eq(t, "job not found", string(b))

	// A body-less answer stays a valid (empty) gzip stream.
	req, _ = http.NewRequest("PUT", h.srv.URL+"/v1/system/gc", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err = http.DefaultTransport.RoundTrip(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)
	b, _ = io.ReadAll(resp.Body)
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err = gzip.NewReader(strings.NewReader(string(b)))
		must.NoError(t, err)
		b, _ = io.ReadAll(zr)
	}
	must.Eq(t, "", string(b))

	// Without Accept-Encoding nothing is compressed.
	resp, body := h.do("GET", "/v1/jobs", "", "Accept-Encoding", "identity")
	must.Eq(t, "", resp.Header.Get("Content-Encoding"))
	must.StrHasPrefix(t, "[{", body)
}

func TestHTTP_Pretty(t *testing.T) {
	h := newTestHTTP(t)
	must.NoError(t, h.rpc.state.UpsertJob(3, mock.Job(mock.JobID("web"))))
	for _, q := range []string{"?pretty", "?pretty=true", "?pretty=1"} {
		_, body := h.do("GET", "/v1/job/web"+q, "")
		must.StrHasPrefix(t, "{\n    \"Stop\": false,\n", body)
	}
	_, body := h.do("GET", "/v1/job/web?pretty=false", "")
	must.StrHasPrefix(t, `{"Stop":false,`, body)
}

func TestHTTP_NotFoundAndMethods(t *testing.T) {
	h := newTestHTTP(t)
	cases := []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/v1/job/nope", 404, "job not found"},
		{"GET", "/v1/job/nope/summary", 404, "job not found"},
		{"GET", "/v1/job/nope/versions", 404, "job versions not found"},
		{"GET", "/v1/node/nope", 404, "node not found"},
		{"GET", "/v1/evaluation/nope", 404, "eval not found"},
		{"GET", "/v1/allocation/nope", 404, "alloc not found"},
		{"GET", "/v1/nonsense", 404, "Invalid URL path"},
		{"DELETE", "/v1/jobs", 405, "Invalid method"},
		{"POST", "/v1/nodes", 405, "Invalid method"},
		{"PATCH", "/v1/job/x", 405, "Invalid method"},
		{"POST", "/v1/job/x/summary", 405, "Invalid method"},
		{"GET", "/v1/job/x/plan", 405, "Invalid method"},
		{"GET", "/v1/jobs/parse", 405, "Invalid method"},
		{"DELETE", "/v1/node/x/drain", 405, "Invalid method"},
		{"PUT", "/v1/evaluation/x", 405, "Invalid method"},
		{"GET", "/v1/allocation/x/stop", 405, "Invalid method"},
		{"POST", "/v1/status/leader", 405, "Invalid method"},
		{"DELETE", "/v1/operator/scheduler/configuration", 405, "Invalid method"},
		{"GET", "/v1/system/gc", 405, "Invalid method"},
		{"GET", "/v1/system/reconcile/summaries", 405, "Invalid method"},
		{"POST", "/v1/metrics", 405, "Invalid method"},
		{"POST", "/v1/event/stream", 405, "Invalid method"},
		{"POST", "/v1/agent/self", 405, "Invalid method"},
		{"DELETE", "/v1/agent/schedulers/config", 405, "Invalid method"},
		{"POST", "/v1/job/x/services", 405, "Invalid method"},
		{"POST", "/v1/job/x/submission", 405, "Invalid method"},
		{"POST", "/v1/job/x/actions", 405, "Invalid method"},
		{"POST", "/v1/job/x/action", 405, "Invalid method"},
		{"GET", "/v1/job/x/action?allocID=a&task=t", 400, "missing action name"},
		{"GET", "/v1/job/x/action?action=a&allocID=a&task=t", 400, "action needs a websocket: send the request with Upgrade: websocket"},
		{"POST", "/v1/job/x/revert", 400, "Request body is empty"},
		{"DELETE", "/v1/job/x/stable", 405, "Invalid method"},
		{"PATCH", "/v1/job/x/versions/v/tag", 405, "Invalid method"},
		{"POST", "/v1/job/x/dispatch", 400, "Request body is empty"},
		{"GET", "/v1/job/x/periodic/force", 405, "Invalid method"},
		{"POST", "/v1/job/x/deployments", 405, "Invalid method"},
		{"GET", "/v1/deployment/nope", 404, "deployment not found"},
		{"GET", "/v1/deployment/", 400, "Missing deployment ID"},
		{"GET", "/v1/deployment/fail/x", 405, "Invalid method"},
		{"POST", "/v1/deployment/unblock/x", 501, "unblocking a multiregion deployment is not supported by this server"},
		{"POST", "/v1/deployments", 405, "Invalid method"},
		{"GET", "/v1/node/x/purge", 405, "Invalid method"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			resp, body := h.do(tc.method, tc.path, "")
			must.Eq(t, tc.code, resp.StatusCode)
			must.Eq(t, tc.body, body)
		})
	}
}

func TestHTTP_BodyErrors(t *testing.T) {
	h := newTestHTTP(t)
	cases := []struct {
		method, path, body string
		want               string
	}{
		{"PUT", "/v1/jobs", "", "Request body is empty"},
		{"PUT", "/v1/jobs", "  \n", "Request body is empty"},
		{"PUT", "/v1/jobs", "{", "Failed to decode request body: invalid JSON at offset 1: unexpected end of JSON input"},
		{"PUT", "/v1/jobs", `{"Job": {"ID": 5}}`, `Failed to decode request body: field "Job.ID": cannot use a JSON number as string`},
		{"PUT", "/v1/jobs", `{}`, "Job must be specified"},
		{"POST", "/v1/job/web", `{"Job": {"ID": "other"}}`, "Job ID does not match name"},
		{"POST", "/v1/job/web/plan", `{"Job": {"ID": "other"}}`, "Job ID does not match"},
		{"POST", "/v1/job/web/plan", ``, "Request body is empty"},
		{"POST", "/v1/job/web/evaluate", `{"JobID": "other"}`, "Job ID does not match"},
		{"POST", "/v1/jobs/parse", `{"JobHCL": ""}`, "Job spec is empty"},
		{"POST", "/v1/node/n1/drain", `[`, "Failed to decode request body: invalid JSON at offset 1: unexpected end of JSON input"},
		{"POST", "/v1/node/n1/eligibility", `{"Eligibility": "maybe"}`, `invalid scheduling eligibility "maybe"`},
		{"PUT", "/v1/operator/scheduler/configuration", `{"SchedulerAlgorithm": "random"}`, "invalid scheduler algorithm: random"},
		{"PUT", "/v1/operator/scheduler/configuration?cas=x", `{}`, "Invalid cas index"},
		{"PUT", "/v1/agent/schedulers/config", `{"num_schedulers": 1, "enabled_schedulers": ["service"]}`, "Invalid request"},
		{"PUT", "/v1/agent/schedulers/config", `{"num_schedulers": -1, "enabled_schedulers": ["_core"]}`, "Invalid request"},
		{"PUT", "/v1/agent/schedulers/config", `{"num_schedulers": 1, "enabled_schedulers": ["_core", "gpu"]}`, "Invalid request"},
		{"PUT", "/v1/jobs", `{"Job": {"ID": "x"}, "EvalPriority": 101}`, "eval priority must be between 1 and 100, got 101"},
		{"DELETE", "/v1/job/x?eval_priority=abc", "", `Failed to parse value of "eval_priority" (abc) as an integer`},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path+" "+tc.body, func(t *testing.T) {
			resp, body := h.do(tc.method, tc.path, tc.body)
			must.Eq(t, http.StatusBadRequest, resp.StatusCode)
			must.Eq(t, tc.want, body)
		})
	}
}

func TestHTTP_ErrorStatus(t *testing.T) {
	cases := []struct {
		err  error
		code int
		msg  string
	}{
		{errors.New("boom"), 500, "boom"},
		{structs.ErrNoLeader, 500, "No cluster leader"},
		{&structs.ValidationError{Problems: []string{"a", "b"}}, 400, "2 validation errors:\n  * a\n  * b"},
		{fmt.Errorf("job %q: %w", "web", &structs.ValidationError{Problems: []string{"a"}}), 400, `job "web": a`},
		{errors.New("RPC Error:: 409,conflict here"), 409, "conflict here"},
		{errors.New("calling server: RPC Error:: 404,job not found"), 404, "calling server: job not found"},
		{errors.New("RPC Error:: abc,not a code"), 500, "RPC Error:: abc,not a code"},
		{fmt.Errorf("draining: %w", structs.ErrUnknownNode), 404, "draining: node not found"},
		// Text alone is not a status: only the coded form crosses a hop.
		{errors.New(`stopping "x": alloc not found`), 500, `stopping "x": alloc not found`},
		{structs.ErrJobRegistrationOff, 403, structs.ErrJobRegistrationOff.Error()},
		{codedError(418, "teapot"), 418, "teapot"},
		{structs.NewErrRPCCoded(400, "Enforcing job modify index 7: job exists with conflicting job modify index: 10"), 400,
			"Enforcing job modify index 7: job exists with conflicting job modify index: 10"},
		{structs.ClassifyError(&structs.ValidationError{Problems: []string{"a", "b"}}), 400, "2 validation errors:\n  * a\n  * b"},
	}
	for _, tc := range cases {
		code, msg := errorStatus(tc.err)
		must.Eq(t, tc.code, code, must.Sprint(tc.err))
		must.Eq(t, tc.msg, msg)
	}
}

func TestHTTP_RPCErrorsPassThrough(t *testing.T) {
	h := newTestHTTP(t)
	h.rpc.err = structs.ErrNoLeader
	resp, body := h.do("GET", "/v1/jobs", "")
	must.Eq(t, 500, resp.StatusCode)
	must.Eq(t, "No cluster leader", body)
}

func TestSplitObjectPath(t *testing.T) {
	cases := []struct {
		path    string
		id, sub string
	}{
		{"/v1/job/web", "web", ""},
		{"/v1/job/web/allocations", "web", "allocations"},
		{"/v1/job/batch%2Fdispatch-1-abc/allocations", "batch/dispatch-1-abc", "allocations"},
		{"/v1/job/batch/dispatch-1-abc", "batch/dispatch-1-abc", ""},
		{"/v1/job/batch/dispatch-1-abc/summary", "batch/dispatch-1-abc", "summary"},
		{"/v1/job/web/periodic/force", "web", "periodic/force"},
		{"/v1/job/web%20site", "web site", ""},
		{"/v1/job/", "", ""},
	}
	for _, tc := range cases {
		r, _ := http.NewRequest("GET", "http://x"+tc.path, nil)
		id, sub := splitObjectPath(r, "/v1/job/", jobSubresources, jobUnsupported)
		must.Eq(t, tc.id, id, must.Sprint(tc.path))
		must.Eq(t, tc.sub, sub, must.Sprint(tc.path))
	}
}

func TestHTTP_PprofOnlyWithDebug(t *testing.T) {
	h := newTestHTTP(t)
	resp, _ := h.do("GET", "/v1/agent/pprof/cmdline", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)

	// Named profiles are served under the agent's prefix, not the index.
	resp, body := h.do("GET", "/v1/agent/pprof/heap?debug=1", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, body, "heap profile:")
	resp, body = h.do("GET", "/v1/agent/pprof/goroutine?debug=1", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, body, "goroutine profile:")
	resp, body = h.do("GET", "/v1/agent/pprof/", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, body, "Types of profiles available")
	resp, _ = h.do("GET", "/v1/agent/pprof/nosuch", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	// The api package sends seconds, debug and gc as 0 when unset, and
	// names the agent to profile; this agent profiles only itself.
	resp, body = h.do("GET", "/v1/agent/pprof/heap?seconds=0&debug=0&gc=1&node_id=&server_id=", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, body = h.do("GET", "/v1/agent/pprof/profile?seconds=0.1", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, body = h.do("GET", "/v1/agent/pprof/profile?seconds=1&server_id=unknown.global", "")
	must.Eq(t, http.StatusInternalServerError, resp.StatusCode)
	must.Eq(t, "unknown Nomad server unknown.global", body)
	resp, _ = h.do("GET", "/v1/agent/pprof/heap?seconds=x", "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)

	h = newTestHTTP(t, func(c *HTTPServerConfig) { c.Agent.EnableDebug = false })
	resp, _ = h.do("GET", "/v1/agent/pprof/cmdline", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
}

func TestHTTP_Start(t *testing.T) {
	h := newTestHTTP(t)
	ln := listen(t)
	h.http.Start(ln)
	resp, err := http.Get("http://" + h.http.Addr().String() + "/v1/status/leader")
	must.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	must.Eq(t, strconv.Quote("127.0.0.1:4647")+"\n", string(b))
	must.NoError(t, h.http.Shutdown(t.Context()))
}
