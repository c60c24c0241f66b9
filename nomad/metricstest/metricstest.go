// Package metricstest points the global go-metrics instance at an in-memory
// sink for a test and reads gauges and samples back from it. It serves the
// tests of package nomad and of its parts (the broker, the plan queue).
package metricstest

import (
	"strings"
	"testing"
	"time"

	metrics "github.com/hashicorp/go-metrics"
)

// WithInmem points the global go-metrics instance at an in-memory
// sink for the test and restores a discarding sink afterwards. Tests using
// it must not run in parallel.
func WithInmem(t *testing.T) *metrics.InmemSink {
	t.Helper()
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	cfg := metrics.DefaultConfig("nomad")
	cfg.EnableHostname = false
	cfg.EnableRuntimeMetrics = false
	if _, err := metrics.NewGlobal(cfg, sink); err != nil {
		t.Fatalf("metrics.NewGlobal: %v", err)
	}
	t.Cleanup(func() {
		_, _ = metrics.NewGlobal(cfg, &metrics.BlackholeSink{})
	})
	return sink
}

// Gauge returns the value of the gauge whose flattened name is name (the
// sink prefixes the service name, so "nomad.nomad.broker.total_ready"),
// ignoring labels unless the key carries them.
func Gauge(t *testing.T, sink *metrics.InmemSink, name string) (float32, bool) {
	t.Helper()
	for _, iv := range sink.Data() {
		iv.RLock()
		for k, g := range iv.Gauges {
			if k == name || strings.HasPrefix(k, name+";") {
				iv.RUnlock()
				return g.Value, true
			}
		}
		iv.RUnlock()
	}
	return 0, false
}

// Sample returns the number of samples and their sum for a sample metric.
func Sample(t *testing.T, sink *metrics.InmemSink, name string) (int, float64) {
	t.Helper()
	count, sum := 0, 0.0
	for _, iv := range sink.Data() {
		iv.RLock()
		for k, s := range iv.Samples {
			if k == name || strings.HasPrefix(k, name+";") {
				count += s.Count
				sum += s.Sum
			}
		}
		iv.RUnlock()
	}
	return count, sum
}

// Counter returns the sum of a counter's increments, over its labels
// unless the name carries them.
func Counter(t *testing.T, sink *metrics.InmemSink, name string) float64 {
	t.Helper()
	sum := 0.0
	for _, iv := range sink.Data() {
		iv.RLock()
		for k, c := range iv.Counters {
			if k == name || strings.HasPrefix(k, name+";") {
				sum += c.Sum
			}
		}
		iv.RUnlock()
	}
	return sum
}
