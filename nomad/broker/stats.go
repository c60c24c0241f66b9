package broker

import (
	"context"
	"maps"
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

// Metric names, as Nomad emits them (the sink adds the service prefix).
var (
	metricBrokerWaitTime     = []string{"nomad", "broker", "wait_time"}
	metricBrokerProcessTime  = []string{"nomad", "broker", "process_time"}
	metricBrokerResponseTime = []string{"nomad", "broker", "response_time"}
	metricBrokerEvalWaiting  = []string{"nomad", "broker", "eval_waiting"}
)

// Stats is a snapshot of the broker's queues.
type Stats struct {
	// TotalReady counts evals ready to be dequeued.
	TotalReady int
	// TotalUnacked counts outstanding deliveries.
	TotalUnacked int
	// TotalPending counts evals waiting behind their job's in-flight eval.
	TotalPending int
	// TotalWaiting counts evals held back by Wait, WaitUntil or a
	// redelivery delay.
	TotalWaiting int
	// TotalCancelable counts superseded evals not yet drained by Cancelable.
	TotalCancelable int
	// DelayedEvals are the evals waiting for their WaitUntil, by ID.
	DelayedEvals map[string]*structs.Evaluation
	// ByScheduler breaks Ready and Unacked down by queue.
	ByScheduler map[string]*SchedulerStats
}

// SchedulerStats are one queue's counts.
type SchedulerStats struct {
	Ready   int
	Unacked int
}

// Stats returns a copy of the broker's counters.
func (b *Broker) Stats() *Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &Stats{
		TotalReady:      b.stats.TotalReady,
		TotalUnacked:    b.stats.TotalUnacked,
		TotalPending:    b.stats.TotalPending,
		TotalWaiting:    b.stats.TotalWaiting,
		TotalCancelable: len(b.cancelable),
		DelayedEvals:    maps.Clone(b.delayedByID),
		ByScheduler:     make(map[string]*SchedulerStats, len(b.stats.ByScheduler)),
	}
	if s.DelayedEvals == nil {
		s.DelayedEvals = make(map[string]*structs.Evaluation)
	}
	for sched, st := range b.stats.ByScheduler {
		c := *st
		s.ByScheduler[sched] = &c
	}
	return s
}

// TotalReady is Stats().TotalReady without copying the rest: the
// leader reads it on every write that adds an eval (backpressure).
func (b *Broker) TotalReady() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats.TotalReady
}

// EmitStats publishes the broker's gauges every period until ctx ends
// (at once if period <= 0). The leader runs it in its own goroutine while
// it leads.
func (b *Broker) EmitStats(ctx context.Context, period time.Duration) {
	clock.Every(ctx, b.clock, period, b.emitStats)
}

// emitStats publishes nomad.broker.total_* gauges, per-queue ready and
// unacked gauges, and for each delayed eval the seconds left until it is
// released (nomad.broker.eval_waiting).
func (b *Broker) emitStats() {
	s := b.Stats()
	metrics.SetGauge([]string{"nomad", "broker", "total_ready"}, float32(s.TotalReady))
	metrics.SetGauge([]string{"nomad", "broker", "total_unacked"}, float32(s.TotalUnacked))
	metrics.SetGauge([]string{"nomad", "broker", "total_pending"}, float32(s.TotalPending))
	metrics.SetGauge([]string{"nomad", "broker", "total_waiting"}, float32(s.TotalWaiting))
	metrics.SetGauge([]string{"nomad", "broker", "total_cancelable"}, float32(s.TotalCancelable))
	for sched, st := range s.ByScheduler {
		metrics.SetGauge([]string{"nomad", "broker", sched, "ready"}, float32(st.Ready))
		metrics.SetGauge([]string{"nomad", "broker", sched, "unacked"}, float32(st.Unacked))
	}
	now := b.clock.Now()
	for _, e := range s.DelayedEvals {
		metrics.SetGaugeWithLabels(metricBrokerEvalWaiting, float32(e.WaitUntil.Sub(now).Seconds()),
			[]metrics.Label{
				{Name: "eval_id", Value: e.ID},
				{Name: "job", Value: e.JobID},
				{Name: "namespace", Value: e.Namespace},
			})
	}
}

// evalMetricLabels are the labels of the broker's per-eval timings.
func evalMetricLabels(e *structs.Evaluation) []metrics.Label {
	return []metrics.Label{
		{Name: "job", Value: e.JobID},
		{Name: "namespace", Value: e.Namespace},
		{Name: "eval_type", Value: e.Type},
		{Name: "triggered_by", Value: e.TriggeredBy},
	}
}
