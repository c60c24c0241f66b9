package broker

import (
	"testing"
	"time"

	"github.com/opennomad/nomad/structs"
)

func TestEvalBroker_WaitUntil(t *testing.T) {
	b, c := newTestEvalBroker(t)
	at := func(d time.Duration) time.Time { return brokerTestEpoch.Add(d) }
	e30 := newPendingEval(evWaitUntil(at(30 * time.Second)))
	e10 := newPendingEval(evWaitUntil(at(10 * time.Second)))
	e20a := newPendingEval(evWaitUntil(at(20 * time.Second)))
	e20b := newPendingEval(evWaitUntil(at(20 * time.Second)))
	past := newPendingEval(evWaitUntil(at(-time.Minute)))
	for _, e := range []*structs.Evaluation{e30, e20a, e20b} {
		b.Enqueue(e)
	}
	// An earlier deadline added later re-arms the single delay timer.
	b.Enqueue(e10)
	// A deadline already passed is ready at once.
	b.Enqueue(past)
	wantStats(t, b, 1, 0, 0, 4, 0)
	if s := b.Stats(); len(s.DelayedEvals) != 4 || s.DelayedEvals[e10.ID] != e10 {
		t.Fatalf("DelayedEvals has %d evals, want the 4 delayed ones", len(s.DelayedEvals))
	}
	if got, _ := mustDequeue(t, b, structs.JobTypeService); got != past {
		t.Fatal("an eval whose WaitUntil passed was not ready at once")
	}

	steps := []struct {
		advance time.Duration
		want    []*structs.Evaluation
	}{
		{advance: 10*time.Second - time.Nanosecond},
		{advance: time.Nanosecond, want: []*structs.Evaluation{e10}},
		{advance: 10 * time.Second, want: []*structs.Evaluation{e20a, e20b}},
		{advance: 9 * time.Second},
		{advance: time.Second, want: []*structs.Evaluation{e30}},
	}
	for i, st := range steps {
		c.Advance(st.advance)
		for _, w := range st.want {
			if got, _ := mustDequeue(t, b, structs.JobTypeService); got != w {
				t.Fatalf("step %d: got eval waiting until %v, want %v", i, got.WaitUntil, w.WaitUntil)
			}
		}
		mustNotDequeue(t, b, structs.JobTypeService)
	}
	wantStats(t, b, 0, 5, 0, 0, 0)
	if n := c.Pending(); n != 5 {
		t.Fatalf("%d timers armed, want only the 5 nack timers", n)
	}
}

func TestEvalBroker_WaitUntilQueuesBehindInFlightEval(t *testing.T) {
	b, c := newTestEvalBroker(t)
	b.Enqueue(newPendingEval(evJob("web")))
	_, token := mustDequeue(t, b, structs.JobTypeService)
	delayed := newPendingEval(evJob("web"), evWaitUntil(brokerTestEpoch.Add(time.Second)))
	b.Enqueue(delayed)
	c.Advance(time.Second)
	// Released from the delay heap, but its job is busy.
	wantStats(t, b, 0, 1, 1, 0, 0)
	b.mu.Lock()
	id := b.jobEvals[delayed.NamespacedJobID()]
	b.mu.Unlock()
	if err := b.Ack(id, token); err != nil {
		t.Fatal(err)
	}
	if got, _ := mustDequeue(t, b, structs.JobTypeService); got != delayed {
		t.Fatal("delayed eval did not follow the acked one")
	}
}

func TestEvalBroker_LegacyWait(t *testing.T) {
	b, c := newTestEvalBroker(t)
	e := newPendingEval(evWait(5 * time.Second))
	b.Enqueue(e)
	wantStats(t, b, 0, 0, 0, 1, 0)
	c.Advance(5*time.Second - time.Millisecond)
	mustNotDequeue(t, b, structs.JobTypeService)
	c.Advance(time.Millisecond)
	if got, _ := mustDequeue(t, b, structs.JobTypeService); got != e {
		t.Fatal("Wait eval not ready after its wait")
	}
	if e.Wait != 5*time.Second {
		t.Fatal("the broker modified the eval")
	}
}

func TestEvalBroker_NackDelayDoesNotModifyEval(t *testing.T) {
	b, c := newTestEvalBroker(t)
	e := newPendingEval()
	b.Enqueue(e)
	_, token := mustDequeue(t, b, structs.JobTypeService)
	if err := b.Nack(e.ID, token); err != nil {
		t.Fatal(err)
	}
	if e.Wait != 0 {
		t.Fatalf("Nack wrote Wait=%v into the shared eval", e.Wait)
	}
	c.Advance(time.Second)
	mustDequeue(t, b, structs.JobTypeService)
}

func TestEvalBroker_StaleTimersAfterFlushDoNothing(t *testing.T) {
	b, c := newTestEvalBroker(t)
	waiting := newPendingEval(evWait(time.Minute))
	delayed := newPendingEval(evWaitUntil(brokerTestEpoch.Add(time.Minute)))
	b.Enqueue(waiting)
	b.Enqueue(delayed)
	b.SetEnabled(false)
	b.SetEnabled(true)
	// Same evals restored in the new term with shorter waits.
	w2 := waiting.Copy()
	w2.Wait = 2 * time.Minute
	b.Restore(w2)
	c.Advance(time.Minute)
	wantStats(t, b, 0, 0, 0, 1, 0)
	c.Advance(time.Minute)
	if got, _ := mustDequeue(t, b, structs.JobTypeService); got != w2 {
		t.Fatal("wrong eval released")
	}
	mustNotDequeue(t, b, structs.JobTypeService)
}
