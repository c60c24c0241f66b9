package backlog

import (
	metrics "github.com/hashicorp/go-metrics"
)

// Emit publishes b as gauges under nomad.scheduler: queued_allocations
// (label reason, every reason every time), longest_wait_seconds,
// placed_not_running, evals and eval_oldest_seconds (label stage).
func Emit(b *Backlog) {
	for _, r := range Reasons {
		metrics.SetGaugeWithLabels([]string{"nomad", "scheduler", "queued_allocations"},
			float32(b.QueuedByReason[r]), []metrics.Label{{Name: "reason", Value: r}})
	}
	metrics.SetGauge([]string{"nomad", "scheduler", "longest_wait_seconds"}, float32(b.LongestWait.Seconds()))
	metrics.SetGauge([]string{"nomad", "scheduler", "placed_not_running"}, float32(b.PlacedNotRunning))
	for _, st := range Stages {
		labels := []metrics.Label{{Name: "stage", Value: st}}
		metrics.SetGaugeWithLabels([]string{"nomad", "scheduler", "evals"}, float32(b.Evals[st].Count), labels)
		metrics.SetGaugeWithLabels([]string{"nomad", "scheduler", "eval_oldest_seconds"}, float32(b.Evals[st].Oldest.Seconds()), labels)
	}
}
