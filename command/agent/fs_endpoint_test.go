package agent

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/client"
	"github.com/opennomad/nomad/structs"
	"github.com/opennomad/nomad/structs/mock"
)

// startClientAgent starts a -dev agent whose client offers mock_driver,
// and places one alloc of a service job on it whose task "web" prints
// "hello\n" and runs until stopped. It returns the agent and the alloc.
func startClientAgent(t *testing.T) (*realAgent, *structs.Allocation) {
	t.Helper()
	return startClientAgentRunning(t, "mock_driver", map[string]interface{}{"stdout_string": "hello\n"}, nil)
}

// startClientAgentRunning starts a -dev agent whose client offers
// mock_driver and raw_exec, changed by mod when set, and places one alloc
// whose task "web" runs under driver with config. It returns once the
// alloc runs. With ACLs on, it bootstraps them (the secret is ra.mgmt).
func startClientAgentRunning(t testing.TB, driver string, config map[string]interface{}, mod func(*Config)) (*realAgent, *structs.Allocation) {
	t.Helper()
	return startClientAgentRunningJob(t, driver, config, mod, nil)
}

// startClientAgentRunningJob is startClientAgentRunning with the job's
// task changed by taskMod first.
func startClientAgentRunningJob(t testing.TB, driver string, config map[string]interface{}, mod func(*Config),
	taskMod func(*structs.Task)) (*realAgent, *structs.Allocation) {
	t.Helper()
	// A mock_driver task without run_for exits at once (as Nomad's); these
	// tests want it running until they stop it.
	if _, ok := config["run_for"]; driver == "mock_driver" && !ok {
		config = maps.Clone(config)
		if config == nil {
			config = map[string]interface{}{}
		}
		config["run_for"] = "1h"
	}
	cfg := devConfig(t)
	cfg.LogLevel = "WARN"
	cfg.Client.Options = map[string]string{client.OptionMockDriverEnable: "true", client.OptionRawExecEnable: "true"}
	if mod != nil {
		mod(cfg)
	}
	a, err := NewAgent(cfg, testLogOutput())
	must.NoError(t, err)
	t.Cleanup(func() { a.Shutdown() })
	ra := &realAgent{t: t, agent: a, base: "http://" + a.HTTPAddr()}
	ra.waitForLeader()

	srv := a.server.(*localServer).srv
	nodeID := a.client.NodeID()
	deadline := time.Now().Add(10 * time.Second)
	var node *structs.Node
	for node == nil || node.Status != structs.NodeStatusReady {
		if time.Now().After(deadline) {
			t.Fatal("the client's node never became ready")
		}
		time.Sleep(10 * time.Millisecond)
		node, err = srv.State().NodeByID(nil, nodeID)
		must.NoError(t, err)
	}

	job := mock.Job(mock.Count(1))
	tg := job.TaskGroups[0]
	tg.Networks = nil
	tg.Tasks[0].Driver = driver
	tg.Tasks[0].Config = config
	if taskMod != nil {
		taskMod(tg.Tasks[0])
	}
	req := &structs.JobRegisterRequest{Job: job}
	if cfg.ACL.Enabled {
		ra.mgmt = ra.bootstrapACLs()
		req.AuthToken = ra.mgmt
	}
	var reg structs.JobRegisterResponse
	must.NoError(t, srv.RPC("Job.Register", req, &reg))
	stored, err := srv.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	alloc := mock.Alloc(mock.ForJob(stored, 0), mock.OnNode(node))
	// Committed through Raft as the plan applier commits placements.
	buf, err := structs.Encode(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocUpdateRequest: structs.AllocUpdateRequest{AllocsUpdated: []*structs.Allocation{alloc}, Job: stored},
	})
	must.NoError(t, err)
	must.NoError(t, srv.Raft().Apply(buf, 5*time.Second).Error())
	for {
		got, err := srv.State().AllocByID(nil, alloc.ID)
		must.NoError(t, err)
		if got.ClientStatus == structs.AllocClientStatusRunning {
			return ra, got
		}
		if time.Now().After(deadline) {
			t.Fatal("the alloc never ran")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// frames decodes a framed log stream.
func frames(t *testing.T, body string) []client.StreamFrame {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	var out []client.StreamFrame
	for {
		var f client.StreamFrame
		if err := dec.Decode(&f); err == io.EOF {
			return out
		} else {
			must.NoError(t, err)
		}
		out = append(out, f)
	}
}

func TestClientFS_Logs(t *testing.T) {
	ra, alloc := startClientAgent(t)
	base := "/v1/client/fs/logs/" + alloc.ID + "?task=web&type=stdout"

	resp, body := ra.do("GET", base, "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "application/json", resp.Header.Get("Content-Type"))
	// Data travels base64-encoded in JSON.
	must.StrContains(t, body, `"Data":"aGVsbG8K"`)
	must.Eq(t, []client.StreamFrame{{Offset: 6, Data: []byte("hello\n"), File: "alloc/logs/web.stdout.0"}}, frames(t, body))

	_, body = ra.do("GET", base+"&plain=true", "")
	must.Eq(t, "hello\n", body)
	_, body = ra.do("GET", base+"&plain=true&origin=end&offset=3", "")
	must.Eq(t, "lo\n", body)

	for _, tc := range []struct {
		query string
		code  int
		msg   string
	}{
		{"?type=stdout", 400, "must provide task name"},
		{"?task=web&type=stdin", 400, "must provide log type (stdout/stderr)"},
		{"?task=web&type=stdout&origin=middle", 400, "origin must be start or end"},
		{"?task=db&type=stdout", 400, `unknown task name "db"`},
		{"?task=web&type=stdout&follow=maybe", 400, `Failed to parse value of "follow"`},
		{"?task=web&type=stdout&offset=x", 400, `Failed to parse value of "offset"`},
	} {
		resp, body := ra.do("GET", "/v1/client/fs/logs/"+alloc.ID+tc.query, "")
		must.Eq(t, tc.code, resp.StatusCode, must.Sprint(tc.query, body))
		must.StrContains(t, body, tc.msg)
	}
	resp, body = ra.do("GET", "/v1/client/fs/logs/not-here?task=web&type=stdout", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode, must.Sprint(body))
}

func TestClientFS_LogsFollow(t *testing.T) {
	ra, alloc := startClientAgent(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET",
		ra.base+"/v1/client/fs/logs/"+alloc.ID+"?task=web&type=stdout&follow=true", nil)
	must.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var f client.StreamFrame
	must.NoError(t, dec.Decode(&f))
	must.Eq(t, "hello\n", string(f.Data))
	// Idle, the stream sends heartbeats and stays open.
	var hb client.StreamFrame
	must.NoError(t, dec.Decode(&hb))
	must.Eq(t, client.StreamFrame{}, hb)
}

func TestClientFS_Files(t *testing.T) {
	ra, alloc := startClientAgent(t)
	resp, body := ra.do("GET", "/v1/client/fs/ls/"+alloc.ID, "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var root []client.AllocFileInfo
	must.NoError(t, json.Unmarshal([]byte(body), &root))
	must.Eq(t, "alloc", root[0].Name)
	must.True(t, root[0].IsDir)

	resp, body = ra.do("GET", "/v1/client/fs/stat/"+alloc.ID+"?path=alloc/logs/web.stdout.0", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.StrContains(t, body, `"Size":6`)
	_, body = ra.do("GET", "/v1/client/fs/cat/"+alloc.ID+"?path=alloc/logs/web.stdout.0", "")
	must.Eq(t, "hello\n", body)
	_, body = ra.do("GET", "/v1/client/fs/readat/"+alloc.ID+"?path=alloc/logs/web.stdout.0&offset=1&limit=3", "")
	must.Eq(t, "ell", body)

	for _, tc := range []struct {
		path string
		code int
	}{
		{"/v1/client/fs/cat/" + alloc.ID + "?path=../../../etc/passwd", 400},
		{"/v1/client/fs/cat/" + alloc.ID + "?path=web/secrets", 403},
		{"/v1/client/fs/cat/" + alloc.ID + "?path=alloc/nothing", 404},
		{"/v1/client/fs/cat/" + alloc.ID + "?path=alloc", 400},
		{"/v1/client/fs/cat/" + alloc.ID, 400},
		{"/v1/client/fs/ls/not-here", 404},
		{"/v1/client/fs/chmod/" + alloc.ID, 404},
	} {
		resp, body := ra.do("GET", tc.path, "")
		must.Eq(t, tc.code, resp.StatusCode, must.Sprint(tc.path, body))
	}
	resp, _ = ra.do("DELETE", "/v1/client/fs/ls/"+alloc.ID, "")
	must.Eq(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

// TestClientFS_BadRequestsAre4xxWithoutHostPaths sends requests the
// caller got wrong to every file endpoint: each is a 4xx naming what was
// wrong, and no answer tells where the client keeps allocations.
func TestClientFS_BadRequestsAre4xxWithoutHostPaths(t *testing.T) {
	ra, alloc := startClientAgent(t)
	const file = "alloc/logs/web.stdout.0" // "hello\n"
	long := "alloc/" + strings.Repeat("x", 300)
	cases := []struct {
		op, query string
		code      int
		msg       string
	}{
		{"readat", "?path=" + file + "&offset=9223372036854775807&limit=10", 400, `offset 9223372036854775807 is beyond the end of file "` + file + `"`},
		{"readat", "?path=" + file + "&offset=7&limit=1", 400, "offset 7 is beyond the end"},
		{"readat", "?path=" + file + "&offset=-1&limit=1", 400, "offset must be >= 0"},
		{"readat", "?path=" + file + "&offset=0&limit=-1", 400, "limit must be >= 0"},
		{"readat", "?path=" + file + "&offset=99999999999999999999", 400, `Failed to parse value of "offset"`},
		{"readat", "?path=" + file + "/x&offset=0&limit=1", 400, `path "` + file + `/x"`},
		{"readat", "?path=../../etc/passwd&offset=0&limit=1", 400, "escapes the allocation directory"},
		{"cat", "?path=" + file + "/x", 400, `path "` + file + `/x"`},
		{"cat", "?path=" + long, 400, `path "` + long + `"`},
		{"cat", "?path=../another-alloc/" + file, 400, "escapes the allocation directory"},
		{"cat", "?path=/../../", 400, "escapes the allocation directory"},
		{"cat", "?path=alloc/none", 404, `path "alloc/none": no such file or directory`},
		{"stat", "?path=" + file + "/x", 400, `path "` + file + `/x"`},
		{"stat", "?path=../", 400, "escapes the allocation directory"},
		{"stat", "?path=alloc/none", 404, `path "alloc/none"`},
		{"ls", "?path=" + file, 400, `path "` + file + `"`},
		{"ls", "?path=" + file + "/x", 400, `path "` + file + `/x"`},
		{"ls", "?path=../..", 400, "escapes the allocation directory"},
		{"logs", "?task=web&type=stdout&offset=-1", 400, "offset must be >= 0"},
	}
	for _, tc := range cases {
		t.Run(tc.op+tc.query, func(t *testing.T) {
			resp, body := ra.do("GET", "/v1/client/fs/"+tc.op+"/"+alloc.ID+tc.query, "")
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, tc.msg)
			must.StrNotContains(t, body, ra.agent.clientTmpDir)
			must.StrNotContains(t, body, alloc.ID+"/")
		})
	}
	// Reading at the end of the file is not past it: nothing to read.
	resp, body := ra.do("GET", "/v1/client/fs/readat/"+alloc.ID+"?path="+file+"&offset=6&limit=10", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "", body)
}

func TestClientAlloc_StatsRestartSignal(t *testing.T) {
	ra, alloc := startClientAgent(t)
	resp, body := ra.do("GET", "/v1/client/allocation/"+alloc.ID+"/stats", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var usage client.AllocResourceUsage
	must.NoError(t, json.Unmarshal([]byte(body), &usage))
	must.MapContainsKey(t, usage.Tasks, "web")

	resp, body = ra.do("PUT", "/v1/client/allocation/"+alloc.ID+"/signal", `{"Task":"web","Signal":"SIGHUP"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, body = ra.do("PUT", "/v1/client/allocation/"+alloc.ID+"/signal", `{"Task":"web","Signal":"SIGWHAT"}`)
	must.Eq(t, http.StatusBadRequest, resp.StatusCode, must.Sprint(body))
	resp, body = ra.do("POST", "/v1/client/allocation/"+alloc.ID+"/restart", `{"TaskName":"web"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, _ = ra.do("PUT", "/v1/client/allocation/"+alloc.ID+"/restart", `{"TaskName":"nope"}`)
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = ra.do("GET", "/v1/client/allocation/"+alloc.ID+"/restart", "")
	must.Eq(t, http.StatusMethodNotAllowed, resp.StatusCode)
	// exec is served as a websocket only (client_exec_endpoint_test.go).
	resp, _ = ra.do("GET", "/v1/client/allocation/"+alloc.ID+"/exec", "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
}

// TestClientEndpoints_NomadAPICompat reads logs and files and restarts and
// signals tasks through HashiCorp's own Go client.
func TestClientEndpoints_NomadAPICompat(t *testing.T) {
	ra, alloc := startClientAgent(t)
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: ra.base})
	must.NoError(t, err)
	a, _, err := c.Allocations().Info(alloc.ID, nil)
	must.NoError(t, err)

	cancel := make(chan struct{})
	framesCh, errCh := c.AllocFS().Logs(a, false, "web", "stdout", "start", 0, cancel, nil)
	var got strings.Builder
	for f := range framesCh {
		got.Write(f.Data)
	}
	select {
	case err := <-errCh:
		must.NoError(t, err)
	default:
	}
	must.Eq(t, "hello\n", got.String())

	files, _, err := c.AllocFS().List(a, "alloc/logs", nil)
	must.NoError(t, err)
	must.SliceNotEmpty(t, files)
	rc, err := c.AllocFS().Cat(a, "alloc/logs/web.stdout.0", nil)
	must.NoError(t, err)
	b, _ := io.ReadAll(rc)
	rc.Close()
	must.Eq(t, "hello\n", string(b))

	stats, err := c.Allocations().Stats(a, nil)
	must.NoError(t, err)
	must.MapContainsKey(t, stats.Tasks, "web")
	must.NoError(t, c.Allocations().Signal(a, nil, "web", "SIGUSR1"))
	must.NoError(t, c.Allocations().Restart(a, "web", nil))
}

// An agent without a client forwards what names an allocation or node
// (client_forward_test.go) and refuses what names neither.
func TestClientEndpoints_AgentWithoutClient(t *testing.T) {
	h := newTestHTTP(t)
	cases := []struct {
		path string
		want int
	}{
		{"/v1/client/fs/ls/some-alloc", http.StatusNotFound},
		{"/v1/client/stats", http.StatusNotImplemented},
	}
	for _, tc := range cases {
		resp, err := http.Get(h.srv.URL + tc.path)
		must.NoError(t, err)
		resp.Body.Close()
		must.Eq(t, tc.want, resp.StatusCode, must.Sprint(tc.path))
	}
}
