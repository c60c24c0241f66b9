package agent

import (
	"encoding/json"
	"net/http"
	"testing"

	metrics "github.com/hashicorp/go-metrics"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/api"
)

func TestMetrics_JSONAndPrometheus(t *testing.T) {
	cfg := DevConfig()
	cfg.Name = "metrics-test"
	cfg.Telemetry.PrometheusMetrics = true
	tel, err := setupTelemetry(cfg)
	must.NoError(t, err)
	metrics.IncrCounter([]string{"test", "counter"}, 3)
	metrics.SetGauge([]string{"test", "gauge"}, 7)

	h := newTestHTTP(t, func(c *HTTPServerConfig) {
		c.Metrics = tel.inmem
		c.Prometheus = tel.prometheus
	})
	resp, body := h.do("GET", "/v1/metrics", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	var sum api.MetricsSummary
	must.NoError(t, json.Unmarshal([]byte(body), &sum))
	must.NotEq(t, "", sum.Timestamp)
	var counter *api.SampledValue
	for i := range sum.Counters {
		if sum.Counters[i].Name == "nomad.test.counter" {
			counter = &sum.Counters[i]
		}
	}
	must.NotNil(t, counter, must.Sprint(sum.Counters))
	must.Eq(t, 3.0, counter.Sum)
	var gauge float32
	for _, g := range sum.Gauges {
		if g.Name == "nomad.metrics-test.test.gauge" {
			gauge = g.Value
		}
	}
	must.Eq(t, float32(7), gauge, must.Sprint(sum.Gauges))

	resp, body = h.do("GET", "/v1/metrics?format=prometheus", "")
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.StrContains(t, resp.Header.Get("Content-Type"), "text/plain")
	must.StrContains(t, body, "nomad_test_counter")

	resp, body = h.do("GET", "/v1/metrics?format=xml", "")
	must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	must.Eq(t, `Invalid format xml (use "prometheus" or none)`, body)
}

func TestMetrics_PrometheusDisabled(t *testing.T) {
	// A dev agent turns Prometheus on; this agent does not.
	cfg := DevConfig()
	cfg.Telemetry.PrometheusMetrics = false
	tel, err := setupTelemetry(cfg)
	must.NoError(t, err)
	must.Nil(t, tel.prometheus)
	h := newTestHTTP(t, func(c *HTTPServerConfig) { c.Metrics = tel.inmem })
	resp, body := h.do("GET", "/v1/metrics?format=prometheus", "")
	must.Eq(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	must.Eq(t, "Prometheus is not enabled", body)
}
