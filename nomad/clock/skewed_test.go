package clock

import (
	"testing"
	"time"
)

// A jump moves what Now reads, not when timers fire.
func TestSkewed(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fake := NewFake(base)
	s := NewSkewed(fake)
	fired := false
	s.AfterFunc(time.Minute, func() { fired = true })

	cases := []struct {
		offset time.Duration
		want   time.Time
	}{
		{0, base},
		{time.Hour, base.Add(time.Hour)},
		{-10 * time.Minute, base.Add(-10 * time.Minute)},
		{0, base},
	}
	for _, tc := range cases {
		s.SetOffset(tc.offset)
		if got := s.Now(); !got.Equal(tc.want) || s.Offset() != tc.offset {
			t.Fatalf("offset %s: Now = %s, Offset = %s; want %s", tc.offset, got, s.Offset(), tc.want)
		}
	}
	s.SetOffset(time.Hour)
	fake.Advance(59 * time.Second)
	if fired {
		t.Fatal("a jump made a timer fire early")
	}
	fake.Advance(time.Second)
	if !fired {
		t.Fatal("the timer did not fire after its duration")
	}
}
