package leadertest

import (
	"testing"
	"time"
)

// Pass is one pass of a leader component's loop: the state index it
// read, the number of the last poke before it started, and its error.
type Pass struct {
	Index uint64
	Poke  uint64
	Err   error
}

// Probe follows the passes of a leader component's goroutine so a test
// can wait for it to catch up instead of sleeping. The component calls
// Record after each pass, once it has armed its timers and is about to
// block. A test uses one probe from one goroutine.
type Probe struct {
	t      testing.TB
	passes chan Pass
}

// probeTimeout guards against a component that never wakes; passing
// tests never wait for it.
const probeTimeout = 10 * time.Second

// NewProbe returns a probe; hand its Record to the component.
func NewProbe(t testing.TB) *Probe {
	return &Probe{t: t, passes: make(chan Pass, 10_000)}
}

// Record notes a pass; safe to call from any goroutine.
func (p *Probe) Record(index, poke uint64, err error) {
	p.passes <- Pass{Index: index, Poke: poke, Err: err}
}

// Next waits for the next pass and returns it.
func (p *Probe) Next() Pass {
	p.t.Helper()
	select {
	case ps := <-p.passes:
		return ps
	case <-time.After(probeTimeout):
		p.t.Fatal("timed out waiting for a pass")
		return Pass{}
	}
}

// Sync brings the component up to date with the cluster: it pokes the
// component (poke returns the poke's number, see passloop.Loop.Poke) and
// waits for the pass that started after the poke, again until such a
// pass wrote nothing. No pass is pending when it returns. A pass that
// failed fails the test.
func (p *Probe) Sync(c *Cluster, poke func() uint64) {
	p.t.Helper()
	for {
		latest, err := c.Store.LatestIndex()
		if err != nil {
			p.t.Fatal(err)
		}
		seq := poke()
		for {
			ps := p.Next()
			if ps.Err != nil {
				p.t.Fatalf("pass at index %d: %v", ps.Index, ps.Err)
			}
			if ps.Poke >= seq {
				break
			}
		}
		if now, _ := c.Store.LatestIndex(); now == latest {
			return
		}
	}
}

// Advance moves the clock and, when that fired a timer (the component's
// wake-up), waits for the pass it caused.
func (p *Probe) Advance(c *Cluster, d time.Duration) {
	p.t.Helper()
	before := c.Clock.Pending()
	c.Clock.Advance(d)
	if c.Clock.Pending() < before {
		if ps := p.Next(); ps.Err != nil {
			p.t.Fatalf("pass at index %d: %v", ps.Index, ps.Err)
		}
	}
}
