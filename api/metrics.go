package api

import (
	"io"
	"net/http"
)

// MetricsSummary is the agent's in-memory metrics (GET /v1/metrics).
type MetricsSummary struct {
	Timestamp string
	Gauges    []GaugeValue
	Points    []PointValue
	Counters  []SampledValue
	Samples   []SampledValue
}

// GaugeValue is the latest value of a gauge.
type GaugeValue struct {
	Name   string
	Value  float32
	Labels map[string]string
}

// PointValue is a series of raw points.
type PointValue struct {
	Name   string
	Points []float32
}

// SampledValue aggregates a counter or timer over the current interval.
type SampledValue struct {
	Name   string
	Count  int
	Rate   float64
	Sum    float64
	Min    float64
	Max    float64
	Mean   float64
	Stddev float64
	Labels map[string]string
}

// Metrics returns the agent's metrics as JSON.
func (c *Client) Metrics(q *QueryOptions) (*MetricsSummary, error) {
	var out MetricsSummary
	if _, err := c.query("/v1/metrics", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

// MetricsPrometheus returns the agent's metrics in the Prometheus text
// format (the agent must have Prometheus metrics enabled).
func (c *Client) MetricsPrometheus(q *QueryOptions) ([]byte, error) {
	r := c.newRequest(http.MethodGet, "/v1/metrics")
	q.apply(r)
	r.params.Set("format", "prometheus")
	resp, _, err := c.do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
