package client

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	const min, max = 100 * time.Millisecond, time.Second
	cases := []struct {
		failures int
		jitter   float64
		want     time.Duration
	}{
		// d = min * 2^(failures-1), capped; result = d/2 + jitter*d/2.
		{1, 0, 50 * time.Millisecond},   // d=100ms
		{1, 0.5, 75 * time.Millisecond}, // 50 + 25
		{2, 0, 100 * time.Millisecond},  // d=200ms
		{3, 0, 200 * time.Millisecond},  // d=400ms
		{4, 0.99, 796 * time.Millisecond},
		{5, 0, 500 * time.Millisecond}, // d=1600ms capped to 1s
		{50, 0, 500 * time.Millisecond},
		{0, 0, 50 * time.Millisecond}, // no failure yet: the minimum
	}
	for _, tc := range cases {
		if got := backoff(min, max, tc.failures, tc.jitter); got != tc.want {
			t.Errorf("backoff(failures=%d, jitter=%v) = %v, want %v", tc.failures, tc.jitter, got, tc.want)
		}
	}
}
