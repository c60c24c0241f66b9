package clock

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// Fake is a Clock that moves only when told to. Tests arm timers through
// the code under test, then call Advance; every callback that falls due
// runs, in deadline order, on the goroutine calling Advance, before
// Advance returns. So after Advance the effects of every expired timer are
// visible and no test needs to sleep.
//
// Callbacks may arm and stop timers of the same Fake (those due within the
// advanced span fire in the same Advance), but must not call Advance.
type Fake struct {
	// advancing serialises Advance calls so callbacks run one at a time
	// and in deadline order even when several goroutines drive the clock.
	advancing sync.Mutex

	mu      sync.Mutex
	now     time.Time
	timers  fakeTimers
	seq     uint64
	changed chan struct{} // closed and replaced whenever timers change
}

// NewFake returns a Fake clock reading start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms a timer that fires when the clock has been advanced past
// now+d. A d <= 0 fires at the next Advance, even Advance(0).
func (c *Fake) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, f: f, index: -1}
	c.armLocked(t, d)
	return t
}

// Advance moves the clock forward by d, running every callback due on the
// way. The clock reads each timer's deadline while its callback runs.
func (c *Fake) Advance(d time.Duration) {
	c.advancing.Lock()
	defer c.advancing.Unlock()

	c.mu.Lock()
	target := c.now.Add(d)
	for len(c.timers) > 0 && !c.timers[0].when.After(target) {
		t := heap.Pop(&c.timers).(*fakeTimer)
		if t.when.After(c.now) {
			c.now = t.when
		}
		c.notifyLocked()
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = target
	c.mu.Unlock()
}

// Pending returns how many timers are armed.
func (c *Fake) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// BlockUntil waits until at least n timers are armed, so a test can be
// sure another goroutine (a blocked Dequeue, say) has armed its timeout
// before advancing past it. It returns ctx's error if ctx ends first.
func (c *Fake) BlockUntil(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if len(c.timers) >= n {
			c.mu.Unlock()
			return nil
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *Fake) armLocked(t *fakeTimer, d time.Duration) {
	if d < 0 {
		d = 0
	}
	c.seq++
	t.when = c.now.Add(d)
	t.seq = c.seq
	heap.Push(&c.timers, t)
	c.notifyLocked()
}

func (c *Fake) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// fakeTimer is one armed (index >= 0) or spent (index < 0) callback.
type fakeTimer struct {
	clock *Fake
	when  time.Time
	seq   uint64
	f     func()
	index int
}

// Stop disarms the timer; false when it already fired or was stopped.
func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&c.timers, t.index)
	c.notifyLocked()
	return true
}

// Reset re-arms the timer d from now; true when it was still armed.
func (t *fakeTimer) Reset(d time.Duration) bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	wasArmed := t.index >= 0
	if wasArmed {
		heap.Remove(&c.timers, t.index)
	}
	c.armLocked(t, d)
	return wasArmed
}

// fakeTimers orders timers by deadline, then by arming order, so timers
// due at the same instant fire first-armed first.
type fakeTimers []*fakeTimer

func (h fakeTimers) Len() int { return len(h) }
func (h fakeTimers) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}
func (h fakeTimers) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *fakeTimers) Push(x any) {
	t := x.(*fakeTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *fakeTimers) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}
