package clock

import (
	"context"
	"testing"
	"time"
)

func TestWithTimeout(t *testing.T) {
	c := NewFake(time.Unix(0, 0))

	ctx, cancel := WithTimeout(context.Background(), c, time.Second)
	defer cancel()
	c.Advance(999 * time.Millisecond)
	if ctx.Err() != nil || TimedOut(ctx) {
		t.Fatalf("ended before its time: %v", context.Cause(ctx))
	}
	c.Advance(time.Millisecond)
	<-ctx.Done()
	if !TimedOut(ctx) {
		t.Fatalf("cause = %v, want a timeout", context.Cause(ctx))
	}

	ctx2, cancel2 := WithTimeout(context.Background(), c, time.Second)
	cancel2()
	<-ctx2.Done()
	if TimedOut(ctx2) {
		t.Fatal("a cancelled context reports a timeout")
	}
	if c.Pending() != 0 {
		t.Fatalf("cancel left %d timers armed", c.Pending())
	}
}
