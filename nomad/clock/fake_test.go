package clock

import (
	"context"
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestFake_AdvanceFiresDueTimersInOrder(t *testing.T) {
	c := NewFake(epoch)
	var fired []string
	var firedAt []time.Duration
	record := func(name string) func() {
		return func() {
			fired = append(fired, name)
			firedAt = append(firedAt, c.Now().Sub(epoch))
		}
	}
	c.AfterFunc(3*time.Second, record("3s"))
	c.AfterFunc(1*time.Second, record("1s-a"))
	c.AfterFunc(1*time.Second, record("1s-b"))
	c.AfterFunc(10*time.Second, record("10s"))

	c.Advance(5 * time.Second)

	want := []string{"1s-a", "1s-b", "3s"}
	if len(fired) != len(want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	for i := range want {
		if fired[i] != want[i] {
			t.Fatalf("fired %v, want %v", fired, want)
		}
	}
	if firedAt[2] != 3*time.Second {
		t.Fatalf("3s timer saw clock at %v, want 3s", firedAt[2])
	}
	if got := c.Now().Sub(epoch); got != 5*time.Second {
		t.Fatalf("clock at %v after advancing 5s", got)
	}
	if c.Pending() != 1 {
		t.Fatalf("pending = %d, want 1 (the 10s timer)", c.Pending())
	}
}

func TestFake_StopAndReset(t *testing.T) {
	c := NewFake(epoch)
	n := 0
	tm := c.AfterFunc(time.Second, func() { n++ })
	if !tm.Stop() {
		t.Fatal("Stop of an armed timer returned false")
	}
	if tm.Stop() {
		t.Fatal("second Stop returned true")
	}
	c.Advance(2 * time.Second)
	if n != 0 {
		t.Fatal("stopped timer fired")
	}
	if tm.Reset(time.Second) {
		t.Fatal("Reset of a stopped timer reported it armed")
	}
	c.Advance(time.Second)
	if n != 1 {
		t.Fatalf("reset timer fired %d times, want 1", n)
	}
	if tm.Stop() {
		t.Fatal("Stop after firing returned true")
	}
}

func TestFake_CallbackArmsTimerWithinSameAdvance(t *testing.T) {
	c := NewFake(epoch)
	var ticks []time.Duration
	var tick func()
	tick = func() {
		ticks = append(ticks, c.Now().Sub(epoch))
		c.AfterFunc(time.Second, tick)
	}
	c.AfterFunc(time.Second, tick)
	c.Advance(3500 * time.Millisecond)
	if len(ticks) != 3 || ticks[2] != 3*time.Second {
		t.Fatalf("ticks %v, want [1s 2s 3s]", ticks)
	}
}

func TestFake_ZeroDelayFiresOnNextAdvance(t *testing.T) {
	c := NewFake(epoch)
	n := 0
	c.AfterFunc(0, func() { n++ })
	c.AfterFunc(-time.Second, func() { n++ })
	if n != 0 {
		t.Fatal("zero-delay timer ran inside AfterFunc")
	}
	c.Advance(0)
	if n != 2 {
		t.Fatalf("fired %d, want 2", n)
	}
}

func TestFake_BlockUntil(t *testing.T) {
	c := NewFake(epoch)
	done := make(chan struct{})
	go func() {
		c.AfterFunc(time.Minute, func() { close(done) })
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.BlockUntil(ctx, 1); err != nil {
		t.Fatalf("BlockUntil: %v", err)
	}
	c.Advance(time.Minute)
	<-done

	short, cancelShort := context.WithCancel(context.Background())
	cancelShort()
	if err := c.BlockUntil(short, 5); err == nil {
		t.Fatal("BlockUntil with a cancelled context returned nil")
	}
}
