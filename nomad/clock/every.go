package clock

import (
	"context"
	"time"
)

// Every calls f every period, on the given clock, until ctx ends.
// A period <= 0 returns at once rather than spin.
func Every(ctx context.Context, c Clock, period time.Duration, f func()) {
	if period <= 0 {
		return
	}
	tick := make(chan struct{}, 1)
	for {
		t := c.AfterFunc(period, func() { tick <- struct{}{} })
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-tick:
			f()
		}
	}
}
