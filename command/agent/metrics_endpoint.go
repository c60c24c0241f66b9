package agent

import (
	"net/http"
)

// metricsRequest serves GET /v1/metrics: the in-memory sink's current
// interval as JSON, or with ?format=prometheus the Prometheus text format
// when telemetry.prometheus_metrics is on.
func (s *HTTPServer) metricsRequest(w http.ResponseWriter, r *http.Request) (interface{}, error) {
	if err := requireMethod(r, http.MethodGet); err != nil {
		return nil, err
	}
	if format := r.URL.Query().Get("format"); format == "prometheus" {
		if s.cfg.Prometheus == nil {
			return nil, codedError(http.StatusUnsupportedMediaType, "Prometheus is not enabled")
		}
		s.cfg.Prometheus.ServeHTTP(w, r)
		return nil, nil
	} else if format != "" {
		return nil, codedError(http.StatusBadRequest, "Invalid format "+format+` (use "prometheus" or none)`)
	}
	if s.cfg.Metrics == nil {
		return nil, codedError(http.StatusNotImplemented, "metrics are not collected by this agent")
	}
	return s.cfg.Metrics.DisplayMetrics(w, r)
}
