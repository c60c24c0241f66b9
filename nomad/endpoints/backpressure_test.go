package endpoints

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestDecideBackpressure(t *testing.T) {
	cases := []struct {
		name           string
		backlog, limit int
		refuse         bool
		wait           time.Duration
	}{
		{"no limit", 1_000_000, 0, false, 0},
		{"empty", 0, 100, false, 0},
		{"one below the limit", 99, 100, false, 0},
		// The write would take the backlog past the limit.
		{"at the limit", 100, 100, true, time.Second},
		// 9 over a limit of 100 is under a tenth: still 1s.
		{"just over", 109, 100, true, time.Second},
		// 10 over = one tenth: 1s + 1s.
		{"a tenth over", 110, 100, true, 2 * time.Second},
		// 150 over = 15 tenths: 1s + 15s.
		{"two and a half times", 250, 100, true, 16 * time.Second},
		// 10,000 over = 1,000 tenths: capped.
		{"far over", 10_100, 100, true, 30 * time.Second},
		{"limit of one", 1, 1, true, time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			refuse, wait := decideBackpressure(tc.backlog, tc.limit)
			must.Eq(t, tc.refuse, refuse)
			must.Eq(t, tc.wait, wait)
		})
	}
}
