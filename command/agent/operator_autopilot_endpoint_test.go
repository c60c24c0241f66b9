package agent

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

func TestRealServer_Autopilot(t *testing.T) {
	ra := startDevAgent(t)

	resp, body := ra.do("GET", "/v1/operator/autopilot/configuration", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	// Durations travel as strings, as Nomad's.
	must.StrContains(t, body, `"LastContactThreshold":"200ms"`)
	must.StrContains(t, body, `"ServerStabilizationTime":"10s"`)
	var cfg api.AutopilotConfiguration
	must.NoError(t, json.Unmarshal([]byte(body), &cfg))
	must.True(t, cfg.CleanupDeadServers)
	must.Eq(t, uint64(250), cfg.MaxTrailingLogs)

	resp, body = ra.do("PUT", "/v1/operator/autopilot/configuration",
		`{"CleanupDeadServers":false,"LastContactThreshold":"1s","MaxTrailingLogs":10,"MinQuorum":1,"ServerStabilizationTime":"5s"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "true", body[:4])

	// A check-and-set on a stale index answers false and changes nothing.
	resp, body = ra.do("PUT", "/v1/operator/autopilot/configuration?cas=1", `{"CleanupDeadServers":true}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "false", body[:5])
	resp, body = ra.do("GET", "/v1/operator/autopilot/configuration", "")
	must.NoError(t, json.Unmarshal([]byte(body), &cfg))
	must.False(t, cfg.CleanupDeadServers)
	must.Eq(t, time.Second, cfg.LastContactThreshold)
	must.Eq(t, uint64(10), cfg.MaxTrailingLogs)

	resp, body = ra.do("GET", "/v1/operator/autopilot/health", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var health api.OperatorHealthReply
	must.NoError(t, json.Unmarshal([]byte(body), &health))
	must.True(t, health.Healthy)
	must.Len(t, 1, health.Servers)
	must.Eq(t, []string{health.Leader}, health.Voters)
	must.True(t, health.Servers[0].Leader)
	must.StrContains(t, body, `"LastContact":"0s"`)

	cases := []struct {
		method, path, body string
		code               int
		msg                string
	}{
		{"POST", "/v1/operator/autopilot/configuration", `{}`, http.StatusNotFound, "Invalid method"},
		{"DELETE", "/v1/operator/autopilot/health", "", http.StatusNotFound, "Invalid method"},
		{"PUT", "/v1/operator/autopilot/configuration?cas=x", `{}`, http.StatusBadRequest, "cas"},
		{"PUT", "/v1/operator/autopilot/configuration", `{"LastContactThreshold":"-1s"}`, http.StatusBadRequest, "LastContactThreshold must be >= 0"},
		{"PUT", "/v1/operator/raft/transfer-leadership", "", http.StatusBadRequest, "must specify id or address"},
		{"PUT", "/v1/operator/raft/transfer-leadership?id=a&address=b", "", http.StatusBadRequest, "not both"},
		{"PUT", "/v1/operator/raft/transfer-leadership?id=nosuch", "", http.StatusBadRequest, `id "nosuch" was not found`},
		{"GET", "/v1/operator/raft/transfer-leadership?id=x", "", http.StatusMethodNotAllowed, "Invalid method"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			resp, body := ra.do(tc.method, tc.path, tc.body)
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(body))
			must.StrContains(t, body, tc.msg)
		})
	}
}
