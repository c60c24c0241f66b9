package agent

import (
	"fmt"
	"net/http"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	prommetrics "github.com/hashicorp/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// telemetry is the agent's metrics pipeline: every go-metrics call in the
// process (ours, Raft's) goes to an in-memory sink behind /v1/metrics and,
// with telemetry.prometheus_metrics, to a Prometheus registry served by
// /v1/metrics?format=prometheus.
type telemetry struct {
	inmem      *metrics.InmemSink
	prometheus http.Handler
}

// prometheusExpiration drops series not updated for this long, so that
// gauges of vanished objects do not linger forever.
const prometheusExpiration = 60 * time.Second

// setupTelemetry installs the process-wide metrics sinks for c. go-metrics
// has one global registry, so the last agent set up in a process wins.
func setupTelemetry(c *Config) (*telemetry, error) {
	t := &telemetry{
		inmem: metrics.NewInmemSink(c.Telemetry.InMemoryCollectionInterval, c.Telemetry.InMemoryRetentionPeriod),
	}
	sinks := metrics.FanoutSink{t.inmem}
	if c.Telemetry.PrometheusMetrics {
		reg := prometheus.NewRegistry()
		sink, err := prommetrics.NewPrometheusSinkFrom(prommetrics.PrometheusOpts{
			Registerer: reg,
			Expiration: prometheusExpiration,
		})
		if err != nil {
			return nil, fmt.Errorf("setting up Prometheus metrics: %w", err)
		}
		sinks = append(sinks, sink)
		t.prometheus = promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			ErrorHandling: promhttp.ContinueOnError,
			// The API server compresses every answer already.
			DisableCompression: true,
		})
	}
	mc := metrics.DefaultConfig("nomad")
	mc.HostName = c.Name
	mc.EnableHostname = !c.Telemetry.DisableHostname
	mc.EnableHostnameLabel = false
	mc.EnableRuntimeMetrics = true
	mc.ProfileInterval = c.Telemetry.CollectionInterval
	if _, err := metrics.NewGlobal(mc, sinks); err != nil {
		return nil, fmt.Errorf("setting up metrics: %w", err)
	}
	return t, nil
}
