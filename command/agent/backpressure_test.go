package agent

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

// A dev agent with no scheduling workers and an eval backlog limit of 1:
// the first registration's eval stays in the broker, so the second
// registration is refused with 429 and a Retry-After, and is not stored.
// A scheduler configuration write that leaves the limit out (as Nomad's
// clients do) keeps it.
func TestRealServer_BackpressureAnswers429(t *testing.T) {
	ra := startDevAgentWith(t, func(c *Config) {
		c.Server.NumSchedulers = 0
		c.Server.DefaultSchedulerConfig.EvalBacklogLimit = 1
	})

	resp, body := ra.do("PUT", "/v1/jobs", unplaceableBody)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))

	second := strings.Replace(unplaceableBody, `"ID": "web"`, `"ID": "api"`, 1)
	resp, body = ra.do("PUT", "/v1/jobs", second)
	must.Eq(t, http.StatusTooManyRequests, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "1", resp.Header.Get("Retry-After"))
	must.Eq(t, "too many evaluations waiting: 1 ready or blocked, limit 1; retry after 1s", body)
	resp, _ = ra.do("GET", "/v1/job/api", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)

	resp, body = ra.do("PUT", "/v1/operator/scheduler/configuration", `{"SchedulerAlgorithm": "spread"}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, body = ra.do("GET", "/v1/operator/scheduler/configuration", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	var got api.SchedulerConfigurationResponse
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	must.Eq(t, "spread", got.SchedulerConfig.SchedulerAlgorithm)
	must.NotNil(t, got.SchedulerConfig.EvalBacklogLimit)
	must.Eq(t, 1, *got.SchedulerConfig.EvalBacklogLimit)

	// Lifting the limit lets the registration through.
	resp, body = ra.do("PUT", "/v1/operator/scheduler/configuration", `{"SchedulerAlgorithm": "spread", "EvalBacklogLimit": 0}`)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
	resp, body = ra.do("PUT", "/v1/jobs", second)
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
}
