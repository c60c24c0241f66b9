package agent

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

// TestAgent_SchedulersPause: a dev agent pauses and resumes one worker
// through /v1/agent/schedulers/pause, names itself with ?server_id=, and
// refuses an unknown server, an unknown worker and a body without
// "paused".
func TestAgent_SchedulersPause(t *testing.T) {
	ra := startDevAgent(t)
	read := func(path string) api.AgentSchedulerWorkersInfo {
		t.Helper()
		resp, body := ra.do("GET", path, "")
		must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
		var info api.AgentSchedulerWorkersInfo
		must.NoError(t, json.Unmarshal([]byte(body), &info))
		return info
	}
	own := read("/v1/agent/schedulers")
	must.SliceNotEmpty(t, own.Schedulers)
	named := read("/v1/agent/schedulers?server_id=" + own.ServerID)
	must.Eq(t, own.ServerID, named.ServerID)
	must.Eq(t, own.Schedulers[0].ID, named.Schedulers[0].ID)
	must.False(t, *named.Paused)

	id := own.Schedulers[0].ID
	resp, body := ra.do("PUT", "/v1/agent/schedulers/pause?server_id="+own.ServerID, `{"paused":true,"worker_id":"`+id+`"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.StrContains(t, body, `"operator_paused":true`)
	deadline := time.Now().Add(10 * time.Second)
	for read("/v1/agent/schedulers").Schedulers[0].Status != "Paused" {
		if time.Now().After(deadline) {
			t.Fatal("the worker never paused")
		}
		time.Sleep(10 * time.Millisecond)
	}
	must.True(t, read("/v1/agent/schedulers").Schedulers[0].OperatorPaused)
	resp, _ = ra.do("POST", "/v1/agent/schedulers/pause", `{"paused":false,"worker_id":"`+id+`"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.False(t, read("/v1/agent/schedulers").Schedulers[0].OperatorPaused)

	cases := []struct {
		name, method, path, body string
		code                     int
		has                      string
	}{
		{"an unknown server", "GET", "/v1/agent/schedulers?server_id=nowhere.global", "", 404, "nowhere.global"},
		{"an unknown worker", "PUT", "/v1/agent/schedulers/pause", `{"paused":true,"worker_id":"nope"}`, 404, "nope"},
		{"no paused field", "PUT", "/v1/agent/schedulers/pause", `{"worker_id":"` + id + `"}`, 400, "paused"},
		{"a read", "GET", "/v1/agent/schedulers/pause", "", 405, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := ra.do(c.method, c.path, c.body)
			must.Eq(t, c.code, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, c.has)
		})
	}
}
