package broker

import (
	"context"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/metricstest"
	"github.com/opennomad/nomad/structs"
)

func TestEvalBroker_StatsAreCopies(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	b.Enqueue(newPendingEval())
	s := b.Stats()
	s.ByScheduler[structs.JobTypeService].Ready = 99
	s.DelayedEvals["x"] = nil
	if again := b.Stats(); again.ByScheduler[structs.JobTypeService].Ready != 1 || len(again.DelayedEvals) != 0 {
		t.Fatal("Stats returned the broker's own maps")
	}
}

func TestEvalBroker_Metrics(t *testing.T) {
	sink := metricstest.WithInmem(t)
	b, c := newTestEvalBroker(t)

	e := newPendingEval(evJob("web"))
	b.Enqueue(e)
	b.Enqueue(newPendingEval(evJob("web")))
	b.Enqueue(newPendingEval(evType(structs.JobTypeBatch)))
	b.Enqueue(newPendingEval(evWaitUntil(brokerTestEpoch.Add(90 * time.Second))))

	c.Advance(2 * time.Second) // e waits 2 s in its ready queue
	got, token := mustDequeue(t, b, structs.JobTypeService)
	if got != e {
		t.Fatal("unexpected eval")
	}
	c.Advance(3 * time.Second) // processed for 3 s
	if err := b.Ack(e.ID, token); err != nil {
		t.Fatal(err)
	}

	b.emitStats()
	gauges := []struct {
		name string
		want float32
	}{
		{"nomad.nomad.broker.total_ready", 2},
		{"nomad.nomad.broker.total_unacked", 0},
		{"nomad.nomad.broker.total_pending", 0},
		{"nomad.nomad.broker.total_waiting", 1},
		{"nomad.nomad.broker.total_cancelable", 0},
		{"nomad.nomad.broker.service.ready", 1},
		{"nomad.nomad.broker.service.unacked", 0},
		{"nomad.nomad.broker.batch.ready", 1},
		// 90 s deadline, 5 s elapsed.
		{"nomad.nomad.broker.eval_waiting", 85},
	}
	for _, g := range gauges {
		v, ok := metricstest.Gauge(t, sink, g.name)
		if !ok || v != g.want {
			t.Errorf("gauge %s = %v (present %v), want %v", g.name, v, ok, g.want)
		}
	}

	samples := []struct {
		name  string
		count int
		sumMS float64
	}{
		{"nomad.nomad.broker.wait_time", 1, 2000},
		{"nomad.nomad.broker.process_time", 1, 3000},
		{"nomad.nomad.broker.response_time", 1, 5000},
	}
	for _, s := range samples {
		n, sum := metricstest.Sample(t, sink, s.name)
		if n != s.count || sum != s.sumMS {
			t.Errorf("sample %s: %d samples summing to %v ms, want %d summing to %v", s.name, n, sum, s.count, s.sumMS)
		}
	}
}

func TestEvalBroker_EmitStatsRunsOnClock(t *testing.T) {
	sink := metricstest.WithInmem(t)
	b, c := newTestEvalBroker(t)
	b.Enqueue(newPendingEval())

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		b.EmitStats(ctx, time.Second)
		close(done)
	}()
	wait, waitCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer waitCancel()
	if err := c.BlockUntil(wait, 1); err != nil {
		t.Fatal(err)
	}
	if _, ok := metricstest.Gauge(t, sink, "nomad.nomad.broker.total_ready"); ok {
		t.Fatal("emitted before the first period")
	}
	c.Advance(time.Second)
	// The loop re-arms its timer only after emitting.
	if err := c.BlockUntil(wait, 1); err != nil {
		t.Fatal(err)
	}
	if v, ok := metricstest.Gauge(t, sink, "nomad.nomad.broker.total_ready"); !ok || v != 1 {
		t.Fatalf("total_ready = %v (present %v) after one period", v, ok)
	}
	cancel()
	<-done
}
