package broker

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/opennomad/nomad/nomad/clock"
	"github.com/opennomad/nomad/structs"
)

var brokerTestEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newTestEvalBroker returns an enabled broker with Nomad's defaults on a fake
// clock.
func newTestEvalBroker(t testing.TB) (*Broker, *clock.Fake) {
	t.Helper()
	c := clock.NewFake(brokerTestEpoch)
	cfg := DefaultConfig()
	cfg.Clock = c
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	b.SetEnabled(true)
	return b, c
}

// evalOpt adjusts a test eval.
type evalOpt func(*structs.Evaluation)

func evType(typ string) evalOpt     { return func(e *structs.Evaluation) { e.Type = typ } }
func evPriority(p int) evalOpt      { return func(e *structs.Evaluation) { e.Priority = p } }
func evJob(id string) evalOpt       { return func(e *structs.Evaluation) { e.JobID = id } }
func evNamespace(ns string) evalOpt { return func(e *structs.Evaluation) { e.Namespace = ns } }
func evCreateIndex(i uint64) evalOpt {
	return func(e *structs.Evaluation) { e.CreateIndex, e.ModifyIndex = i, i }
}
func evModifyIndex(i uint64) evalOpt  { return func(e *structs.Evaluation) { e.ModifyIndex = i } }
func evWait(d time.Duration) evalOpt  { return func(e *structs.Evaluation) { e.Wait = d } }
func evWaitUntil(t time.Time) evalOpt { return func(e *structs.Evaluation) { e.WaitUntil = t } }

// newPendingEval returns a pending service eval of priority 50 for a job of its
// own, unless opts say otherwise.
func newPendingEval(opts ...evalOpt) *structs.Evaluation {
	id := structs.GenerateUUID()
	e := &structs.Evaluation{
		ID:          id,
		Namespace:   structs.DefaultNamespace,
		Priority:    structs.JobDefaultPriority,
		Type:        structs.JobTypeService,
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       "job-" + id[:8],
		Status:      structs.EvalStatusPending,
	}
	for _, o := range opts {
		o(e)
	}
	return e
}

// tryDequeue dequeues without blocking: the context is already cancelled,
// so Dequeue returns whatever is ready or ctx's error.
func tryDequeue(t testing.TB, b *Broker, schedulers ...string) (*structs.Evaluation, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e, token, err := b.Dequeue(ctx, schedulers, 0)
	switch {
	case errors.Is(err, context.Canceled):
		return nil, ""
	case err != nil:
		t.Fatalf("Dequeue(%v): %v", schedulers, err)
	}
	return e, token
}

// mustDequeue dequeues the eval that must be ready.
func mustDequeue(t testing.TB, b *Broker, schedulers ...string) (*structs.Evaluation, string) {
	t.Helper()
	e, token := tryDequeue(t, b, schedulers...)
	if e == nil {
		t.Fatalf("Dequeue(%v): nothing ready; stats %s", schedulers, statsString(b.Stats()))
	}
	return e, token
}

func mustNotDequeue(t testing.TB, b *Broker, schedulers ...string) {
	t.Helper()
	if e, _ := tryDequeue(t, b, schedulers...); e != nil {
		t.Fatalf("Dequeue(%v) = eval %s (job %s, priority %d), want nothing ready", schedulers, e.ID, e.JobID, e.Priority)
	}
}

func statsString(s *Stats) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "ready=%d unacked=%d pending=%d waiting=%d cancelable=%d",
		s.TotalReady, s.TotalUnacked, s.TotalPending, s.TotalWaiting, s.TotalCancelable)
	for sched, st := range s.ByScheduler {
		fmt.Fprintf(&sb, " %s{ready=%d unacked=%d}", sched, st.Ready, st.Unacked)
	}
	return sb.String()
}

