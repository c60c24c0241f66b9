package loadgen

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/opennomad/nomad/api"
)

// rejectionMetric is the counter the plan applier increments for every
// node it rejects from a plan.
const rejectionMetric = "plan.node_rejected"

// planRejections counts nomad.plan.node_rejected over the run on every
// server, from the agents' in-memory metrics (/v1/metrics), which any
// agent serves without configuration. That endpoint shows the last
// finished collection interval only, so every server is polled more
// often than its interval and each interval is counted once, by its
// timestamp; the interval under way when the run starts is the baseline.
type planRejections struct {
	clients []*api.Client

	mu sync.Mutex
	// seen holds each server's counted intervals; latest the start of
	// the newest one.
	seen   []map[string]bool
	latest []time.Time
	total  float64
	failed int
}

func newPlanRejections(clients []*api.Client) *planRejections {
	p := &planRejections{clients: clients, seen: make([]map[string]bool, len(clients)), latest: make([]time.Time, len(clients))}
	for i := range p.seen {
		p.seen[i] = map[string]bool{}
	}
	return p
}

// poll reads every server once. The first interval seen of a server is
// recorded but not counted.
func (p *planRejections) poll(ctx context.Context) {
	for i, c := range p.clients {
		summary, err := c.Metrics((&api.QueryOptions{}).WithContext(ctx))
		p.mu.Lock()
		switch {
		case err != nil:
			if ctx.Err() == nil {
				p.failed++
			}
		case !p.seen[i][summary.Timestamp]:
			baseline := len(p.seen[i]) == 0
			p.seen[i][summary.Timestamp] = true
			if start, err := parseIntervalStart(summary.Timestamp); err == nil && start.After(p.latest[i]) {
				p.latest[i] = start
			}
			if !baseline {
				p.total += rejectionsIn(summary)
			}
		}
		p.mu.Unlock()
	}
}

// rejectionsIn sums the rejection counter over its label sets (one per
// node).
func rejectionsIn(m *api.MetricsSummary) float64 {
	var n float64
	for _, c := range m.Counters {
		if strings.HasSuffix(c.Name, rejectionMetric) {
			n += c.Sum
		}
	}
	return n
}

// parseIntervalStart reads the timestamp the agent gives an interval.
func parseIntervalStart(ts string) (time.Time, error) {
	return time.Parse("2006-01-02 15:04:05 -0700 MST", ts)
}

// follow polls every interval until ctx ends.
func (p *planRejections) follow(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.poll(ctx)
		}
	}
}

// finish polls until every server shows an interval that started after
// end, so the interval holding the run's last moments is counted, or ctx
// ends. It returns the count and whether every server was read
// throughout.
func (p *planRejections) finish(ctx context.Context, end time.Time, interval time.Duration) (float64, bool) {
	for {
		p.poll(ctx)
		if p.pastEnd(end) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	known := p.failed == 0 && p.pastEndLocked(end)
	for _, seen := range p.seen {
		known = known && len(seen) > 0
	}
	return p.total, known
}

func (p *planRejections) pastEnd(end time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pastEndLocked(end)
}

// pastEndLocked reports whether every server that could be read shows an
// interval started at end or later; p.mu is held. A server never read is
// not waited for.
func (p *planRejections) pastEndLocked(end time.Time) bool {
	for i, l := range p.latest {
		// Timestamps are rounded to the second.
		if len(p.seen[i]) > 0 && l.Before(end.Add(-time.Second)) {
			return false
		}
	}
	return true
}
