package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// These tests run the handlers against the real in-process server of a
// dev agent: real Raft (in memory), FSM, state store, blocking queries and
// event broker.

type realAgent struct {
	t     testing.TB
	agent *Agent
	base  string
	// mgmt is the management secret when the test bootstrapped ACLs.
	mgmt string
}

// startDevAgent starts a -dev agent on a free port and waits until its
// server leads.
func startDevAgent(t *testing.T) *realAgent {
	t.Helper()
	cfg := devConfig(t)
	cfg.LogLevel = "WARN"
	a, err := NewAgent(cfg, testLogOutput())
	must.NoError(t, err)
	t.Cleanup(func() { a.Shutdown() })
	ra := &realAgent{t: t, agent: a, base: "http://" + a.HTTPAddr()}
	ra.waitForLeader()
	return ra
}

// waitForLeader polls until the server has elected itself.
func (ra *realAgent) waitForLeader() {
	ra.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := ra.do("GET", "/v1/status/leader", "")
		if body != `""`+"\n" {
			return
		}
		if time.Now().After(deadline) {
			ra.t.Fatal("the server never elected itself")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (ra *realAgent) do(method, path, body string) (*http.Response, string) {
	ra.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ra.base+path, rd)
	must.NoError(ra.t, err)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(ra.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must.NoError(ra.t, err)
	return resp, string(b)
}

// registerNode registers a node the way a client does.
func (ra *realAgent) registerNode() *structs.Node {
	ra.t.Helper()
	node := mock.Node()
	var out structs.NodeUpdateResponse
	must.NoError(ra.t, ra.agent.server.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node.Copy()}, &out))
	return node
}

// unplaceableBody registers registerBody's job in a datacenter no node
// is in: the dev agent's client never runs it, so the test sees what the
// servers do alone.
var unplaceableBody = strings.Replace(registerBody, `["dc1"]`, `["nowhere"]`, 1)