// wantStats checks the totals; -1 skips a field.
func wantStats(t testing.TB, b *Broker, ready, unacked, pending, waiting, cancelable int) {
	t.Helper()
	s := b.Stats()
	got := [...]int{s.TotalReady, s.TotalUnacked, s.TotalPending, s.TotalWaiting, s.TotalCancelable}
	want := [...]int{ready, unacked, pending, waiting, cancelable}
	for i := range want {
		if want[i] >= 0 && got[i] != want[i] {
			t.Fatalf("stats %s, want ready=%d unacked=%d pending=%d waiting=%d cancelable=%d",
				statsString(s), ready, unacked, pending, waiting, cancelable)
		}
	}
}

// waitForWaiters spins (yielding, never sleeping) until n Dequeue calls are
// blocked in the broker; the wall-clock deadline only turns a hang into a
// failure.
func waitForWaiters(t testing.TB, b *Broker, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		got := b.nWaiters
		b.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d blocked Dequeue calls, want %d", got, n)
		}
		runtime.Gosched()
	}
}

func TestEvalBrokerConfig_Validate(t *testing.T) {
	cases := []struct {
		name    string
		mod     func(*Config)
		wantErr string
	}{
		{name: "defaults", mod: func(*Config) {}},
		{name: "zero nack timeout", mod: func(c *Config) { c.NackTimeout = 0 }, wantErr: "NackTimeout must be positive"},
		{name: "zero delivery limit", mod: func(c *Config) { c.DeliveryLimit = 0 }, wantErr: "DeliveryLimit must be >= 1"},
		{name: "negative initial delay", mod: func(c *Config) { c.InitialNackDelay = -1 }, wantErr: "InitialNackDelay must be >= 0"},
		{name: "negative subsequent delay", mod: func(c *Config) { c.SubsequentNackDelay = -1 }, wantErr: "SubsequentNackDelay must be >= 0"},
		{name: "zero delays are allowed", mod: func(c *Config) { c.InitialNackDelay, c.SubsequentNackDelay = 0, 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.mod(&cfg)
			b, err := New(cfg)
			if tc.wantErr == "" {
				if err != nil || b == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "eval broker config: ") {
				t.Fatalf("New error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestEvalBroker_DisabledIgnoresEnqueueAndRefusesDequeue(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	b.SetEnabled(false)
	if b.Enabled() {
		t.Fatal("Enabled after SetEnabled(false)")
	}
	b.Enqueue(newPendingEval())
	b.Enqueue(nil)
	wantStats(t, b, 0, 0, 0, 0, 0)
	if _, _, err := b.Dequeue(context.Background(), []string{structs.JobTypeService}, time.Second); !errors.Is(err, structs.ErrBrokerDisabled) {
		t.Fatalf("Dequeue on a disabled broker: err = %v, want %v", err, structs.ErrBrokerDisabled)
	}
}

func TestEvalBroker_EnqueueIsIdempotent(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	e := newPendingEval()
	b.Enqueue(e)
	b.Enqueue(e)
	b.Restore(e)
	wantStats(t, b, 1, 0, 0, 0, 0)

	// Still known while outstanding: the FSM re-upserting the eval must
	// not produce a second delivery.
	mustDequeue(t, b, structs.JobTypeService)
	b.Enqueue(e)
	wantStats(t, b, 0, 1, 0, 0, 0)
}

func TestEvalBroker_PriorityThenFIFOWithinQueue(t *testing.T) {
	cases := []struct {
		name  string
		evals []*structs.Evaluation // enqueued in this order
		want  []int                 // indexes into evals, in dequeue order
	}{
		{
			name: "higher priority first",
			evals: []*structs.Evaluation{
				newPendingEval(evPriority(10), evCreateIndex(1)),
				newPendingEval(evPriority(90), evCreateIndex(2)),
				newPendingEval(evPriority(50), evCreateIndex(3)),
			},
			want: []int{1, 2, 0},
		},
		{
			name: "equal priority by create index, not arrival",
			evals: []*structs.Evaluation{
				newPendingEval(evCreateIndex(30)),
				newPendingEval(evCreateIndex(10)),
				newPendingEval(evCreateIndex(20)),
			},
			want: []int{1, 2, 0},
		},
		{
			name: "equal priority and index by arrival",
			evals: []*structs.Evaluation{
				newPendingEval(evCreateIndex(5)),
				newPendingEval(evCreateIndex(5)),
				newPendingEval(evCreateIndex(5)),
			},
			want: []int{0, 1, 2},
		},
		{
			name: "core evals outrank every job priority",
			evals: []*structs.Evaluation{
				newPendingEval(evPriority(structs.JobMaxPriority), evCreateIndex(1)),
				newPendingEval(evPriority(structs.CoreJobPriority), evCreateIndex(2)),
			},
			want: []int{1, 0},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := newTestEvalBroker(t)
			for _, e := range tc.evals {
				b.Enqueue(e)
			}
			for i, idx := range tc.want {
				got, _ := mustDequeue(t, b, structs.JobTypeService)
				if got != tc.evals[idx] {
					t.Fatalf("dequeue #%d: got eval with priority %d index %d, want evals[%d]", i, got.Priority, got.CreateIndex, idx)
				}
			}
			mustNotDequeue(t, b, structs.JobTypeService)
		})
	}
}

func TestEvalBroker_CrossSchedulerPicksTrueHighestPriority(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	// Build a service heap whose last slice element is not its root: the
	// 90 is pushed first and stays at the root while lower ones append.
	// Nomad's peek reads the last element and would pick batch's 60.
	for i, p := range []int{90, 20, 10, 30} {
		b.Enqueue(newPendingEval(evPriority(p), evCreateIndex(uint64(i+1))))
	}
	b.Enqueue(newPendingEval(evType(structs.JobTypeBatch), evPriority(60), evCreateIndex(10)))
	b.Enqueue(newPendingEval(evType(structs.JobTypeCore), evPriority(structs.CoreJobPriority), evCreateIndex(11),
		evJob(structs.CoreJobEvalGC), evNamespace("-")))

	all := []string{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeCore}
	var got []int
	for range 6 {
		e, _ := mustDequeue(t, b, all...)
		got = append(got, e.Priority)
	}
	want := []int{structs.CoreJobPriority, 90, 60, 30, 20, 10}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("dequeue order by priority = %v, want %v", got, want)
	}
}

func TestEvalBroker_CrossSchedulerTiesShareFairly(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	const n = 200
	for i := range n {
		typ := structs.JobTypeService
		if i%2 == 1 {
			typ = structs.JobTypeBatch
		}
		b.Enqueue(newPendingEval(evType(typ), evCreateIndex(uint64(i+1))))
	}
	// With equal priorities each pick is a coin toss between the queues;
	// the first half of the dequeues must draw from both.
	seen := map[string]int{}
	for range n / 2 {
		e, _ := mustDequeue(t, b, structs.JobTypeService, structs.JobTypeBatch)
		seen[e.Type]++
	}
	if seen[structs.JobTypeService] == 0 || seen[structs.JobTypeBatch] == 0 {
		t.Fatalf("tied queues were not shared: %v", seen)
	}
}

func TestEvalBroker_OnlyRequestedSchedulers(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	b.Enqueue(newPendingEval(evType(structs.JobTypeSystem)))
	mustNotDequeue(t, b, structs.JobTypeService, structs.JobTypeBatch)
	e, _ := mustDequeue(t, b, structs.JobTypeSystem)
	if e.Type != structs.JobTypeSystem {
		t.Fatalf("got a %s eval", e.Type)
	}
	if _, _, err := b.Dequeue(context.Background(), nil, time.Second); err == nil {
		t.Fatal("Dequeue with no scheduler types returned no error")
	}
}

func TestEvalBroker_OneEvalPerJobInFlight(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	first := newPendingEval(evJob("web"), evCreateIndex(1))
	second := newPendingEval(evJob("web"), evCreateIndex(2))
	otherNS := newPendingEval(evJob("web"), evNamespace("prod"), evCreateIndex(3))
	b.Enqueue(first)
	b.Enqueue(second)
	b.Enqueue(otherNS)
	wantStats(t, b, 2, 0, 1, 0, 0)

	e1, t1 := mustDequeue(t, b, structs.JobTypeService)
	e2, t2 := mustDequeue(t, b, structs.JobTypeService)
	if e1 != first || e2 != otherNS {
		t.Fatalf("dequeued %s/%s then %s/%s, want default/web (first) then prod/web", e1.Namespace, e1.ID, e2.Namespace, e2.ID)
	}
	// second waits for first even though nothing else is ready.
	mustNotDequeue(t, b, structs.JobTypeService)

	if err := b.Ack(e2.ID, t2); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	mustNotDequeue(t, b, structs.JobTypeService)
	if err := b.Ack(e1.ID, t1); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	wantStats(t, b, 1, 0, 0, 0, 0)
	if e, _ := mustDequeue(t, b, structs.JobTypeService); e != second {
		t.Fatalf("after the ack got %s, want the pending eval", e.ID)
	}
}

func TestEvalBroker_EnqueueAllUnknownEvals(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	batch := map[*structs.Evaluation]string{}
	for i := range 5 {
		batch[newPendingEval(evPriority(10*(i+1)))] = "token-of-a-delivery-long-gone"
	}
	b.EnqueueAll(batch)
	wantStats(t, b, 5, 0, 0, 0, 0)
	if e, _ := mustDequeue(t, b, structs.JobTypeService); e.Priority != 50 {
		t.Fatalf("first out has priority %d, want 50", e.Priority)
	}
}

func TestEvalBroker_SetEnabledFalseFlushes(t *testing.T) {
	b, c := newTestEvalBroker(t)
	ready := newPendingEval(evPriority(10))
	b.Enqueue(ready)
	b.Enqueue(newPendingEval(evJob("busy")))
	b.Enqueue(newPendingEval(evJob("busy")))
	b.Enqueue(newPendingEval(evWait(time.Minute)))
	b.Enqueue(newPendingEval(evWaitUntil(brokerTestEpoch.Add(time.Hour))))
	busy, busyToken := mustDequeue(t, b, structs.JobTypeService)
	wantStats(t, b, 1, 1, 1, 2, 0)

	blocked := make(chan error, 1)
	go func() {
		_, _, err := b.Dequeue(context.Background(), []string{structs.JobTypeBatch}, 0)
		blocked <- err
	}()
	waitForWaiters(t, b, 1)

	b.SetEnabled(false)
	if err := <-blocked; !errors.Is(err, structs.ErrBrokerDisabled) {
		t.Fatalf("blocked Dequeue returned %v, want %v", err, structs.ErrBrokerDisabled)
	}
	wantStats(t, b, 0, 0, 0, 0, 0)
	if s := b.Stats(); len(s.ByScheduler) != 0 || len(s.DelayedEvals) != 0 {
		t.Fatalf("per-queue stats survived the flush: %s", statsString(s))
	}
	if n := c.Pending(); n != 0 {
		t.Fatalf("%d timers still armed after the flush", n)
	}
	if err := b.Ack(busy.ID, busyToken); !errors.Is(err, ErrEvalNotFound) {
		t.Fatalf("Ack after flush: %v", err)
	}

	// A new term starts empty; the same evals can be restored.
	b.SetEnabled(true)
	b.Restore(ready)
	c.Advance(2 * time.Hour)
	wantStats(t, b, 1, 0, 0, 0, 0)
	if e, _ := mustDequeue(t, b, structs.JobTypeService); e != ready {
		t.Fatal("restored eval not ready")
	}
}

func TestEvalBroker_RestoreSkipsResponseTime(t *testing.T) {
	b, _ := newTestEvalBroker(t)
	restored, enqueued := newPendingEval(), newPendingEval()
	b.Restore(restored)
	b.Enqueue(enqueued)
	b.mu.Lock()
	_, rMeasured := b.enqueuedAt[restored.ID]
	_, eMeasured := b.enqueuedAt[enqueued.ID]
	b.mu.Unlock()
	if rMeasured || !eMeasured {
		t.Fatalf("response-time start recorded: restored=%v enqueued=%v, want false, true", rMeasured, eMeasured)
	}
	wantStats(t, b, 2, 0, 0, 0, 0)
}
