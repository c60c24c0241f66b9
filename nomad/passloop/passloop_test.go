package passloop

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/opennomad/nomad/nomad/clock"
)

// harness runs a loop whose pass registers a channel the test closes to
// signal a change, and asks to be woken at wake (if set).
type harness struct {
	clock  *clock.Fake
	loop   *Loop
	passes chan time.Time

	mu      sync.Mutex // guards what the pass reads
	changed chan struct{}
	wake    time.Duration
	fail    bool
}

// change signals a change to what the pass read.
func (h *harness) change() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *harness) setFail(fail bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fail = fail
}

func newHarness(t *testing.T, minInterval time.Duration) *harness {
	h := &harness{
		clock:   clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		passes:  make(chan time.Time, 100),
		changed: make(chan struct{}),
	}
	h.loop = New(Config{Name: "test", Clock: h.clock, MinInterval: minInterval, RetryInterval: time.Minute,
		Pass: func(ws memdb.WatchSet, now time.Time) (time.Time, uint64, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			ws.Add(h.changed)
			var at time.Time
			if h.wake > 0 {
				at = now.Add(h.wake)
			}
			if h.fail {
				return time.Time{}, 1, errors.New("boom")
			}
			return at, 1, nil
		}})
	h.loop.SetOnPass(func(_, _ uint64, _ error) { h.passes <- h.clock.Now() })
	t.Cleanup(func() { h.loop.SetEnabled(false) })
	return h
}

func (h *harness) next(t *testing.T) time.Time {
	t.Helper()
	select {
	case at := <-h.passes:
		return at
	case <-time.After(10 * time.Second):
		t.Fatal("no pass")
		return time.Time{}
	}
}

func TestLoop_WakesOnChangeTimerPokeAndStops(t *testing.T) {
	h := newHarness(t, 0)
	h.wake = time.Hour // set before the loop runs
	h.loop.SetEnabled(true)
	must.True(t, h.loop.Enabled())
	start := h.next(t)

	h.change()
	h.next(t)

	h.loop.Poke()
	h.next(t)

	h.clock.Advance(time.Hour) // the wake-up time
	must.Eq(t, start.Add(time.Hour), h.next(t))

	h.loop.SetEnabled(false)
	must.False(t, h.loop.Enabled())
	h.loop.SetEnabled(false)
	must.Eq(t, 0, h.clock.Pending(), must.Sprint("the stopped loop disarmed its timer"))
}

func TestLoop_MinIntervalAndRetry(t *testing.T) {
	h := newHarness(t, 10*time.Second)
	h.setFail(true)
	h.loop.SetEnabled(true)
	first := h.next(t)

	// A failed pass is retried after RetryInterval (1m), and the next
	// pass waits for MinInterval (10s) after the last one started.
	h.clock.Advance(time.Minute)
	must.Eq(t, first.Add(time.Minute), h.next(t))
	h.setFail(false)
	h.loop.Poke()
	// Poked right away, but 10s must pass since the last start.
	h.clock.Advance(10 * time.Second)
	must.Eq(t, first.Add(time.Minute+10*time.Second), h.next(t))
}

func TestLoop_Gap(t *testing.T) {
	for _, tc := range []struct {
		name        string
		minInterval time.Duration
		maxShare    float64
		took        time.Duration
		want        time.Duration
	}{
		{"no bounds", 0, 0, time.Second, 0},
		{"min interval only", 100 * time.Millisecond, 0, time.Second, 100 * time.Millisecond},
		// 400ms at a tenth of the time: 4s from start to start.
		{"long pass under a share", 100 * time.Millisecond, 0.1, 400 * time.Millisecond, 4 * time.Second},
		// 5ms at a tenth is 50ms, under the 100ms minimum.
		{"short pass keeps the minimum", 100 * time.Millisecond, 0.1, 5 * time.Millisecond, 100 * time.Millisecond},
		{"share without minimum", 0, 0.5, time.Second, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(Config{Pass: nil, MinInterval: tc.minInterval, MaxShare: tc.maxShare})
			must.Eq(t, tc.want, l.gap(tc.took))
		})
	}
}

// A pass that took long holds the next back by its share: each pass
// advances the fake clock by 2s, and at a share of 0.5 the second starts
// 4s after the first started (2s after it ended), although a change came
// at once. OnPass sees the time each pass ended.
func TestLoop_MaxShareHoldsLongPassesBack(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	passes := make(chan time.Time, 10)
	changed := make(chan struct{})
	var mu sync.Mutex
	l := New(Config{Name: "test", Clock: fake, MaxShare: 0.5,
		Pass: func(ws memdb.WatchSet, now time.Time) (time.Time, uint64, error) {
			mu.Lock()
			defer mu.Unlock()
			ws.Add(changed)
			fake.Advance(2 * time.Second) // the pass takes 2s
			return time.Time{}, 1, nil
		}})
	l.SetOnPass(func(_, _ uint64, _ error) { passes <- fake.Now() })
	t.Cleanup(func() { l.SetEnabled(false) })
	l.SetEnabled(true)
	next := func() time.Time {
		t.Helper()
		select {
		case at := <-passes:
			return at
		case <-time.After(10 * time.Second):
			t.Fatal("no pass")
			return time.Time{}
		}
	}
	first := next() // 2s after the first pass started
	mu.Lock()
	close(changed)
	changed = make(chan struct{})
	mu.Unlock()
	// The loop arms its timer for the gap: nothing runs before it.
	for i := 0; i < 100 && fake.Pending() == 0; i++ {
		time.Sleep(time.Millisecond)
	}
	select {
	case <-passes:
		t.Fatal("passed again before its share allowed")
	default:
	}
	fake.Advance(2 * time.Second)
	must.Eq(t, first.Add(4*time.Second), next()) // started at first+2s, took 2s
}
