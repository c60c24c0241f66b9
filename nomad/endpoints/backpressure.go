package endpoints

import (
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/opennomad/nomad/structs"
)

// Backpressure: a flood of registrations must not make the leader hold
// an unbounded number of evaluations, nor the servers more memory than
// their operators gave them. Writes that would add one (a job
// registration that schedules, a dispatch, a scaling to a count) are
// refused while the leader's backlog, its broker's ready evals and the
// blocked ones together, is at the scheduler configuration's
// EvalBacklogLimit. A refused write has changed nothing, so the caller
// may send it again after the wait the refusal names (HTTP 429 with
// Retry-After). Other writes, deregistrations, node updates and the
// evals they cause, are never refused: they are how the backlog drains
// or what keeps the cluster's view true.

// Metric names.
var (
	metricBackpressureRefused = []string{"nomad", "backpressure", "refused"}
	metricEvalBacklog         = []string{"nomad", "backpressure", "eval_backlog"}
	metricEvalBacklogLimit    = []string{"nomad", "backpressure", "eval_backlog_limit"}
)

// Retry-After bounds: a refusal at the limit asks for minRetryAfter, and
// each tenth of the limit the backlog is over it adds a second, up to
// maxRetryAfter. The wait grows with the overshoot so that a deep backlog
// spreads its callers out, and stays short because the broker drains
// thousands of evals a second when scheduling works; it is no estimate of
// the drain time, which depends on jobs the leader cannot foresee.
const (
	minRetryAfter = time.Second
	maxRetryAfter = 30 * time.Second
)

// decideBackpressure says whether a write that adds an eval is refused
// with backlog evals waiting and a limit of limit (0: no limit), and if
// so how long its caller should wait. Pure, for the table test.
func decideBackpressure(backlog, limit int) (refuse bool, retryAfter time.Duration) {
	if limit <= 0 || backlog < limit {
		return false, 0
	}
	over := backlog - limit
	retryAfter = minRetryAfter + time.Duration(over*10/limit)*time.Second
	return true, min(retryAfter, maxRetryAfter)
}

// memoryRetryAfter is the wait a refusal for memory asks for. The heap
// falls only as the scheduler finishes work and the garbage collection
// of terminal objects removes them, which takes longer than a backlog
// takes to drain by a tenth, so the wait is longer than minRetryAfter.
const memoryRetryAfter = 5 * time.Second

// Reasons of a refusal, the label "reason" of the refused counter.
const (
	reasonEvalBacklog = "eval_backlog"
	reasonMemory      = "memory"
)

// checkBackpressure refuses a write named method that would add an eval:
// as *structs.MemoryPressureError while a server's live heap is past the
// high-water mark of its memory figure (the leader's watchMemory decides),
// as *structs.BackpressureError while the leader's backlog is at cfg's
// limit. It runs on the leader, after Forward; it also publishes the
// backlog and the limit as gauges, so the figures are fresh whenever
// writes arrive.
func checkBackpressure(srv Server, cfg *structs.SchedulerConfiguration, method string) error {
	if refusing, worst := srv.MemoryPressure(); refusing {
		refused(method, reasonMemory)
		return &structs.MemoryPressureError{Server: worst.Server, HeapLive: worst.HeapLive, Limit: worst.Limit,
			RetryAfter: memoryRetryAfter}
	}
	if cfg == nil || cfg.EvalBacklogLimit == 0 {
		return nil
	}
	limit := int(cfg.EvalBacklogLimit)
	backlog := srv.EvalBacklog()
	metrics.SetGauge(metricEvalBacklog, float32(backlog))
	metrics.SetGauge(metricEvalBacklogLimit, float32(limit))
	refuse, wait := decideBackpressure(backlog, limit)
	if !refuse {
		return nil
	}
	refused(method, reasonEvalBacklog)
	return &structs.BackpressureError{Backlog: backlog, Limit: limit, RetryAfter: wait}
}

// refused counts a refusal by method and reason.
func refused(method, reason string) {
	metrics.IncrCounterWithLabels(metricBackpressureRefused, 1,
		[]metrics.Label{{Name: "method", Value: method}, {Name: "reason", Value: reason}})
}
