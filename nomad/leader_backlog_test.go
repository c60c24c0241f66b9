package nomad

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/structs/mock"
)

// The leader publishes the backlog's gauges every backlogInterval: a
// registered job whose eval nobody dequeues (the fake broker keeps it)
// is pending, and has waited as long as the clock moved.
func TestLeader_EmitsBacklog(t *testing.T) {
	sink := metricstest.WithInmem(t)
	fake := clock.NewFake(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	p, _, _, _ := fakePipeline()
	s := newTestServerWith(t, func(c *Config) { c.Clock = fake }, p)
	registerJob(t, s, mock.Job())

	fake.Advance(backlogInterval)
	waitFor(t, func() bool {
		v, ok := metricstest.Gauge(t, sink, "nomad.nomad.scheduler.longest_wait_seconds")
		return ok && v == float32(backlogInterval.Seconds())
	})
	waitFor(t, func() bool {
		v, ok := metricstest.Gauge(t, sink, "nomad.nomad.scheduler.evals;stage=pending")
		return ok && v == 1
	})
	if _, ok := metricstest.Gauge(t, sink, "nomad.nomad.scheduler.queued_allocations;reason=no_nodes"); !ok {
		t.Fatal("every reason is published, with 0 for those no allocation has")
	}
}
