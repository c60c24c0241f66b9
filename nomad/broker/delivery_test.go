package broker

import (
	"errors"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

func TestEvalBroker_PendingCollapseOnAck(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	inFlight := newPendingEval(evJob("api"), evCreateIndex(1))
	b.Enqueue(inFlight)
	e, token := mustDequeue(t, b, structs.JobTypeService)

	// Pending, best first by priority then ModifyIndex: p70@4, p50@9, p50@5, p30@12.
	p50old := newPendingEval(evJob("api"), evModifyIndex(5))
	p70 := newPendingEval(evJob("api"), evPriority(70), evModifyIndex(4))
	p50new := newPendingEval(evJob("api"), evModifyIndex(9))
	p30 := newPendingEval(evJob("api"), evPriority(30), evModifyIndex(12))
	for _, p := range []*structs.Evaluation{p50old, p70, p50new, p30} {
		b.Enqueue(p)
	}
	wantStats(t, b, 0, 1, 4, 0, 0)

	if err := b.Ack(e.ID, token); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	wantStats(t, b, 1, 0, 0, 0, 3)
	select {
	case <-b.CancelableNotify():
	default:
		t.Fatal("no cancelable notification after superseded evals were collapsed")
	}
	if got, _ := mustDequeue(t, b, structs.JobTypeService); got != p70 {
		t.Fatalf("kept pending eval %d@%d, want priority 70", got.Priority, got.ModifyIndex)
	}

	// Drained in batches, then empty.
	batch1 := b.Cancelable(2)
	batch2 := b.Cancelable(2)
	if len(batch1) != 2 || len(batch2) != 1 || b.Cancelable(0) != nil {
		t.Fatalf("Cancelable batches of %d and %d, want 2 and 1, then none", len(batch1), len(batch2))
	}
	got := map[*structs.Evaluation]bool{}
	for _, c := range append(batch1, batch2...) {
		got[c] = true
	}
	if len(got) != 3 || !got[p50old] || !got[p50new] || !got[p30] {
		t.Fatal("cancelable list is not the three superseded evals")
	}
	wantStats(t, b, 0, 1, 0, 0, 0)

	// A superseded eval left the broker, so it is no longer deduplicated.
	b.Enqueue(p30)
	wantStats(t, b, 0, 1, 1, 0, 0)
}

func TestEvalBroker_AckNackErrors(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	b.Enqueue(newPendingEval())
	e, token := mustDequeue(t, b, structs.JobTypeService)

	cases := []struct {
		name  string
		call  func() error
		want  error
		text  string
		after func(t *testing.T)
	}{
		{name: "ack unknown", call: func() error { return b.Ack("nope", token) }, want: ErrEvalNotFound, text: "Evaluation ID not found"},
		{name: "nack unknown", call: func() error { return b.Nack("nope", token) }, want: ErrEvalNotFound, text: "Evaluation ID not found"},
		{name: "ack wrong token", call: func() error { return b.Ack(e.ID, "other") }, want: ErrTokenMismatch, text: "Token does not match for Evaluation ID"},
		{name: "nack wrong token", call: func() error { return b.Nack(e.ID, "other") }, want: ErrTokenMismatch, text: "Token does not match for Evaluation ID"},
		{name: "reset unknown", call: func() error { return b.OutstandingReset("nope", token) }, want: structs.ErrNotOutstanding, text: "evaluation is not outstanding"},
		{name: "reset wrong token", call: func() error { return b.OutstandingReset(e.ID, "other") }, want: structs.ErrTokenMismatch, text: "evaluation token does not match"},
		{name: "pause unknown", call: func() error { return b.PauseNackTimeout("nope", token) }, want: structs.ErrNotOutstanding},
		{name: "pause wrong token", call: func() error { return b.PauseNackTimeout(e.ID, "other") }, want: structs.ErrTokenMismatch},
		{name: "resume unknown", call: func() error { return b.ResumeNackTimeout("nope", token) }, want: structs.ErrNotOutstanding},
		{name: "resume wrong token", call: func() error { return b.ResumeNackTimeout(e.ID, "other") }, want: structs.ErrTokenMismatch},
		{name: "ack", call: func() error { return b.Ack(e.ID, token) }},
		{name: "ack twice", call: func() error { return b.Ack(e.ID, token) }, want: ErrEvalNotFound},
		{name: "nack after ack", call: func() error { return b.Nack(e.ID, token) }, want: ErrEvalNotFound},
	}
	for _, tc := range cases {
		err := tc.call()
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Fatalf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
		if tc.text != "" && err.Error() != tc.text {
			t.Fatalf("%s: error text %q, want %q", tc.name, err.Error(), tc.text)
		}
	}
	if tok, ok := b.Outstanding(e.ID); ok || tok != "" {
		t.Fatal("eval still outstanding after its Ack")
	}
}

func TestEvalBroker_OutstandingReportsToken(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	b.Enqueue(newPendingEval())
	e, token := mustDequeue(t, b, structs.JobTypeService)
	if got, ok := b.Outstanding(e.ID); !ok || got != token {
		t.Fatalf("Outstanding = %q, %v; want the delivery token", got, ok)
	}
	if len(token) != 36 {
		t.Fatalf("token %q is not a UUID", token)
	}
}

// firedClock simulates the window in which a timer has fired but its
// callback has not yet taken the broker's lock: Stop reports false and the
// callback never runs.
type firedClock struct{ clock.Clock }

func (c firedClock) AfterFunc(time.Duration, func()) clock.Timer { return firedTimer{} }

type firedTimer struct{}

func (firedTimer) Stop() bool               { return false }
func (firedTimer) Reset(time.Duration) bool { return false }

func TestEvalBroker_CallsAfterNackTimerFired(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clock = firedClock{clock.NewFake(brokerTestEpoch)}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.SetEnabled(true)
	b.Enqueue(newPendingEval())
	e, token := mustDequeue(t, b, structs.JobTypeService)

	if err := b.OutstandingReset(e.ID, token); !errors.Is(err, structs.ErrNackTimeoutReached) {
		t.Fatalf("OutstandingReset: %v, want %v", err, structs.ErrNackTimeoutReached)
	}
	if err := b.PauseNackTimeout(e.ID, token); !errors.Is(err, structs.ErrNackTimeoutReached) {
		t.Fatalf("PauseNackTimeout: %v, want %v", err, structs.ErrNackTimeoutReached)
	}
	if err := b.ResumeNackTimeout(e.ID, token); !errors.Is(err, structs.ErrNackTimeoutReached) {
		t.Fatalf("ResumeNackTimeout: %v, want %v", err, structs.ErrNackTimeoutReached)
	}
	err = b.Ack(e.ID, token)
	if !errors.Is(err, ErrAckAfterNackTimeout) || err.Error() != "Evaluation ID Ack'd after Nack timer expiration" {
		t.Fatalf("Ack: %v, want %v", err, ErrAckAfterNackTimeout)
	}
	// The delivery stays outstanding for the pending callback to nack.
	if _, ok := b.Outstanding(e.ID); !ok {
		t.Fatal("a failed Ack removed the delivery")
	}
	if err := b.Nack(e.ID, token); err != nil {
		t.Fatalf("Nack: %v", err)
	}
}

func TestEvalBroker_NackTimeoutRedelivers(t *testing.T) {
	b, c := newTestEvalBroker(t)
	b.Enqueue(newPendingEval())
	e, token := mustDequeue(t, b, structs.JobTypeService)

	c.Advance(59 * time.Second)
	if _, ok := b.Outstanding(e.ID); !ok {
		t.Fatal("nacked before the 60 s timeout")
	}
	// Worker activity restarts the full timeout.
	if err := b.OutstandingReset(e.ID, token); err != nil {
		t.Fatalf("OutstandingReset: %v", err)
	}
	c.Advance(59 * time.Second)
	if _, ok := b.Outstanding(e.ID); !ok {
		t.Fatal("reset did not restart the nack timer")
	}
	c.Advance(time.Second)
	if _, ok := b.Outstanding(e.ID); ok {
		t.Fatal("still outstanding after the timeout")
	}
	// First delivery nacked: back after the 1 s initial delay.
	wantStats(t, b, 0, 0, 0, 1, 0)
	if err := b.Ack(e.ID, token); !errors.Is(err, ErrEvalNotFound) {
		t.Fatalf("Ack after the timeout: %v, want %v", err, ErrEvalNotFound)
	}
	c.Advance(time.Second)
	e2, token2 := mustDequeue(t, b, structs.JobTypeService)
	if e2 != e || token2 == token {
		t.Fatal("redelivery is not the same eval under a new token")
	}
}

func TestEvalBroker_PauseAndResumeNackTimeout(t *testing.T) {
	b, c := newTestEvalBroker(t)
	b.Enqueue(newPendingEval())
	e, token := mustDequeue(t, b, structs.JobTypeService)

	c.Advance(50 * time.Second)
	if err := b.PauseNackTimeout(e.ID, token); err != nil {
		t.Fatalf("PauseNackTimeout: %v", err)
	}
	if err := b.PauseNackTimeout(e.ID, token); err != nil {
		t.Fatalf("second PauseNackTimeout: %v", err)
	}
	// A plan may sit in the plan queue for any time.
	c.Advance(time.Hour)
	if _, ok := b.Outstanding(e.ID); !ok {
		t.Fatal("paused delivery was nacked")
	}
	// Eval.Update while paused keeps it paused.
	if err := b.OutstandingReset(e.ID, token); err != nil {
		t.Fatalf("OutstandingReset while paused: %v", err)
	}
	c.Advance(time.Hour)
	if err := b.ResumeNackTimeout(e.ID, token); err != nil {
		t.Fatalf("ResumeNackTimeout: %v", err)
	}
	// Resuming grants a full timeout again.
	c.Advance(59 * time.Second)
	if _, ok := b.Outstanding(e.ID); !ok {
		t.Fatal("nacked before a full timeout after resume")
	}
	// Resume on a running timer acts as a reset.
	if err := b.ResumeNackTimeout(e.ID, token); err != nil {
		t.Fatalf("ResumeNackTimeout on a running timer: %v", err)
	}
	c.Advance(59 * time.Second)
	if _, ok := b.Outstanding(e.ID); !ok {
		t.Fatal("resume on a running timer did not restart it")
	}
	c.Advance(time.Second)
	if _, ok := b.Outstanding(e.ID); ok {
		t.Fatal("not nacked a full timeout after the last resume")
	}

	// A paused delivery can be acked.
	c.Advance(time.Second)
	_, token = mustDequeue(t, b, structs.JobTypeService)
	if err := b.PauseNackTimeout(e.ID, token); err != nil {
		t.Fatal(err)
	}
	if err := b.Ack(e.ID, token); err != nil {
		t.Fatalf("Ack of a paused delivery: %v", err)
	}
	wantStats(t, b, 0, 0, 0, 0, 0)
}

func TestEvalBroker_RedeliveryDelaysAndFailedQueue(t *testing.T) {
	b, c := newTestEvalBroker(t)
	e := newPendingEval(evJob("flaky"))
	later := newPendingEval(evJob("flaky"))
	b.Enqueue(e)
	b.Enqueue(later)

	steps := []struct {
		delay time.Duration // wait after this delivery's nack; -1 = failed queue
	}{
		{delay: time.Second},      // 1st delivery nacked: InitialNackDelay
		{delay: 20 * time.Second}, // 2nd: 1 x SubsequentNackDelay
		{delay: -1},               // 3rd reaches the delivery limit
	}
	for i, step := range steps {
		got, token := mustDequeue(t, b, structs.JobTypeService)
		if got != e {
			t.Fatalf("delivery %d: got another eval", i+1)
		}
		if err := b.Nack(got.ID, token); err != nil {
			t.Fatalf("delivery %d: Nack: %v", i+1, err)
		}
		if step.delay < 0 {
			break
		}
		wantStats(t, b, 0, 0, 1, 1, 0)
		c.Advance(step.delay - time.Millisecond)
		mustNotDequeue(t, b, structs.JobTypeService)
		c.Advance(time.Millisecond)
	}

	// The job stays serialised on the failed eval: later is still pending.
	mustNotDequeue(t, b, structs.JobTypeService)
	s := b.Stats()
	if s.ByScheduler[FailedQueue] == nil || s.ByScheduler[FailedQueue].Ready != 1 || s.TotalPending != 1 {
		t.Fatalf("stats %s, want one eval ready in %s and one pending", statsString(s), FailedQueue)
	}
	failed, token := mustDequeue(t, b, FailedQueue)
	if failed != e {
		t.Fatal("failed queue holds another eval")
	}
	if s := b.Stats(); s.ByScheduler[FailedQueue].Unacked != 1 {
		t.Fatalf("stats %s, want the failed delivery unacked under %s", statsString(s), FailedQueue)
	}
	if err := b.Ack(failed.ID, token); err != nil {
		t.Fatalf("Ack of the failed eval: %v", err)
	}
	if got, _ := mustDequeue(t, b, structs.JobTypeService); got != later {
		t.Fatal("the job's pending eval did not follow the failed one")
	}
	if s := b.Stats(); s.ByScheduler[FailedQueue].Unacked != 0 || s.ByScheduler[structs.JobTypeService].Unacked != 1 {
		t.Fatalf("per-queue stats %s", statsString(s))
	}
}

func TestEvalBroker_ConfigurableNackDelays(t *testing.T) {
	cases := []struct {
		name                string
		initial, subsequent time.Duration
		deliveryLimit       int
		// wantDelays[i] is the wait after the (i+1)-th delivery is nacked.
		wantDelays []time.Duration
	}{
		{name: "no delays", deliveryLimit: 3, wantDelays: []time.Duration{0, 0}},
		{name: "custom", initial: 5 * time.Second, subsequent: 7 * time.Second, deliveryLimit: 4,
			wantDelays: []time.Duration{5 * time.Second, 7 * time.Second, 14 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clock.NewFake(brokerTestEpoch)
			cfg := DefaultConfig()
			cfg.Clock = c
			cfg.InitialNackDelay, cfg.SubsequentNackDelay, cfg.DeliveryLimit = tc.initial, tc.subsequent, tc.deliveryLimit
			b, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			b.SetEnabled(true)
			b.Enqueue(newPendingEval())
			for i, d := range tc.wantDelays {
				e, token := mustDequeue(t, b, structs.JobTypeService)
				if err := b.Nack(e.ID, token); err != nil {
					t.Fatal(err)
				}
				if d > 0 {
					c.Advance(d - time.Nanosecond)
					if got, _ := tryDequeue(t, b, structs.JobTypeService); got != nil {
						t.Fatalf("nack %d: ready before %v", i+1, d)
					}
					c.Advance(time.Nanosecond)
				}
			}
			e, token := mustDequeue(t, b, structs.JobTypeService)
			if err := b.Nack(e.ID, token); err != nil {
				t.Fatal(err)
			}
			mustDequeue(t, b, FailedQueue)
		})
	}
}

func TestEvalBroker_EnqueueAllRequeuesOnAck(t *testing.T) {
	cases := []struct {
		name string
		// settle finishes the outstanding delivery.
		settle      func(b *Broker, id, token string) error
		wantRequeue bool
	}{
		{name: "ack enqueues the parked eval", settle: (*Broker).Ack, wantRequeue: true},
		{name: "nack drops the parked eval", settle: (*Broker).Nack, wantRequeue: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, c := newTestEvalBroker(t)
			e := newPendingEval(evJob("blocked-job"))
			b.Enqueue(e)
			got, token := mustDequeue(t, b, structs.JobTypeService)

			// The worker reblocked e and the tracker released it while
			// e is still outstanding: parked, not queued twice.
			reblocked := got.Copy()
			reblocked.Status = structs.EvalStatusBlocked
			b.EnqueueAll(map[*structs.Evaluation]string{reblocked: token})
			// Wrong token, or no token, for an outstanding eval: ignored.
			b.EnqueueAll(map[*structs.Evaluation]string{reblocked.Copy(): "stale-token"})
			b.EnqueueAll(map[*structs.Evaluation]string{reblocked.Copy(): ""})
			wantStats(t, b, 0, 1, 0, 0, 0)

			if err := tc.settle(b, got.ID, token); err != nil {
				t.Fatal(err)
			}
			c.Advance(time.Second) // past a nack's redelivery delay
			again, againToken := tryDequeue(t, b, structs.JobTypeService)
			if again == nil {
				t.Fatal("nothing redelivered")
			}
			if tc.wantRequeue && again != reblocked {
				t.Fatal("ack did not enqueue the parked eval")
			}
			if !tc.wantRequeue && again != e {
				t.Fatal("nack did not redeliver the original eval")
			}
			if err := b.Ack(again.ID, againToken); err != nil {
				t.Fatal(err)
			}
			wantStats(t, b, 0, 0, 0, 0, 0)
		})
	}
}
