package nomad

import (
	"context"
	"time"

	"github.com/opennomad/nomad/nomad/backlog"
)

// backlogInterval is how often the leader measures the scheduling
// backlog. A measurement reads the totals the state store keeps and walks
// the blocked and delayed evaluations only (`go test -bench Measure
// ./nomad/backlog/` times it for 100,000 jobs), so not every second.
const backlogInterval = 5 * time.Second

// emitBacklog publishes the backlog's gauges on every tick until ctx
// ends. Only the leader does: its store has every committed entry, and
// one server reporting keeps the series from being counted once per
// server.
func (s *Server) emitBacklog(ctx context.Context, ticks <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		b, err := backlog.Measure(s.State(), s.clock.Now())
		if err != nil {
			s.logger.Warn("measuring the scheduling backlog", "error", err)
			continue
		}
		backlog.Emit(b)
	}
}
