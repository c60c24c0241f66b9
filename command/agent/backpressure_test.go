package agent

import (
	"encoding/json"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// A dev agent with memory_limit = "100GB" whose server reads a live heap
// of 75 GiB (injected: no real memory pressure in a test): once the
// leader has read it, registrations are refused with 429, Retry-After 5
// and the server's figures, and are not stored. 90% of the figure is the
// runtime's soft memory limit.
func TestRealServer_MemoryPressureAnswers429(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	var heap atomic.Uint64
	heap.Store(75 << 30)
	ra := startDevAgentWith(t, func(c *Config) {
		c.Server.NumSchedulers = 0
		c.Server.MemoryLimit = "100GB"
		c.Server.heapLive = heap.Load
	})
	must.Eq(t, int64(90_000_000_000), debug.SetMemoryLimit(-1), must.Sprint("90% of the figure"))

	var resp *http.Response
	var body string
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body = ra.do("PUT", "/v1/jobs", unplaceableBody)
		if resp.StatusCode != http.StatusOK || time.Now().After(deadline) {
			break
		}
		// Accepted before the leader's first reading: purge and retry.
		ra.do("DELETE", "/v1/job/web?purge=true", "")
		time.Sleep(100 * time.Millisecond)
	}
	must.Eq(t, http.StatusTooManyRequests, resp.StatusCode, must.Sprint(body))
	must.Eq(t, "5", resp.Header.Get("Retry-After"))
	must.Eq(t, `servers near their memory limit: server "a1" holds 76800 MiB of live heap, its memory limit is 95367 MiB; retry after 5s`, body)
	resp, _ = ra.do("GET", "/v1/job/web", "")
	must.Eq(t, http.StatusNotFound, resp.StatusCode)

	// Under the low-water mark, registrations pass again.
	heap.Store(50 << 30)
	deadline = time.Now().Add(10 * time.Second)
	for {
		resp, body = ra.do("PUT", "/v1/jobs", unplaceableBody)
		if resp.StatusCode == http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	must.Eq(t, http.StatusOK, resp.StatusCode, must.Sprint(body))
}
