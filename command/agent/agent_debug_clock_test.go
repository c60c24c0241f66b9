package agent

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// The debug clock moves what the server reads as the time (a job's
// submit time here) and puts it back; bad offsets change nothing.
func TestRealServer_DebugClock(t *testing.T) {
	ra := startDevAgent(t)
	cases := []struct {
		method, body string
		status       int
		offset       string
	}{
		{"GET", "", http.StatusOK, "0s"},
		{"PUT", `{"Offset":"2h"}`, http.StatusOK, "2h0m0s"},
		{"PUT", `{"Offset":"soon"}`, http.StatusBadRequest, ""},
		{"GET", "", http.StatusOK, "2h0m0s"},
	}
	for _, tc := range cases {
		resp, body := ra.do(tc.method, "/v1/agent/debug/clock", tc.body)
		must.Eq(t, tc.status, resp.StatusCode, must.Sprint(body))
		if tc.offset != "" {
			var got debugClock
			must.NoError(t, json.Unmarshal([]byte(body), &got))
			must.Eq(t, tc.offset, got.Offset)
		}
	}

	resp, body := ra.do("PUT", "/v1/jobs", registerBody)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, body = ra.do("GET", "/v1/job/web", "")
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	var job struct{ SubmitTime int64 }
	must.NoError(t, json.Unmarshal([]byte(body), &job))
	ahead := time.Until(time.Unix(0, job.SubmitTime))
	must.Greater(t, 110*time.Minute, ahead, must.Sprint("the submit time is read from the moved clock"))

	resp, _ = ra.do("PUT", "/v1/agent/debug/clock", `{"Offset":"0s"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode)
}

// Without enable_debug the route is not there.
func TestDebugClock_NeedsEnableDebug(t *testing.T) {
	h := newTestHTTP(t, func(c *HTTPServerConfig) { c.Agent.EnableDebug = false })
	resp, _ := h.do("GET", "/v1/agent/debug/clock", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)
}