func TestRealServer_Jobs(t *testing.T) {
	ra := startDevAgent(t)

	resp, body := ra.do("PUT", "/v1/jobs", unplaceableBody)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var reg api.JobRegisterResponse
	must.NoError(t, json.Unmarshal([]byte(body), &reg))
	must.NotEq(t, "", reg.EvalID)
	must.Eq(t, fmt.Sprint(reg.JobModifyIndex), resp.Header.Get("X-Nomad-Index"))

	// The same EnforceIndex 0 registration now conflicts: a 400.
	resp, body = ra.do("PUT", "/v1/jobs", unplaceableBody)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, "Enforcing job modify index 0: job already exists", body)

	// Validation problems are all listed, and nothing is written.
	resp, body = ra.do("PUT", "/v1/jobs", `{"Job": {"ID": "bad", "Priority": 500, "TaskGroups": [{"Name": "g", "Count": -1}]}}`)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.StrContains(t, body, "validation errors:")
	resp, _ = ra.do("GET", "/v1/job/bad", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)

	resp, body = ra.do("GET", "/v1/jobs", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, "true", resp.Header.Get("X-Nomad-KnownLeader"))
	must.Eq(t, "0", resp.Header.Get("X-Nomad-LastContact"))
	var stubs []api.JobListStub
	must.NoError(t, json.Unmarshal([]byte(body), &stubs))
	must.Len(t, 1, stubs)
	// Running once a worker opened its deployment.
	must.SliceContains(t, []string{"pending", "running"}, stubs[0].Status)

	_, body = ra.do("GET", "/v1/job/web", "")
	var job api.Job
	must.NoError(t, json.Unmarshal([]byte(body), &job))
	must.Eq(t, 2, *job.TaskGroups[0].Count)

	_, body = ra.do("GET", "/v1/job/web/summary", "")
	var sum api.JobSummary
	must.NoError(t, json.Unmarshal([]byte(body), &sum))
	must.MapContainsKey(t, sum.Summary, "cache")

	// The registration's eval, and the blocked eval a worker may already
	// have left behind.
	_, body = ra.do("GET", "/v1/job/web/evaluations", "")
	var evals []api.Evaluation
	must.NoError(t, json.Unmarshal([]byte(body), &evals))
	found := false
	for _, e := range evals {
		if e.ID == reg.EvalID {
			found = true
			must.Eq(t, 70, e.Priority)
		}
	}
	must.True(t, found, must.Sprintf("evals %+v", evals))

	_, body = ra.do("GET", "/v1/job/web/allocations", "")
	must.Eq(t, "[]\n", body)

	_, body = ra.do("GET", "/v1/evaluation/"+reg.EvalID, "")
	var eval api.Evaluation
	must.NoError(t, json.Unmarshal([]byte(body), &eval))
	must.Eq(t, "job-register", eval.TriggeredBy)
	_, body = ra.do("GET", "/v1/evaluation/"+reg.EvalID+"/allocations", "")
	must.Eq(t, "[]\n", body)

	// The dry run schedules for real: no node, so the group would fail.
	resp, body = ra.do("POST", "/v1/job/web/plan", `{"Job": {"ID": "web", "Datacenters": ["nowhere"], "TaskGroups": [{"Name": "cache", "Count": 3, "Tasks": [{"Name": "t", "Driver": "raw_exec"}]}]}, "Diff": true}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var plan api.JobPlanResponse
	must.NoError(t, json.Unmarshal([]byte(body), &plan))
	must.Eq(t, 3, plan.Annotations.DesiredTGUpdates["cache"].Place)
	must.MapContainsKey(t, plan.FailedTGAllocs, "cache")
	must.NotNil(t, plan.Diff)

	resp, body = ra.do("POST", "/v1/job/web/evaluate", `{"JobID": "web"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))

	_, body = ra.do("GET", "/v1/job/web/versions", "")
	var versions api.JobVersionsResponse
	must.NoError(t, json.Unmarshal([]byte(body), &versions))
	must.Len(t, 1, versions.Versions)

	resp, body = ra.do("DELETE", "/v1/job/web?purge=true", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, body = ra.do("GET", "/v1/job/web", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	must.Eq(t, "job not found", body)
}

// TestRealServer_BlockingQuery parks a read on the job's index and
// updates the job: the read returns with the update's index. The job is
// unplaceable, so that nothing but the update changes it.
func TestRealServer_BlockingQuery(t *testing.T) {
	ra := startDevAgent(t)
	resp, _ := ra.do("PUT", "/v1/jobs", unplaceableBody)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	waitForBody(t, ra, "/v1/evaluations?job=web&status=pending", "[]")
	resp, _ = ra.do("GET", "/v1/job/web", "")
	index := resp.Header.Get("X-Nomad-Index")

	type result struct {
		index string
		count int
	}
	done := make(chan result, 1)
	go func() {
		r, err := http.Get(ra.base + "/v1/job/web?index=" + index + "&wait=60s")
		if err != nil {
			done <- result{}
			return
		}
		defer r.Body.Close()
		var j api.Job
		json.NewDecoder(r.Body).Decode(&j)
		n := 0
		if len(j.TaskGroups) > 0 && j.TaskGroups[0].Count != nil {
			n = *j.TaskGroups[0].Count
		}
		done <- result{index: r.Header.Get("X-Nomad-Index"), count: n}
	}()

	update := strings.Replace(strings.Replace(unplaceableBody, `"Count": 2`, `"Count": 5`, 1), `"EnforceIndex": true`, `"EnforceIndex": false`, 1)
	resp, body := ra.do("PUT", "/v1/jobs", update)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	got := <-done
	must.Eq(t, 5, got.count)
	must.NotEq(t, index, got.index)

	// Once the servers are done with the update, a bounded wait with
	// nothing new returns the same index.
	waitForBody(t, ra, "/v1/evaluations?job=web&status=pending", "[]")
	resp, _ = ra.do("GET", "/v1/job/web", "")
	settled := resp.Header.Get("X-Nomad-Index")
	resp, _ = ra.do("GET", "/v1/job/web?index="+settled+"&wait=50ms", "")
	must.Eq(t, settled, resp.Header.Get("X-Nomad-Index"))
}

func TestRealServer_Nodes(t *testing.T) {
	ra := startDevAgent(t)
	node := ra.registerNode()

	resp, body := ra.do("GET", "/v1/nodes", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	var stubs []api.NodeListStub
	must.NoError(t, json.Unmarshal([]byte(body), &stubs))
	// The dev agent's own client may have registered too.
	must.SliceContainsFunc(t, stubs, node.ID, func(s api.NodeListStub, id string) bool { return s.ID == id })

	_, body = ra.do("GET", "/v1/node/"+node.ID, "")
	must.StrNotContains(t, body, node.SecretID)
	must.StrContains(t, body, `"Drain":false`)

	resp, body = ra.do("POST", "/v1/node/"+node.ID+"/drain", `{"DrainSpec": {"Deadline": 3600000000000}}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	_, body = ra.do("GET", "/v1/node/"+node.ID, "")
	var got api.Node
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	// The node holds no allocations, so the drainer may finish the drain
	// before this read: then the drain is recorded as complete instead.
	if got.DrainStrategy == nil {
		must.NotNil(t, got.LastDrain, must.Sprint("a drain neither running nor recorded"))
		must.Eq(t, api.DrainStatusComplete, got.LastDrain.Status)
	} else {
		must.StrContains(t, body, `"Drain":true`)
	}
	must.Eq(t, "ineligible", got.SchedulingEligibility)

	resp, body = ra.do("POST", "/v1/node/"+node.ID+"/drain", `{"DrainSpec": null, "MarkEligible": true}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, body = ra.do("POST", "/v1/node/"+node.ID+"/eligibility", `{"Eligibility": "ineligible"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, body = ra.do("POST", "/v1/node/"+node.ID+"/evaluate", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))

	_, body = ra.do("GET", "/v1/node/"+node.ID+"/allocations", "")
	must.Eq(t, "[]\n", body)
	resp, body = ra.do("POST", "/v1/node/nope/drain", `{"DrainSpec": null}`)
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	must.StrHasSuffix(t, "node not found", body)
	resp, _ = ra.do("GET", "/v1/allocation/nope", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = ra.do("POST", "/v1/allocation/nope/stop", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	_, body = ra.do("GET", "/v1/allocations", "")
	must.Eq(t, "[]\n", body)
}

func TestRealServer_OperatorStatusAgent(t *testing.T) {
	ra := startDevAgent(t)

	resp, body := ra.do("GET", "/v1/operator/scheduler/configuration", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	var sc struct {
		SchedulerConfig api.SchedulerConfiguration
	}
	must.NoError(t, json.Unmarshal([]byte(body), &sc))
	must.Eq(t, "binpack", sc.SchedulerConfig.SchedulerAlgorithm)
	modify := sc.SchedulerConfig.ModifyIndex

	// CAS with a stale index does nothing; with the current one it applies.
	_, body = ra.do("PUT", fmt.Sprintf("/v1/operator/scheduler/configuration?cas=%d", modify+100), `{"SchedulerAlgorithm": "spread"}`)
	must.StrContains(t, body, `"Updated":false`)
	_, body = ra.do("PUT", fmt.Sprintf("/v1/operator/scheduler/configuration?cas=%d", modify), `{"SchedulerAlgorithm": "spread"}`)
	must.StrContains(t, body, `"Updated":true`)
	_, body = ra.do("GET", "/v1/operator/scheduler/configuration", "")
	must.StrContains(t, body, `"SchedulerAlgorithm":"spread"`)

	_, body = ra.do("GET", "/v1/operator/raft/configuration", "")
	var raftCfg api.RaftConfiguration
	must.NoError(t, json.Unmarshal([]byte(body), &raftCfg))
	must.Len(t, 1, raftCfg.Servers)
	must.True(t, raftCfg.Servers[0].Leader)
	must.Eq(t, "a1.global", raftCfg.Servers[0].Node)

	_, body = ra.do("GET", "/v1/status/peers", "")
	must.StrContains(t, body, raftCfg.Servers[0].Address)
	_, body = ra.do("GET", "/v1/regions", "")
	must.Eq(t, `["global"]`+"\n", body)
	_, body = ra.do("GET", "/v1/agent/members", "")
	var members api.ServerMembers
	must.NoError(t, json.Unmarshal([]byte(body), &members))
	must.Eq(t, "a1.global", members.Members[0].Name)

	_, body = ra.do("GET", "/v1/agent/self", "")
	var self api.AgentSelf
	must.NoError(t, json.Unmarshal([]byte(body), &self))
	must.Eq(t, "true", self.Stats["nomad"]["leader"])
	must.Eq(t, "Leader", self.Stats["raft"]["state"])
	must.Eq(t, "a1.global", self.Member.Name)

	resp, body = ra.do("GET", "/v1/agent/health", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))

	// Who leads: the agent's own RPC address, as the CLI compares it with
	// the members' tags.
	rpcAddr := fmt.Sprintf("127.0.0.1:%d", ra.agent.Config().Ports.RPC)
	_, body = ra.do("GET", "/v1/status/leader", "")
	must.Eq(t, `"`+rpcAddr+`"`+"\n", body)
	must.Eq(t, rpcAddr, raftCfg.Servers[0].Address)
	must.Eq(t, rpcAddr, self.Stats["nomad"]["leader_addr"])
	must.Eq(t, "127.0.0.1", members.Members[0].Tags["rpc_addr"])
	must.Eq(t, strconv.Itoa(ra.agent.Config().Ports.RPC), members.Members[0].Tags["port"])

	// The server's worker pool: list, resize, pause and resume.
	resp, body = ra.do("GET", "/v1/agent/schedulers", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var workers api.AgentSchedulerWorkersInfo
	must.NoError(t, json.Unmarshal([]byte(body), &workers))
	must.Eq(t, "a1.global", workers.ServerID)
	must.SliceNotEmpty(t, workers.Schedulers)
	resp, body = ra.do("PUT", "/v1/agent/schedulers/config", `{"num_schedulers":1,"enabled_schedulers":["service","_core"],"paused":true}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.Eq(t, `{"server_id":"a1.global","num_schedulers":1,"enabled_schedulers":["service","_core"],"paused":true}`+"\n", body)
	waitForBody(t, ra, "/v1/agent/schedulers", `"status":"Paused"`)
	resp, body = ra.do("PUT", "/v1/agent/schedulers/config", `{"num_schedulers":1,"enabled_schedulers":["service","_core"],"paused":false}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.StrContains(t, body, `"paused":false`)
	resp, body = ra.do("PUT", "/v1/agent/schedulers/config", `{"num_schedulers":1,"enabled_schedulers":["service"]}`)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode, must.Sprint(body))

	resp, _ = ra.do("PUT", "/v1/system/gc", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)

	resp, body = ra.do("GET", "/v1/metrics", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, body, `"Gauges"`)
}

func TestRealServer_EventStream(t *testing.T) {
	ra := startDevAgent(t)
	sc := openStreamURL(t, ra.base+"/v1/event/stream?topic=Job:web&topic=Evaluation")
	resp, _ := ra.do("PUT", "/v1/jobs", registerBody)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	ev := decodeLine(t, nextLine(t, sc))
	must.Len(t, 2, ev.Events)
	must.Eq(t, "JobRegistered", ev.Events[0].Type)
	must.Eq(t, "EvaluationUpdated", ev.Events[1].Type)
	job, err := ev.Events[0].Job()
	must.NoError(t, err)
	must.Eq(t, "web", *job.ID)

	// A late subscriber replays the same batch from its index.
	sc = openStreamURL(t, fmt.Sprintf("%s/v1/event/stream?index=%d&topic=Job", ra.base, ev.Index))
	replay := decodeLine(t, nextLine(t, sc))
	must.Eq(t, ev.Index, replay.Index)
	must.Len(t, 1, replay.Events)

	// Shutting the agent down ends open streams (after the events of the
	// job's scheduling that are still on their way).
	must.NoError(t, ra.agent.Shutdown())
	for i := 0; ; i++ {
		line := nextLine(t, sc)
		if line == "<closed: EOF>" {
			break
		}
		if i == 100 {
			t.Fatalf("the stream did not end after shutdown; last line: %s", line)
		}
	}
}

func testLogOutput() io.Writer {
	if os.Getenv("AGENT_TEST_LOGS") != "" {
		return os.Stderr
	}
	return io.Discard
}

// waitForBody polls path until its body contains want.
func waitForBody(t *testing.T, ra *realAgent, path, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := ra.do("GET", path, "")
		if strings.Contains(body, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never contained %s; last: %s", path, want, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRealServer_RestartKeepsState runs a server agent on a data dir,
// registers a job, restarts, and finds the job again.
func TestRealServer_RestartKeepsState(t *testing.T) {
	dir := t.TempDir()
	start := func() *realAgent {
		cfg, err := LoadConfig([]string{"-server", "-bootstrap-expect", "1", "-data-dir", dir,
			"-bind", "127.0.0.1", "-node", "s1"}, io.Discard)
		must.NoError(t, err)
		// Free ports: a server agent listens for RPC and gossip.
		cfg.Ports.HTTP, cfg.Ports.RPC, cfg.Ports.Serf = 0, 0, 0
		a, err := NewAgent(cfg, testLogOutput())
		must.NoError(t, err)
		t.Cleanup(func() { a.Shutdown() })
		ra := &realAgent{t: t, agent: a, base: "http://" + a.HTTPAddr()}
		ra.waitForLeader()
		return ra
	}
	ra := start()
	resp, body := ra.do("PUT", "/v1/jobs", registerBody)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.NoError(t, ra.agent.Shutdown())

	ra = start()
	resp, body = ra.do("GET", "/v1/job/web", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.StrContains(t, body, `"ID":"web"`)
}

// TestRealServer_UnknownRegionIs400 asks endpoints of every kind for a
// region no server knows: the caller named it, so each answers 400 with
// the servers' "No path to region", and nothing is written.
func TestRealServer_UnknownRegionIs400(t *testing.T) {
	ra := startDevAgent(t)
	const q = "region=nowhere"
	cases := []struct{ method, path, body string }{
		{"GET", "/v1/jobs?" + q, ""},
		{"PUT", "/v1/jobs?" + q, unplaceableBody},
		{"GET", "/v1/job/web?" + q, ""},
		{"GET", "/v1/job/web/allocations?" + q, ""},
		{"PUT", "/v1/job/web/plan?" + q, unplaceableBody},
		{"DELETE", "/v1/job/web?" + q, ""},
		{"GET", "/v1/nodes?" + q, ""},
		{"GET", "/v1/evaluations?" + q, ""},
		{"GET", "/v1/allocations?" + q, ""},
		{"GET", "/v1/deployments?" + q, ""},
		{"GET", "/v1/status/leader?" + q, ""},
		{"GET", "/v1/status/peers?" + q, ""},
		{"GET", "/v1/agent/members?" + q, ""},
		{"GET", "/v1/operator/scheduler/configuration?" + q, ""},
		{"GET", "/v1/operator/raft/configuration?" + q, ""},
		{"PUT", "/v1/system/gc?" + q, ""},
		{"GET", "/v1/operator/snapshot?" + q, ""},
		{"GET", "/v1/event/stream?" + q, ""},
	}
	// A stream served for the wrong region would never end: bounded.
	hc := &http.Client{Timeout: 10 * time.Second}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, ra.base+tc.path, strings.NewReader(tc.body))
			must.NoError(t, err)
			resp, err := hc.Do(req)
			must.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			must.NoError(t, err)
			must.Eq(t, http.StatusBadRequest, resp.StatusCode, must.Sprint(string(body)))
			must.Eq(t, `No path to region "nowhere"`, string(body))
		})
	}
	resp, _ := ra.do("GET", "/v1/job/web", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	// The agent's own region is served as always.
	resp, body := ra.do("GET", "/v1/jobs?region=global", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
}

// memory_limit reaches the server in bytes; unset, the server has none.
func TestServerConfig_MemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  uint64
	}{{"", 0}, {"2GB", 2_000_000_000}, {"1536MiB", 1536 << 20}} {
		c := devConfig(t)
		c.Server.MemoryLimit = tc.value
		must.Eq(t, tc.want, serverConfig(c).MemoryLimit, must.Sprint(tc.value))
	}
}
