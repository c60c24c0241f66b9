package clock

import (
	"context"
	"time"
)

// WithTimeout is context.WithTimeout on clock c: the returned context is
// cancelled when d passes on c (a Fake's Advance), when parent ends, or
// when cancel is called. After a timeout, context.Cause reports
// context.DeadlineExceeded (ctx.Err() reads context.Canceled, as for any
// context cancelled with a cause). Callers must call cancel to release
// the timer.
func WithTimeout(parent context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	t := c.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	return ctx, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}

// TimedOut reports whether ctx, made by WithTimeout, ended because its
// time ran out.
func TimedOut(ctx context.Context) bool {
	return context.Cause(ctx) == context.DeadlineExceeded
}
